"""What staff do in the console goes through the same staff command handlers and ledger transitions as
Discord, exactly once, audited under the staff member's `staff:<id>` label; CSV exports; sign-in links
from `arca-bot console-link` and `/console`."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import sqlite3
import subprocess
import sys
from datetime import timedelta

from sqlalchemy import select

from bot.config import load_settings
from bot.staff.console import token_hash
from bot.store import AuditEntry, Coupon, Run
from bot.store.models import StaffOutbox, StaffSession
from tests.support.staff_console import LOGIN_CSRF, add_pending, sign_in, token_of
from tests.support.web import SECRET
from tools.base import Actor


async def coupons_of(web, order_id: str) -> list[tuple[str, str | None]]:
    async with web.conversations.store.session() as s:
        rows = (await s.execute(select(Coupon).where(Coupon.order_id == order_id))).scalars()
        return [(c.status, c.reason) for c in rows]


async def audit_of(web) -> list[tuple[str, str, str | None, str | None]]:
    async with web.conversations.store.session() as s:
        rows = (await s.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars()
        return [(a.actor, a.action, a.target, a.code) for a in rows]


async def test_approving_twice_at_once_changes_exactly_one_ledger_row(web) -> None:
    await add_pending(web, "ORD001")
    staff = await sign_in(web)
    before = await audit_of(web)
    results = await asyncio.gather(
        *(staff.client.post("/staff/approvals/ORD001/approve", data={"csrf": staff.csrf}) for _ in range(3))
    )
    assert all(r.status_code == 303 for r in results)
    assert await coupons_of(web, "ORD001") == [("active", "배송 지연")]
    new = (await audit_of(web))[len(before) :]
    ledger_rows = [row for row in new if row[1] == "coupon.approve"]
    assert [row[3] for row in ledger_rows].count("OK") == 1, ledger_rows
    assert all(row[0] == "staff:4242" for row in new)
    assert [row for row in new if row[1] == "staff./coupon approve"]
    page = await staff.client.get("/staff/approvals")
    assert 'data-order="ORD001"' not in page.text


async def test_the_console_writes_the_same_audit_rows_as_discord(web) -> None:
    await add_pending(web, "ORD001")
    await add_pending(web, "ORD003")
    staff = await sign_in(web, "Mina", "4242")
    mark = len(await audit_of(web))
    await staff.client.post("/staff/approvals/ORD001/approve", data={"csrf": staff.csrf})
    from_console = [(a, act, t, c) for a, act, t, c in (await audit_of(web))[mark:]]
    conv = web.conversations
    discord = Actor(discord_id="4242", roles=frozenset({conv.staff_role}), is_staff=True)
    mark = len(await audit_of(web))
    await conv.staff.dispatch(
        "/coupon approve ORD003", actor=discord, channel="web:staff-console", conversations=conv
    )
    from_discord = (await audit_of(web))[mark:]
    assert [(a, act, c) for a, act, _, c in from_console] == [(a, act, c) for a, act, _, c in from_discord]


async def test_reject_is_coupon_revoke_on_the_pending_coupon(web) -> None:
    await add_pending(web, "ORD003")
    staff = await sign_in(web)
    r = await staff.client.post("/staff/approvals/ORD003/reject", data={"csrf": staff.csrf})
    assert r.status_code == 303 and "ok=1" in r.headers["location"]
    assert [s for s, _ in await coupons_of(web, "ORD003")] == ["rejected"]
    assert ("staff:4242", "staff./coupon revoke", "ORD003", "OK") in await audit_of(web)


async def test_revoke_from_the_ledger_with_a_reason_and_export_csv(web) -> None:
    await add_pending(web, "ORD001")
    staff = await sign_in(web)
    await staff.client.post("/staff/approvals/ORD001/approve", data={"csrf": staff.csrf})
    page = await staff.client.get("/staff/ledger", params={"player": "P100"})
    assert 'data-order="ORD001"' in page.text
    r = await staff.client.post(
        "/staff/ledger/ORD001/revoke", data={"csrf": staff.csrf, "reason": "중복 지급\n회수"}
    )
    assert r.status_code == 303
    assert [s for s, _ in await coupons_of(web, "ORD001")] == ["revoked"]
    async with web.conversations.store.session() as s:
        detail = (
            await s.execute(select(AuditEntry.detail).where(AuditEntry.action == "coupon.revoke"))
        ).scalar_one()
    assert "중복 지급 회수" in detail  # the reason, on one line, as the ledger records it
    export = await staff.client.get("/staff/ledger", params={"status": "revoked", "format": "csv"})
    assert export.headers["content-type"].startswith("text/csv")
    assert "attachment" in export.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(export.text.lstrip("\ufeff"))))
    assert [(r["order_id"], r["status"], r["reason"]) for r in rows] == [("ORD001", "revoked", "배송 지연")]
    assert (await staff.client.get("/staff/ledger", params={"status": "active", "format": "csv"})).text.count(
        "\n"
    ) == 1  # the header only
    audit = await staff.client.get("/staff/audit", params={"actor": "staff:4242", "format": "csv"})
    actions = [r["action"] for r in csv.DictReader(io.StringIO(audit.text.lstrip("\ufeff")))]
    assert "staff./coupon revoke" in actions and "coupon.revoke" in actions
    assert all(r["actor"] == "staff:4242" for r in csv.DictReader(io.StringIO(audit.text.lstrip("\ufeff"))))


async def test_csv_cells_never_run_as_spreadsheet_formulas(web) -> None:
    staff = await sign_in(web)
    await web.conversations.store.audit(actor='=HYPERLINK("x")', action="test", code="OK")
    export = await staff.client.get("/staff/audit", params={"action": "test", "format": "csv"})
    assert "'=HYPERLINK" in export.text


async def test_take_over_reply_and_hand_back(web) -> None:
    conv = web.conversations
    thread = "web:p100:main"
    await conv.memory.append(thread, {"role": "user", "content": "쿠폰 언제 와요?"})
    staff = await sign_in(web)
    listing = await staff.client.get("/staff/conversations")
    assert thread in listing.text and "쿠폰 언제 와요?" in listing.text
    r = await staff.client.post(f"/staff/conversations/{thread}/handoff", data={"csrf": staff.csrf})
    assert r.status_code == 303
    assert await conv.is_paused(thread)
    page = await staff.client.get(f"/staff/conversations/{thread}")
    assert 'name="text"' in page.text  # the reply box shows while taken over
    await staff.client.post(
        f"/staff/conversations/{thread}/reply", data={"csrf": staff.csrf, "text": "지금 확인 중입니다."}
    )
    rows = await conv.memory.recent(thread)
    assert (rows[-1].role, rows[-1].content) == ("assistant", "지금 확인 중입니다.")
    async with conv.store.session() as s:  # the outbox row the web process delivers
        [queued] = (await s.execute(select(StaffOutbox))).scalars()
    assert (queued.thread_id, queued.staff, queued.text) == (thread, "Mina", "지금 확인 중입니다.")
    await staff.client.post(f"/staff/conversations/{thread}/resume", data={"csrf": staff.csrf})
    assert not await conv.is_paused(thread)
    audit = await audit_of(web)
    assert ("staff:4242", "staff./handoff", thread, "OK") in audit
    assert ("staff:4242", "console.reply", thread, "OK") in audit
    assert ("staff:4242", "staff./resume", thread, "OK") in audit


async def test_pages_render_in_korean_and_english(web) -> None:
    staff = await sign_in(web)
    for path in (
        "/staff/conversations",
        "/staff/approvals",
        "/staff/ledger",
        "/staff/audit",
        "/staff/dashboard",
        "/staff/policies",
        "/staff/sessions",
    ):
        ko = await staff.client.get(path)
        assert ko.status_code == 200 and '<html lang="ko">' in ko.text, path
        assert "default-src 'self'" in ko.headers["content-security-policy"]
    clock = web.conversations.clock()  # 2026-11-30 10:00 KST: one answered run, a conversation that day
    async with web.conversations.store.session() as s, s.begin():
        s.add(
            Run(
                run_id="r1",
                thread_id="web:p:main",
                player="player:P100",
                started_at=clock - timedelta(hours=1),
                answered_at=clock - timedelta(minutes=59),
            )
        )
    en = await staff.client.get("/staff/dashboard", params={"lang": "en"})
    assert "Conversations per day" in en.text and ">2026-11-30</text>" in en.text
    assert '<html lang="en">' in en.text and "Bot resolution rate" in en.text and "<svg" in en.text
    assert '<html lang="en">' in (await staff.client.get("/staff/ledger")).text  # remembered
    home = await staff.client.get("/staff")
    assert home.status_code == 303 and home.headers["location"] == "/staff/conversations"


async def test_slash_console_gives_a_one_time_link(make_web, tmp_path) -> None:
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path), ARCA_WEB_SECRET=SECRET, ARCA_WEB_PUBLIC_URL="https://support.example.com"
    )
    web = await make_web(settings=settings)
    conv = web.conversations
    staff = Actor(discord_id="4242", roles=frozenset({conv.staff_role}), is_staff=True, display_name="Mina")
    reply = await conv.staff.dispatch("/console", actor=staff, channel="discord:1", conversations=conv)
    url = reply.data["url"]
    assert url.startswith("https://support.example.com/staff/login?token=") and url in reply.text
    client = web.client()
    page = await client.get("/staff/login", params={"token": token_of(url)})
    assert "; Secure" in page.headers["set-cookie"]  # the page's token too: this client never sends it back
    page_token = LOGIN_CSRF.search(page.text).group(1)
    login = await client.post(
        "/staff/login",
        data={"token": token_of(url), "login_csrf": page_token},
        headers={"Cookie": f"arca_staff_login={page_token}"},
    )
    assert login.status_code == 303
    assert "; Secure" in login.headers["set-cookie"]  # served as https (ARCA_WEB_PUBLIC_URL): Secure cookie
    async with conv.store.session() as s:
        opened = (await s.execute(select(StaffSession.staff_id, StaffSession.staff_name))).all()
    assert opened == [("4242", "Mina")]
    player = Actor(discord_id="9001", player_id="P100")
    denied = await conv.staff.dispatch("/console", actor=player, channel="discord:1", conversations=conv)
    assert denied.denied and "token=" not in denied.text


def test_arca_bot_console_link_prints_a_full_url(tmp_path) -> None:
    env = {
        "ARCA_DATA_DIR": str(tmp_path),
        "ARCA_WEB_PUBLIC_URL": "https://support.arca.example.com/",
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "HF_HUB_OFFLINE": "1",
    }
    out = subprocess.run(
        [sys.executable, "-m", "bot", "console-link", "Mina"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    assert url.startswith("https://support.arca.example.com/staff/login?token=")
    con = sqlite3.connect(tmp_path / "arca.db")
    try:
        rows = con.execute("SELECT token_hash, staff_name FROM staff_links").fetchall()
    finally:
        con.close()
    assert rows == [(token_hash(token_of(url)), "Mina")]
    env.pop("ARCA_WEB_PUBLIC_URL")
    env["ARCA_WEB_PORT"] = "8765"
    out = subprocess.run(
        [sys.executable, "-m", "bot", "console-link", "Mina"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip().startswith("http://127.0.0.1:8765/staff/login?token="), out.stderr
