"""ContextGuard: keeps the loop's messages inside the model's context window.

Tokens are estimated offline (no tokenizer download): ASCII text at ~4 characters a token, Hangul and
other non-ASCII characters at about one token each, calibrated against `usage.prompt_tokens` whenever
the endpoint reports it. Over budget, older messages are replaced by an LLM summary that keeps exact
ids and numbers; pinned messages and the recent reasoning chain stay verbatim, and an assistant
tool-call message is never separated from its tool results.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from bot.engine.prompts import compact_messages
from bot.llm.base import LLM, api_message
from tools.base import Tool, ToolRegistry

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "[Earlier conversation summary]"
"""Starts the message that stands in for compacted messages (in the run and, stored, in later runs)."""
TRUNCATION_NOTE = "[Earlier messages were removed to fit the context window.]"
_PER_MESSAGE_OVERHEAD = 4
_TRANSCRIPT_CHARS_PER_MESSAGE = 1_500


def summary_note(summary: str) -> str:
    """The text that replaces compacted messages, as the model reads it."""
    return f"{SUMMARY_PREFIX}\n{summary}"


def estimate_text_tokens(text: str) -> float:
    if text.isascii():
        return len(text) / 4.0
    ascii_chars = len(text.encode("ascii", "ignore"))
    # Hangul syllables and other non-ASCII characters cost about a token each in BPE vocabularies.
    return ascii_chars / 4.0 + (len(text) - ascii_chars)


def tools_tokens(tools: list[dict[str, Any]] | None) -> float:
    """Uncalibrated token estimate of the tool schemas of a request (a run computes it once)."""
    return estimate_text_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0.0


_OFFERED: dict[tuple[int, ...], tuple[tuple[Tool, ...], list[dict[str, Any]], float]] = {}
"""`offered_schemas` by the identities of the tools offered (the tools are kept in the entry, so an id
cannot be reused by another tool while its entry lives); a handful of tool sets in a process."""
_OFFERED_MAX = 64


def offered_schemas(registry: ToolRegistry) -> tuple[list[dict[str, Any]], float]:
    """The registry's tool schemas and their `tools_tokens`, built and dumped once per set of tool objects
    (a run used to copy every schema and dump them all to JSON to estimate them). A tool is frozen, so the
    same objects give the same schemas; a registry with another tool is another set. Callers only read
    the list (it is sent as the request's `tools`)."""
    tools = tuple(registry)
    key = tuple(map(id, tools))
    found = _OFFERED.get(key)
    if found is None:
        if len(_OFFERED) >= _OFFERED_MAX:
            _OFFERED.clear()
        schemas = registry.schemas()
        found = _OFFERED[key] = (tools, schemas, tools_tokens(schemas))
    return found[1], found[2]


def estimate_tokens(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    tools_estimate: float | None = None,
) -> int:
    """Uncalibrated token estimate of a request (messages plus tool schemas, or `tools_estimate`, their
    `tools_tokens` computed before)."""
    total = tools_tokens(tools) if tools_estimate is None else tools_estimate
    for m in messages:
        total += message_tokens(m)
    return int(total) + 1


def message_tokens(message: dict[str, Any]) -> float:
    """One message's share of `estimate_tokens` (a multiple of 1/4: sums of them are exact in floats, so
    adding cached shares gives the same estimate as adding them afresh)."""
    total: float = _PER_MESSAGE_OVERHEAD
    content = message.get("content")
    if isinstance(content, str):
        total += estimate_text_tokens(content)
    for tc in message.get("tool_calls") or []:
        fn = tc.get("function") or {}
        total += 3 + estimate_text_tokens(fn.get("name", "")) + estimate_text_tokens(fn.get("arguments", ""))
    return total


def request_share(message: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """`message` as the API takes it and its `message_tokens` (a run's request is built from these; the
    loaded history's are kept by `ThreadMemory.load_with`, so callers only read the copy)."""
    api = api_message(message)
    return api, message_tokens(api)


@dataclass
class Compaction:
    messages: list[dict[str, Any]]
    original_messages: int
    kept_messages: int
    summarized: bool
    """False when the summary call failed and the older messages were simply dropped."""
    summary: str | None
    upto_id: int | None
    """Largest persisted message id such that it and every persisted message before it were summarised."""


def _units(messages: list[dict[str, Any]]) -> list[list[int]]:
    """Indices grouped so an assistant tool-call message and its tool results form one unit."""
    units: list[list[int]] = []
    for i, m in enumerate(messages):
        if m.get("role") == "tool" and units and messages[units[-1][0]].get("tool_calls"):
            units[-1].append(i)
        else:
            units.append([i])
    return units


def _transcript(messages: list[dict[str, Any]]) -> str:
    lines = []
    for m in messages:
        role = m.get("role", "?")
        content = m.get("content") if isinstance(m.get("content"), str) else ""
        if content:
            lines.append(f"{role}: {content[:_TRANSCRIPT_CHARS_PER_MESSAGE]}")
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            lines.append(
                f"{role} called {fn.get('name')}({fn.get('arguments', '')[:500]}) [id {tc.get('id')}]"
            )
    return "\n".join(lines)


class ContextGuard:
    """Budget check every iteration, and compaction when the estimate crosses it."""

    def __init__(
        self,
        context_window: int,
        *,
        budget_ratio: float = 0.75,
        target_ratio: float = 0.45,
        min_recent_units: int = 2,
    ) -> None:
        self.context_window = context_window
        self.budget = int(context_window * budget_ratio)
        """Estimated prompt tokens above which the guard compacts (the rest is room for the reply)."""
        self.target = int(context_window * target_ratio)
        self.min_recent_units = min_recent_units
        self.ratio = 1.0
        """Calibration: reported prompt tokens per estimated token."""
        self.calibrated = False

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
        return int(estimate_tokens(messages, tools) * self.ratio)

    def calibrate(self, raw_estimate: int, prompt_tokens: int) -> None:
        """Fold one observation (our uncalibrated estimate vs. the endpoint's count) into `ratio`."""
        if prompt_tokens <= 0 or raw_estimate <= 0:
            return
        observed = min(4.0, max(0.25, prompt_tokens / raw_estimate))
        self.ratio = observed if not self.calibrated else 0.5 * self.ratio + 0.5 * observed
        self.calibrated = True

    async def compact(
        self, messages: list[dict[str, Any]], llm: LLM, tools: list[dict[str, Any]] | None = None
    ) -> Compaction | None:
        """Summarise older, unpinned messages; None when there is nothing that may be compacted."""
        units = _units(messages)
        head: list[list[int]] = []
        if units and messages[units[0][0]].get("role") == "system":
            head = [units.pop(0)]

        def cost(unit: list[int]) -> int:
            return self.estimate([messages[i] for i in unit])

        fixed = sum(cost(u) for u in head) + sum(cost(u) for u in units if _pinned(messages, u))
        fixed += self.estimate([], tools) if tools else 0
        room = self.target - fixed
        keep: set[int] = set()
        for n, unit in enumerate(reversed(units)):
            if _pinned(messages, unit):
                continue
            c = cost(unit)
            if n >= self.min_recent_units and c > room:
                break
            keep.add(id(unit))
            room -= c
        dropped = [u for u in units if id(u) not in keep and not _pinned(messages, u)]
        if not dropped:
            return None
        # Keep only units after the last dropped one: never keep an old unit behind the summary.
        last_dropped = max(u[0] for u in dropped)
        dropped = [u for u in units if u[0] <= last_dropped and not _pinned(messages, u)]
        dropped_idx = {i for u in dropped for i in u}

        old = [messages[i] for i in sorted(dropped_idx)]
        summary: str | None = None
        try:
            reply = await llm.chat(compact_messages(_transcript(old)), purpose="compact")
            summary = (reply.content or "").strip() or None
        except AssertionError:
            raise
        except Exception as exc:  # a failed summary falls back to truncation, never to a failed run
            log.warning("context compaction summary failed (%s); truncating instead", exc)
        note = {
            "role": "user",
            "content": summary_note(summary) if summary else TRUNCATION_NOTE,
        }
        new: list[dict[str, Any]] = [messages[i] for u in head for i in u]
        new.append(note)
        new.extend(
            m for i, m in enumerate(messages) if i not in dropped_idx and not any(i in u for u in head)
        )

        upto: int | None = None
        for i, m in enumerate(messages):
            if "_id" not in m:
                continue
            if i in dropped_idx:
                upto = m["_id"]
            else:
                break
        return Compaction(
            messages=new,
            original_messages=len(messages),
            kept_messages=len(new),
            summarized=summary is not None,
            summary=summary,
            upto_id=upto,
        )


def _pinned(messages: list[dict[str, Any]], unit: list[int]) -> bool:
    return any(messages[i].get("pinned") for i in unit)
