"""A thread handed to a person: while staff hold it (`/handoff`) the player's messages are kept for them
and no run starts; a plain request for a person ("상담원 연결", the person button) escalates at once,
without the model deciding it."""

from __future__ import annotations

from collections.abc import Callable

from bot.conversations.messages import Incoming, TurnOutcome
from bot.conversations.run_deps import RunDeps
from bot.desk.person_request import PersonRequest, connect_to_person, wants_person
from tools.base import Actor


async def is_paused(deps: RunDeps, thread_id: str) -> bool:
    """Whether staff hold the thread (the bot does not answer it)."""
    return await deps.store.threads.is_paused(thread_id)


async def set_paused(deps: RunDeps, thread_id: str, paused: bool, *, by: str) -> None:
    """Staff take the thread over (`paused`) or hand it back to the bot."""
    await deps.store.threads.set_paused(thread_id, paused, by=by)


async def request_person(
    deps: RunDeps, thread_id: str, actor: Actor, text: str, *, run_id: str
) -> PersonRequest:
    """Escalate `thread_id` for `actor` at once and keep the request and the notice in the thread's memory."""
    asked = await connect_to_person(
        tools=deps.tools,
        store=deps.store,
        services=deps.services,
        actor=actor,
        thread_id=thread_id,
        text=text,
        run_id=run_id,
        clock=deps.clock,
    )
    await deps.memory.append(thread_id, {"role": "user", "content": text}, kind="query")
    await deps.memory.append_assistant(thread_id, asked.reply)
    return asked


async def to_person(deps: RunDeps, incoming: Incoming, new_id: Callable[[], str]) -> TurnOutcome | None:
    """What became of a message that goes to a person instead of a run: kept for the staff who hold the
    thread (`paused`), or escalated because the player asked for one (`escalated`, its reply in `answer`).
    None: the bot answers it."""
    thread_id, text = incoming.thread_id, incoming.text
    if await is_paused(deps, thread_id):
        await deps.memory.append(thread_id, {"role": "user", "content": text}, run_id=None, pinned=False)
        return TurnOutcome(kind="paused")
    if wants_person(text):
        asked = await request_person(deps, thread_id, incoming.actor, text, run_id=new_id())
        return TurnOutcome(kind="escalated", answer=asked.reply)
    return None
