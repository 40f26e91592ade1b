"""The staff console as an attacker and a busy staff member find it (issue 27): login CSRF, a double
pressed reply, validation after the session check, every audit row in the CSV, and a conversation list
that pages and searches."""

from __future__ import annotations

import asyncio
import csv
import io
import re

from sqlalchemy import select

from bot.store.models import StaffOutbox
from tests.support.staff_console import link, post_login, sign_in, token_of

REPLY_KEY = re.compile(r'name="reply_key" value="([^"]+)"')


async def test_a_sign_in_form_sent_from_another_site_signs_nobody_in(web) -> None:
    token = token_of(await link(web))
    victim = web.client()
    # The attacker's page auto-submits its own link: no page token, and its Origin is another site.
    for headers in ({}, {"Origin": "http://evil.example"}):
        r = await victim.post("/staff/login", data={"token": token}, headers=headers)
        assert r.status_code == 403 and "arca_staff=" not in r.headers.get("set-cookie", "")
    forged = {"token": token, "login_csrf": "guessed"}
    r = await victim.post("/staff/login", data=forged, cookies={"arca_staff_login": "other"})
    assert r.status_code == 403
    assert (await victim.get("/staff/conversations")).status_code == 401
    # The refused posts did not spend the link: from its own page it still signs in.
    assert (await post_login(web.client(), token)).status_code == 303


async def test_validation_comes_after_the_session_check(web) -> None:
    stranger = web.client()
    for path in ("/staff/sessions/abc/revoke", "/staff/sessions/99999999999999999999999/revoke"):
        r = await stranger.post(path, data={"csrf": "x"})
        assert r.status_code == 401 and "pydantic" not in r.text and "int_parsing" not in r.text
    mina = await sign_in(web)
    r = await mina.client.post("/staff/sessions/abc/revoke", data={"csrf": mina.csrf})
    assert r.status_code == 400 and "int_parsing" not in r.text
    # A CSRF or page token that is not ASCII is a wrong token (403), not a crash in the comparison.
    r = await mina.client.post("/staff/logout", data={"csrf": "토큰"})
    assert r.status_code == 403
    r = await web.client().post(
        "/staff/login", data={"token": "x", "login_csrf": "토큰"}, cookies={"arca_staff_login": "x"}
    )
    assert r.status_code == 403
    assert (await mina.client.get("/staff/conversations")).status_code == 200


async def test_a_double_pressed_reply_is_delivered_once(web) -> None:
    thread = "web:P100:main"
    await web.conversations.memory.append(thread, {"role": "user", "content": "상담원 불러 주세요"})
    staff = await sign_in(web)
    here = f"/staff/conversations/{thread}"
    await staff.client.post(f"{here}/handoff", data={"csrf": staff.csrf})
    page = await staff.client.get(here)
    form = {"csrf": staff.csrf, "text": "상담원 답변 A", "reply_key": REPLY_KEY.search(page.text).group(1)}
    answers = await asyncio.gather(*(staff.client.post(f"{here}/reply", data=form) for _ in range(3)))
    assert [r.status_code for r in answers] == [303, 303, 303]
    async with web.conversations.store.session() as s:
        rows = (await s.execute(select(StaffOutbox).where(StaffOutbox.thread_id == thread))).scalars().all()
    assert [r.text for r in rows] == ["상담원 답변 A"]
    history = await web.conversations.memory.recent(thread)
    assert [m.content for m in history].count("상담원 답변 A") == 1
    # A new form (the page shown again) sends the same words again.
    again = {**form, "reply_key": REPLY_KEY.search((await staff.client.get(here)).text).group(1)}
    assert (await staff.client.post(f"{here}/reply", data=again)).status_code == 303
    history = await web.conversations.memory.recent(thread)
    assert [m.content for m in history].count("상담원 답변 A") == 2


async def test_the_audit_csv_holds_every_row(web) -> None:
    store = web.conversations.store
    for i in range(1_100):
        await store.audit(actor="test", action="test.row", target=f"row-{i}", code="OK")
    staff = await sign_in(web)
    async with store.session() as s:
        from sqlalchemy import func

        from bot.store import AuditEntry

        total = (await s.execute(select(func.count(AuditEntry.id)))).scalar_one()
    r = await staff.client.get("/staff/audit", params={"format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(r.text.lstrip("\ufeff"))))
    assert rows[0][:3] == ["id", "at", "actor"] and len(rows) - 1 == total >= 1_100
    ids = [int(row[0]) for row in rows[1:]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == total
    only = await staff.client.get("/staff/audit", params={"format": "csv", "action": "test.row"})
    assert len(list(csv.reader(io.StringIO(only.text.lstrip("\ufeff"))))) - 1 == 1_100


async def test_the_conversation_list_pages_and_searches(web) -> None:
    memory = web.conversations.memory
    for i in range(230):
        await memory.append(f"web:P{i:03d}x:main", {"role": "user", "content": f"질문 {i}"})
    staff = await sign_in(web)
    first = await staff.client.get("/staff/conversations")
    assert first.text.count('href="/staff/conversations/web:') == 200
    assert "web:P229x:main" in first.text and "web:P000x:main" not in first.text
    assert 'href="?page=2' in first.text
    second = await staff.client.get("/staff/conversations", params={"page": 2})
    assert "web:P000x:main" in second.text and "web:P229x:main" not in second.text
    assert 'href="?page=1' in second.text and 'href="?page=3' not in second.text
    found = await staff.client.get("/staff/conversations", params={"q": "P007x"})
    assert found.text.count('href="/staff/conversations/web:') == 1 and "web:P007x:main" in found.text
    for page in ("0", "-1", "abc", "9" * 5_001):
        assert (await staff.client.get("/staff/conversations", params={"page": page})).status_code == 200


async def test_every_staff_route_checks_the_session_before_its_path(web) -> None:
    from bot.staffroom.console import staff_router

    stranger = web.client()
    checked = 0
    for route in staff_router().routes:
        path = getattr(route, "path", "")
        if not path.startswith("/staff") or path.startswith("/staff/login"):
            continue
        for odd in ("abc", "-1", "9" * 40, "%ED%BF%BF"):
            url = re.sub(r"\{[^}]+\}", odd, path.replace("{rest:path}", "x/y"))
            for method in sorted(getattr(route, "methods", None) or {"GET"}):
                if method == "HEAD":
                    continue
                r = await stranger.request(method, url, data={"csrf": "x"} if method != "GET" else None)
                assert r.status_code == 401, (method, url, r.status_code, r.text[:200])
                checked += 1
    assert checked > 40
