"""Saved replies are kept on SQLite and on PostgreSQL alike: created, edited, listed by prefix (what
Discord's autocomplete shows), deleted, each change audited in the same transaction."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.store import AuditEntry, Store
from bot.store.saved_replies import delete_reply, get_reply, list_replies, save_reply
from tests.support.context import NOW


async def test_saved_replies_are_created_edited_listed_by_prefix_and_deleted(store: Store) -> None:
    assert await save_reply(
        store, name="delay-coupon", text_ko="{player}님 쿠폰", text_en="", actor="staff:42", now=NOW
    )
    assert await save_reply(
        store, name="delay-late", text_ko="", text_en="Sorry, {player}", actor="staff:42", now=NOW
    )
    assert await save_reply(
        store, name="감사", text_ko="감사합니다", text_en="Thank you", actor="staff:7", now=NOW
    )
    assert not await save_reply(
        store,
        name="delay-coupon",
        text_ko="{player}님, 쿠폰 드렸어요",
        text_en="Coupon sent",
        actor="staff:7",
        now=NOW,
    )

    edited = await get_reply(store, "delay-coupon")
    assert (edited.text_ko, edited.text_en, edited.updated_by) == (
        "{player}님, 쿠폰 드렸어요",
        "Coupon sent",
        "staff:7",
    )
    assert [r.name for r in await list_replies(store, "delay")] == ["delay-coupon", "delay-late"]
    assert [r.name for r in await list_replies(store, "감")] == ["감사"]
    assert await list_replies(store, "%") == []  # a LIKE wildcard is a plain character

    assert await delete_reply(store, "delay-late", actor="staff:42")
    assert not await delete_reply(store, "delay-late", actor="staff:42")
    assert [r.name for r in await list_replies(store)] == ["delay-coupon", "감사"]
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.action, AuditEntry.code).where(AuditEntry.action.startswith("reply."))
            )
        ).all()
    assert sorted(rows) == sorted(
        [("reply.saved", "CREATED")] * 3 + [("reply.saved", "UPDATED"), ("reply.deleted", "OK")]
    )


async def test_two_staff_saving_one_name_at_once_leave_one_reply(store: Store) -> None:
    results = await asyncio.gather(
        *(
            save_reply(store, name="same", text_ko=f"답변 {i}", text_en="", actor=f"staff:{i}", now=NOW)
            for i in range(2)
        ),
        return_exceptions=True,
    )
    kept = await list_replies(store, "same")
    assert len(kept) == 1 and kept[0].text_ko in ("답변 0", "답변 1")
    assert any(r is True for r in results)
