"""A staff reply sent into a conversation: kept in the thread's memory as a staff answer (the player's
history shows it and the bot reads it later) and queued in the staff outbox, which the process owning the
thread's channel posts. The console's reply box and `/reply` (a saved reply) both send through here."""

from __future__ import annotations

from bot.memory import ThreadMemory
from bot.store import Store
from bot.store.outbox import keep_and_queue_reply
from bot.store.threads import message_row
from bot.vocabulary import ThreadId

ANSWER = "answer"
"""The message kind of a staff reply: shown to the player and kept in the history the bot reads."""

POSTED_BY_OUTBOX = ("discord", "web")
"""Thread kinds whose channel process polls the staff outbox. Nobody posts the others' replies: a `dm:`
thread's, a terminal's (`console:`), a transcript's (`replay:`)."""


def posted_by_outbox(thread_id: str) -> bool:
    """Whether a process posts this thread's queued replies to the player."""
    return ThreadId(thread_id).kind in POSTED_BY_OUTBOX


async def send_staff_reply(
    memory: ThreadMemory,
    store: Store,
    thread_id: str,
    text: str,
    *,
    author: str,
    signed: str,
    queue: bool = True,
) -> None:
    """Keep `text` as the thread's staff answer, named `staff:<author>`, then (when `queue`) put it in the
    staff outbox signed with `signed`, the name the player sees. The caller decides `queue` for a thread no
    process posts to (see both call sites: the console queues it to show it as not delivered, `/reply`
    prints it where it was typed). Kept and queued in one transaction: a crash between the two would leave
    a reply in the player's history that was never sent."""
    message = {"role": "assistant", "content": text, "name": f"staff:{author}"[:100]}
    if not queue:
        await memory.append(thread_id, message, kind=ANSWER)
        return
    await keep_and_queue_reply(
        store, message_row(thread_id, message, run_id=None, pinned=False, kind=ANSWER), signed
    )
