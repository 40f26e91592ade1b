"""The repetition guard: the same call ending in the same failure twice gets a concrete valid example;
a third time ends the run. A repeated successful read is answered from the run's earlier result, and the
same read a third time ends the run too (a small model was seen calling one lookup 15 times in a row,
until the time budget ran out, each time told it already had the result)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from bot.engine.results import ToolOutcome

REPEAT_LIMIT = 3
"""The identical failing call this many times ends the run (`StopReason.REPETITION`)."""

REPEATED_FAILURE_NOTE = (
    "\nYou sent this exact call twice and it failed the same way both times; sending it again will not "
    "help. A valid call looks like: {example}. If you cannot fix it, answer the player or offer "
    "escalate_to_staff."
)
REUSED_NOTE = (
    "\n(You already made this exact call in this run; this is its earlier result. Use it instead of "
    "calling again.)"
)


def call_key(name: str, args: Any) -> str:
    """Identity of a call: tool name plus arguments in canonical form (key order does not matter)."""
    if isinstance(args, dict):
        try:
            return f"{name} {json.dumps(args, sort_keys=True, ensure_ascii=False)}"
        except (TypeError, ValueError):
            return f"{name} {args!r}"
    return f"{name} {args}"


class RepetitionGuard:
    """Per run: how often each call failed with each observation, and the successful reads so far."""

    def __init__(self) -> None:
        self._failures: Counter[tuple[str, str]] = Counter()
        self._reads: dict[str, ToolOutcome] = {}
        self._reuses: Counter[str] = Counter()

    def earlier_read(self, key: str) -> ToolOutcome | None:
        return self._reads.get(key)

    def reused(self, key: str) -> int:
        """Note that a call was answered from its earlier result; returns how often this one has been."""
        self._reuses[key] += 1
        return self._reuses[key]

    def record(self, key: str, outcome: ToolOutcome, *, side_effect: bool) -> int:
        """Note an executed call; returns how often this exact failure has now happened (0 on success)."""
        if outcome.result.ok:
            if side_effect:
                self._reads.clear()  # the world changed: earlier reads may be stale
                self._reuses.clear()
            else:
                self._reads[key] = outcome
            return 0
        self._failures[(key, outcome.observation)] += 1
        return self._failures[(key, outcome.observation)]
