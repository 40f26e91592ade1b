"""Streaming through Discord: a long answer streamed by the real discord.py client (`ArcaDiscordBot`) into the
fake Discord on 127.0.0.1 (tests/support/fake_discord/), which timestamps every REST call.

Measures edits per message per second (the most edits any one message got within any 1-second window,
which the Renderer's `edit_interval` caps), the delay from the model's last token to the final text
being visible, time to the first visible text, and how many messages a long answer becomes.

    python -m bench.streaming [--chars 6000] [--edit-interval 1.0] [--tokens-per-s 200]

Prints a table and `stream_edits_per_second_max=N`, `stream_final_delay_ms=N`; `main(argv)` returns the
figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import discord.gateway
import discord.http
import yarl

from bot.app import build_app
from bot.config import load_settings
from bot.conversations.renderer import split_message
from bot.engine.synthesis import LanguageGate
from bot.llm.function import FunctionLLM, ModelRequest, forward, forward_stream
from bot.llm.scripted import ScriptedLLM
from bot.serving.discord_client.client import ArcaDiscordBot
from tests.support.fake_discord import FakeDiscord

CHANNEL = FakeDiscord.SUPPORT_CHANNEL


@dataclass
class TokenTimes:
    """When the model's first and last streamed token left."""

    first: float = 0.0
    last: float = 0.0


def timed_stream_llm(
    steps: list[dict[str, Any]], *, delay: float, times: TokenTimes, **kwargs: Any
) -> FunctionLLM:
    """The scripted model streaming its answer at a steady token rate, noting the token times in `times`."""
    scripted = ScriptedLLM(steps, **kwargs)

    async def stream(request: ModelRequest) -> AsyncIterator[str]:
        async for piece in forward_stream(scripted, request):
            await asyncio.sleep(delay)
            now = time.monotonic()
            times.first = times.first or now
            times.last = now
            yield piece

    return FunctionLLM(partial(forward, scripted), stream_function=stream, abilities=scripted.abilities)


class NoPolicies:
    async def search(self, query: str, top_k: int = 3) -> list[Any]:
        return []


def long_answer(chars: int) -> str:
    lines: list[str] = []
    i = 0
    while sum(len(line) + 1 for line in lines) < chars:
        i += 1
        lines.append(
            f"{i}. ORD001 배송 안내 {i}번째 문장입니다. 물류 센터에서 {i}번째 묶음을 순서대로 처리하고 있으며, "
            "출고되면 알림으로 알려 드립니다."  # each line its own text
        )
    return "\n".join(lines)


def language_hold_deltas(answer: str, chunk: int, want: str = "ko") -> int:
    """How many streamed deltas the engine's language gate holds before the first is shown (the
    answer's language must be clear first): the hold's share of the first byte is this many token
    intervals (at the small local model's ~11 tokens/s, each ~90 ms)."""
    gate = LanguageGate(want)
    for n, start in enumerate(range(0, len(answer), chunk), 1):
        if gate.feed(answer[start : start + chunk]):
            return n
    return len(range(0, len(answer), chunk))


def max_per_window(times: list[float], window: float = 1.0) -> int:
    """The most timestamps that fall into any half-open window of `window` seconds."""
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


