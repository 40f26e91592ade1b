"""The conversation list names the player from the conversation's first message on, not from its first
recorded answer: a Discord run still going, a message kept during a handoff, and a web thread (whose id
names its identity) with no run at all."""

from __future__ import annotations

import asyncio

from bot.conversations import Incoming
from bot.llm import ScriptedLLM
from bot.staffroom.console.queries import conversation_rows
from tests.eventually import eventually
from tests.fakes.held import Held
from tests.support.surface import RecordingSurface


async def _player(conv, thread: str) -> str:
    rows = {r.thread_id: r for r in await conversation_rows(conv)}
    return rows[thread].player


async def _listed(conv, thread: str) -> str | None:
    rows = {r.thread_id: r for r in await conversation_rows(conv)}
    return rows[thread].player if thread in rows else None


async def test_a_discord_conversation_names_its_player_while_the_first_run_goes(web) -> None:
    conv = web.conversations
    held = Held(ScriptedLLM([{"final": "확인해 볼게요."}], mode=web.mode))
    web.queue.append(held.llm)
    actor = await conv.resolve_actor("9001", set())
    run = asyncio.create_task(
        conv.handle(Incoming("discord:31", actor, "주문 확인해 주세요"), RecordingSurface())
    )
    await asyncio.wait_for(held.holding.wait(), 10)  # no run is recorded yet
    # The question's commit overlaps the first model call (the thread writer), so it shows soon, not at once.
    assert (
        await eventually(lambda: _listed(conv, "discord:31"), what="the question to be listed")
        == "player:P100"
    )
    held.release()
    assert (await asyncio.wait_for(run, 10)).kind == "answered"
    assert await _player(conv, "discord:31") == "player:P100"


async def test_a_message_kept_during_a_handoff_names_its_player(web) -> None:
    conv = web.conversations
    await conv.set_handoff("discord:32", True, by="staff:42")
    actor = await conv.resolve_actor("9002", set())
    outcome = await conv.handle(Incoming("discord:32", actor, "상담원님 계신가요?"), RecordingSurface())
    assert outcome.kind == "paused"
    assert await _player(conv, "discord:32") == "player:P200"


async def test_a_web_thread_without_any_run_names_its_identity(web) -> None:
    conv = web.conversations
    for thread in ("web:P300:main", "web:anon-Abc123:help", "discord:33"):
        await conv.memory.append(thread, {"role": "user", "content": "안녕하세요"}, kind="query")
    assert await _player(conv, "web:P300:main") == "player:P300"
    assert await _player(conv, "web:anon-Abc123:help") == "web:anon-Abc123"
    assert await _player(conv, "discord:33") == "-"  # nobody known yet: no guess
