"""What a watcher may see of a run's step events: the one cleaning both the player's stream
(`stream.WebSurface`) and the staff console's feed of Discord and console runs (`staff.run_feed`) apply.

Tool arguments, observations and errors pass the output guard's personal-data and mention cleaning (they
are the facts a claim is checked against, so the claim check does not apply to them); the model's
reasoning passes the whole guard, as an answer does (prompt leaks, claims, personal data), without the
ledger or the audit: it is a view, not a reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot.guards.input import neutralize_mentions
from bot.guards.output import OutputGuard, redact_pii


class StepCleaner:
    """Cleans the seed-000 payloads of one run's step events for the actor `guard` was made for."""

    def __init__(self, guard: OutputGuard, *, protected_texts: Iterable[str] = ()) -> None:
        self.guard = guard
        self.reasoning_guard = OutputGuard(
            actor=guard.actor,
            thread_id=guard.thread_id,
            locale=guard.locale,
            own_phones=guard.own_phones,
            own_emails=guard.own_emails,
            protected_texts=protected_texts,
        )

    async def clean(self, channel: str, payload: dict[str, Any]) -> dict[str, Any]:
        """`payload` (of an event on `channel`) as a watcher may see it; changed in place and returned."""
        if channel != "step":
            return payload
        if payload.get("status") == "done":
            for key in ("observation", "error"):
                if payload.get(key):
                    payload[key] = self.text(payload[key])
            if payload.get("reasoning"):
                payload["reasoning"] = (
                    await self.reasoning_guard.check(payload["reasoning"], outcomes=())
                ).text
        if isinstance(payload.get("tool_args"), (dict, list, str)):
            payload["tool_args"] = self.value(payload["tool_args"])
        return payload

    def text(self, text: str) -> str:
        guard = self.guard
        text, _ = redact_pii(
            text, locale=guard.locale, own_phones=guard.own_phones, own_emails=guard.own_emails
        )
        text, _ = neutralize_mentions(text)
        return text

    def value(self, value: Any) -> Any:
        """Every string inside a tool's arguments (nested ones too) cleaned."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value