async def run(chars: int, edit_interval: float, tokens_per_s: float, data_dir: Path) -> dict[str, Any]:
    answer = long_answer(chars)
    chunk = 4  # characters per streamed delta, roughly a token of Korean text
    times = TokenTimes()
    llm = timed_stream_llm(
        [{"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "안내"}, {"answer": answer}],
        delay=1 / tokens_per_s,
        times=times,
        chunk_size=chunk,
    )
    async with FakeDiscord() as fake:
        discord.http.Route.BASE = fake.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
        settings = load_settings(
            data_dir=data_dir,
            discord_token=FakeDiscord.TOKEN,
            support_channels=[CHANNEL],
            staff_channel=FakeDiscord.STAFF_CHANNEL,
            guild_ids=[FakeDiscord.GUILD_ID],
            staff_role=FakeDiscord.STAFF_ROLE_NAME,
            edit_interval=edit_interval,
        )
        app = await build_app(settings, llm_factory=lambda: llm, policy_index=NoPolicies())
        bot = ArcaDiscordBot(app.conversations, settings, guild_ready_timeout=0.05, shutdown_grace=5.0)
        task = asyncio.create_task(bot.start(FakeDiscord.TOKEN))
        await asyncio.wait_for(bot.wait_until_ready(), 15)
        try:
            asked = time.monotonic()
            await fake.user_says(CHANNEL, 9001, "ORD001 배송 안내 자세히 해 주세요")
            want = split_message(answer)
            await fake.wait_for(
                lambda: [m["content"] for m in fake.bot_messages(CHANNEL)][-len(want) :] == want,
                within=600,
                what="the final answer",
            )
            await asyncio.wait_for(bot.wait_idle(), 30)
        finally:
            await bot.close()
            await asyncio.wait_for(task, 10)
            await app.store.close()
    messages = fake.bot_messages(CHANNEL)
    writes = [
        c
        for c in fake.calls
        if c.method in ("POST", "PATCH") and c.status == 200 and f"/channels/{CHANNEL}/messages" in c.path
    ]
    # The 👍/👎 edit that follows an answer repeats its text with buttons: it shows nothing new.
    texts = [c for c in writes if not (c.body or {}).get("components")]
    final_visible = max(c.at for c in texts)
    per_message = [max_per_window(m.get("edits", [])) for m in messages]
    edits = sum(len(m.get("edits", [])) for m in messages)
    stream_s = times.last - times.first
    first_text = min(
        (c.at for c in writes if not str((c.body or {}).get("content", "")).startswith("⏳")), default=0.0
    )
    return {
        "answer_chars": len(answer),
        "edit_interval_s": edit_interval,
        "stream_seconds": round(stream_s, 2),
        "stream_messages": len(messages),
        "stream_expected_messages": len(split_message(answer)),
        "stream_edits": edits,
        "stream_edits_per_second_max": max(per_message, default=0),
        "stream_edits_per_message_per_s_mean": round(edits / len(messages) / max(stream_s, 1e-9), 2),
        "stream_first_token_ms": round((times.first - asked) * 1000),
        "stream_first_text_ms": round((first_text - asked) * 1000),
        "stream_language_hold_deltas": language_hold_deltas(answer, chunk),
        "stream_final_delay_ms": round((final_visible - times.last) * 1000),
        "stream_buttons_delay_ms": round((max(c.at for c in writes) - times.last) * 1000),
        "surface": "fake Discord (discord.py client over loopback)",
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=6000, help="answer length (Discord splits at 2,000)")
    parser.add_argument("--edit-interval", type=float, default=1.0)
    parser.add_argument(
        "--tokens-per-s", type=float, default=200.0, help="streamed deltas (4 chars) per second"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        figures = asyncio.run(run(args.chars, args.edit_interval, args.tokens_per_s, Path(tmp)))
    print(
        f"{'answer chars':<14}{'messages':>10}{'edits':>7}{'max edits/s/msg':>17}{'first token ms':>16}{'first text ms':>15}{'final delay ms':>16}{'held deltas':>13}"
    )
    print(
        f"{figures['answer_chars']:<14}{figures['stream_messages']:>10}{figures['stream_edits']:>7}"
        f"{figures['stream_edits_per_second_max']:>17}{figures['stream_first_token_ms']:>16}{figures['stream_first_text_ms']:>15}{figures['stream_final_delay_ms']:>16}{figures['stream_language_hold_deltas']:>13}"
    )
    for key in ("stream_edits_per_second_max", "stream_final_delay_ms", "stream_messages"):
        print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
