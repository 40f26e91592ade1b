"""What a channel message becomes before it is routed: the input guard's verdict, judged once (a channel
may have judged it already), with refused and flagged lines audited; and its files, each kept or refused
with a reply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.attachments.intake import admit
from bot.conversations.messages import Incoming
from bot.conversations.run_deps import RunDeps
from bot.guards.input import InputVerdict, check_input


def refuses(verdict: InputVerdict, incoming: Incoming) -> bool:
    """Whether the message is refused (an empty text is not, when files came with it)."""
    return not verdict.allowed and not (verdict.reason_code == "empty" and incoming.attachments)


async def judge(deps: RunDeps, incoming: Incoming, *, max_chars: int) -> InputVerdict:
    """The input guard's verdict on `incoming` (the channel's own when it judged it); a refused line and
    a flagged one each leave an audit row."""
    verdict = incoming.verdict or check_input(incoming.text, max_chars=max_chars)
    if refuses(verdict, incoming):
        await deps.store.audit(
            actor=incoming.actor.label,
            action="input.refused",
            thread_id=incoming.thread_id,
            code=verdict.reason_code,
            detail={"length": len(incoming.text)},
        )
    elif verdict.flags:
        await deps.store.audit(
            actor=incoming.actor.label,
            action="input.flagged",
            thread_id=incoming.thread_id,
            detail={"flags": sorted(verdict.flags), "untrusted": verdict.untrusted},
        )
    return verdict


async def with_files(
    deps: RunDeps, incoming: Incoming, text: str, reply: Callable[[str], Awaitable[None]]
) -> tuple[str, list[Any]]:
    """`text` with what the kept files add, and the kept screenshots; each refused file gets a `reply`.
    The text is answered either way."""
    if not incoming.attachments:
        return text, []
    admitted = await admit(
        deps.attachments,
        incoming.attachments,
        text=text,
        thread_id=incoming.thread_id,
        owner=incoming.actor.label,
        reply=reply,
        audit=deps.store.audit,
    )
    return admitted.text, admitted.images
