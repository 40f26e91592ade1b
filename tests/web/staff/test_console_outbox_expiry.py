"""Staff replies nobody can post (a `dm:` thread, a channel no running process sees) do not stay pending
forever: after `REPLY_TTL` the console's process gives each up once, writes it to the audit log, and the
conversation page (live too) shows it as not delivered; a given-up reply is never posted late."""

from __future__ import annotations

from datetime import timedelta

from playwright.async_api import expect
from sqlalchemy import select, update

from bot.store import AuditEntry, utcnow
from bot.store.models import StaffOutbox
from bot.store.outbox import REPLY_TTL, claim_reply, enqueue_reply, expire_replies, reply_statuses
from tests.support.browser import DESKTOP
from tests.support.staff_console import TABLET, events_of, next_event, open_console, shot, sign_in

DM = "dm:9001"


async def test_an_undeliverable_reply_expires_once_is_audited_and_shows_not_delivered(web) -> None:
    store = web.conversations.store
    outbox = web.server.app.state.outbox
    await outbox.stop()  # the test runs the passes itself
    assert outbox.expire_after == REPLY_TTL == timedelta(minutes=15)
    staff = await sign_in(web)
    await staff.client.post(
        f"/staff/conversations/{DM}/handoff", data={"csrf": staff.csrf}
    )  # replies need it
    r = await staff.client.post(
        f"/staff/conversations/{DM}/reply", data={"csrf": staff.csrf, "text": "DM 답장"}
    )
    assert r.status_code == 303
    lost = (await reply_statuses(store, DM))[0].reply.id
    waiting = await enqueue_reply(store, "discord:999999", "Mina", "아직 기다리는 중")
    web_reply = await enqueue_reply(store, "web:P100:main", "Mina", "웹으로 답장")
    page = (await staff.client.get(f"/staff/conversations/{DM}")).text
    assert f'data-outbox="{lost}"' in page and "전달 대기" in page and "전달 안 됨" not in page

    async with store.session() as s, s.begin():  # queued 20 minutes ago: past the TTL
        await s.execute(
            update(StaffOutbox)
            .where(StaffOutbox.id == lost)
            .values(created_at=utcnow() - timedelta(minutes=20))
        )
    async with staff.client.stream("GET", f"/staff/conversations/{DM}/live") as live:
        stream = events_of(live)
        first = await next_event(stream, "deliveries")
        assert "전달 대기" in first.data
        assert await outbox.deliver_pending() == 1  # the web reply posted; the DM reply given up
        pushed = await next_event(stream, "deliveries", "전달 안 됨")
        assert f'data-outbox="{lost}"' in pushed.data and "delivery-expired" in pushed.data

    assert (
        await outbox.deliver_pending() == 0 and await expire_replies(store, utcnow()) != []
    )  # only `waiting`
    async with store.session() as s:
        audit = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "console.reply_expired")))
            .scalars()
            .all()
        )
    assert [(a.thread_id, a.target, a.code, a.actor) for a in audit] == [
        (DM, f"outbox:{lost}", "EXPIRED", "system:staff-outbox"),
        ("discord:999999", f"outbox:{waiting}", "EXPIRED", "system:staff-outbox"),
    ], "each given-up reply is audited exactly once"
    assert not await claim_reply(store, lost), "a given-up reply is never posted late"
    assert [r.status for r in await reply_statuses(store, DM)] == ["expired"]
    assert [(r.reply.id, r.status) for r in await reply_statuses(store, "web:P100:main")] == [
        (web_reply, "delivered")
    ]
    page = (await staff.client.get(f"/staff/conversations/{DM}?lang=en")).text
    assert "not delivered" in page and "Reach the player another way" in page
    log = (await staff.client.get("/staff/audit?action=reply_expired")).text
    assert f"outbox:{lost}" in log


async def test_a_fresh_reply_is_left_for_its_owner(web) -> None:
    store = web.conversations.store
    await web.server.app.state.outbox.stop()
    fresh = await enqueue_reply(store, "discord:999999", "Mina", "방금 보낸 답장")
    assert await expire_replies(store, utcnow() - REPLY_TTL) == []
    assert [r.status for r in await reply_statuses(store, "discord:999999")] == ["pending"]
    assert await claim_reply(store, fresh), "its owner can still post it"
    assert await expire_replies(store, utcnow() + timedelta(days=1)) == [], "a claimed reply is not given up"


async def test_not_delivered_in_the_browser_korean_desktop_and_english_tablet(browser, web) -> None:
    store = web.conversations.store
    await web.server.app.state.outbox.stop()
    await web.conversations.memory.append(DM, {"role": "user", "content": "환불 문의드려요"}, kind="query")
    await web.conversations.set_handoff(DM, True, by="staff:4242")
    lost = await enqueue_reply(store, DM, "Mina", "확인 후 DM 드리겠습니다.")
    await enqueue_reply(store, DM, "Mina", "방금 보낸 답장")
    async with store.session() as s, s.begin():
        await s.execute(
            update(StaffOutbox)
            .where(StaffOutbox.id == lost)
            .values(created_at=utcnow() - timedelta(minutes=20))
        )
    await expire_replies(store, utcnow() - REPLY_TTL)
    for viewport, lang, word in ((DESKTOP, "ko", "전달 안 됨"), (TABLET, "en", "not delivered")):
        page = await open_console(browser, web, viewport)
        await page.goto(f"{web.url}/staff/conversations/{DM}?lang={lang}")
        await expect(page.locator(f'[data-outbox="{lost}"] .status')).to_have_text(word)
        await expect(page.locator(".delivery-pending")).to_have_count(1)
        await shot(page, f"outbox-not-delivered-{lang}")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], f"the page scrolls sideways ({width}px)"
        assert page.errors == []  # type: ignore[attr-defined]
        await page.context.close()
