"""Staff commands typed in a conversation's channel (`/handoff`, `/stop`, …): the registry the
conversations use, run before any run starts, and a refused line that looked like a command audited as one."""

from __future__ import annotations

from typing import Any, Protocol

from bot.conversations.messages import Incoming, TurnOutcome
from tools.base import Actor


class StaffCommands(Protocol):
    """The staff command registry as conversations use it (`bot.staff.StaffRegistry`)."""

    def matches(self, text: str) -> bool: ...

    async def dispatch(self, text: str, *, actor: Actor, channel: str, conversations: Any) -> Any: ...

    async def audit_refused_line(
        self, text: str, *, actor: Actor, channel: str, conversations: Any
    ) -> bool: ...


async def run_command(
    staff: StaffCommands | None, incoming: Incoming, text: str, conversations: Any
) -> TurnOutcome | None:
    """The command's outcome (its `StaffReply` in `reply`, shown only to whoever typed it) when `text` is
    a staff command line; None when it is a message for the bot."""
    if staff is None or not staff.matches(text):
        return None
    reply = await staff.dispatch(
        text, actor=incoming.actor, channel=incoming.thread_id, conversations=conversations
    )
    return TurnOutcome(kind="command", reply=reply)


async def audit_refused(staff: StaffCommands | None, incoming: Incoming, conversations: Any) -> None:
    """A line the input guard refused is audited as a refused command too when it was one."""
    if staff is not None:
        await staff.audit_refused_line(
            incoming.text, actor=incoming.actor, channel=incoming.thread_id, conversations=conversations
        )
