"""A staff reply sent through the desk (`bot.desk.staff_reply`): kept in the thread's memory as a staff
answer and queued in the staff outbox, or kept only when the caller does not queue it; which thread kinds a
process posts from the outbox."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.desk.staff_reply import posted_by_outbox, send_staff_reply
from bot.memory import ThreadMemory
from bot.store import Store, ThreadMessage
from bot.store.outbox import pending_replies

THREAD = "web:P100:main"


async def _kept(store: Store, thread_id: str) -> list[tuple[str, str | None, str]]:
    async with store.session() as s:
        rows = (await s.execute(select(ThreadMessage).where(ThreadMessage.thread_id == thread_id))).scalars()
        return [(r.content, r.name, (r.meta or {}).get("kind")) for r in rows]


async def test_a_reply_is_kept_as_a_staff_answer_and_queued_signed(store: Store) -> None:
    await send_staff_reply(ThreadMemory(store), store, THREAD, "확인했습니다.", author="42", signed="미나")

    assert await _kept(store, THREAD) == [("확인했습니다.", "staff:42", "answer")]
    queued = await pending_replies(store, "web:")
    assert [(r.thread_id, r.staff, r.text) for r in queued] == [(THREAD, "미나", "확인했습니다.")]


async def test_a_reply_not_queued_is_kept_only(store: Store) -> None:
    await send_staff_reply(
        ThreadMemory(store), store, "console:staff", "잠시만요.", author="42", signed="미나", queue=False
    )

    assert await _kept(store, "console:staff") == [("잠시만요.", "staff:42", "answer")]
    assert await pending_replies(store, "console:") == []


async def test_a_long_author_is_cut_to_the_name_column(store: Store) -> None:
    await send_staff_reply(ThreadMemory(store), store, THREAD, "네.", author="x" * 200, signed="미나")

    [(_text, name, _kind)] = await _kept(store, THREAD)
    assert name == "staff:" + "x" * 94


@pytest.mark.parametrize(
    ("thread_id", "posted"),
    [
        ("discord:123", True),
        ("web:P100:main", True),
        ("dm:9001", False),
        ("console:staff", False),
        ("replay:case", False),
    ],
)
def test_only_discord_and_web_threads_are_posted_from_the_outbox(thread_id: str, posted: bool) -> None:
    assert posted_by_outbox(thread_id) is posted
