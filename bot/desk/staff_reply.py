"""A staff reply sent into a conversation: kept in the thread's memory as a staff answer (the player's
history shows it and the bot reads it later) and queued in the staff outbox, which the process owning the
thread's channel posts. The console's reply box and `/reply` (a saved reply) both send through here."""

from __future__ import annotations

from bot.memory import ThreadMemory
from bot.store import Store
from bot.store.outbox import enqueue_reply
from bot.vocabulary import ThreadId

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
    prints it where it was typed)."""
    await memory.append(
        thread_id,
        {"role": "assistant", "content": text, "name": f"staff:{author}"[:100]},
        kind="answer",  # shown to the player and kept in the history the bot reads
    )
    if queue:
        await enqueue_reply(store, thread_id, signed, text)
