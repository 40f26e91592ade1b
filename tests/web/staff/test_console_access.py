"""Nothing under /staff answers without a staff session: no session, a used or expired link, a revoked
or idle session, a wrong CSRF token and a player's web token are all refused, GET and POST alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from bot.staff.console import token_hash
from bot.store import AuditEntry, utcnow
from bot.store.models import StaffLink, StaffSession
from tests.support.staff_console import LOGIN_CSRF, add_pending, link, post_login, sign_in, token_of

ROUTES = [
    "/staff",
    "/staff/conversations",
    "/staff/conversations/web:x:main",
    "/staff/conversations/live",
    "/staff/conversations/web:x:main/live",
    "/staff/approvals",
    "/staff/ledger",
    "/staff/ledger?format=csv",
    "/staff/audit",
    "/staff/audit?format=csv",
    "/staff/dashboard",
    "/staff/policies",
    "/staff/sessions",
    "/staff/no-such-page",
]
POSTS = [
    "/staff",
    "/staff/conversations",
    "/staff/conversations/web:x:main/handoff",
    "/staff/conversations/web:x:main/reply",
    "/staff/approvals",
    "/staff/approvals/ORD001/approve",
    "/staff/approvals/ORD001/reject",
    "/staff/ledger",
    "/staff/ledger/ORD001/revoke",
    "/staff/audit",
    "/staff/dashboard",
    "/staff/policies",
    "/staff/policies/reindex",
    "/staff/sessions/1/revoke",
    "/staff/logout",
]


def refused(r, *, status: tuple[int, ...] = (401,)) -> None:
    assert r.status_code in status, (r.status_code, r.text[:300])
    for secret in ("ORD001", "P100", "루나", 'name="csrf"', "PEND-"):
        assert secret not in r.text


async def test_every_route_refuses_without_a_session(web) -> None:
    await add_pending(web)
    client = web.client()
    for path in ROUTES:
        refused(await client.get(path))
        refused(await client.get(path, headers={"Accept": "text/html"}))
    for path in POSTS:
        refused(await client.post(path, data={"csrf": "x", "text": "hi", "reason": "r"}))


async def test_a_player_token_or_visitor_cookie_never_opens_the_console(web) -> None:
    await add_pending(web)
    player = web.client("P100")
    assert (await player.get("/api/status")).json()["identity"]["player_id"] == "P100"
    for path in ROUTES:
        refused(await player.get(path))
    for path in POSTS:
        refused(await player.post(path, data={"csrf": "x"}))
    visitor = web.client()
    await visitor.get("/api/status")  # gets the anonymous visitor cookie
    assert visitor.cookies
    refused(await visitor.get("/staff/approvals"))
    # A player token in the staff cookie's place is no session either.
    forged = web.client(cookies={"arca_staff": web.token("P100")})
    refused(await forged.get("/staff/conversations"))


async def test_the_login_page_never_spends_the_link_and_a_link_works_once(web) -> None:
    url = await link(web)
    token = token_of(url)
    assert url.startswith(f"{web.url}/staff/login?token=")
    store = web.conversations.store
    async with store.session() as s:
        row = (await s.execute(select(StaffLink))).scalar_one()
    assert row.token_hash == token_hash(token) and token not in row.token_hash  # only the hash is kept
    client = web.client()
    page = await client.get(f"/staff/login?token={token}")  # what a chat app's link preview does
    assert page.status_code == 200 and 'name="token"' in page.text
    first = await post_login(client, token)
    assert first.status_code == 303
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/staff" in cookie
    assert "Secure" not in cookie  # plain http on 127.0.0.1; Secure when served over TLS
    other = web.client()
    again = await post_login(other, token)
    assert again.status_code == 401 and "arca_staff" not in again.headers.get("set-cookie", "")
    refused(await other.get("/staff/conversations"))
    assert (await client.get("/staff/conversations")).status_code == 200


async def test_an_expired_or_unknown_link_is_refused(web) -> None:
    url = await link(web)
    store = web.conversations.store
    async with store.session() as s, s.begin():
        await s.execute(update(StaffLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    client = web.client()
    assert (await post_login(client, token_of(url))).status_code == 401
    assert (await post_login(client, "made-up")).status_code == 401
    page = await client.get("/staff/login", params={"token": "x"})
    no_link = {"login_csrf": LOGIN_CSRF.search(page.text).group(1)}
    assert (await client.post("/staff/login", data=no_link)).status_code == 401
    refused(await client.get("/staff/ledger"))


async def test_a_revoked_session_is_refused_and_staff_can_list_and_revoke(web) -> None:
    mina = await sign_in(web, "Mina", "4242")
    joon = await sign_in(web, "Joon", "4343")
    page = await mina.client.get("/staff/sessions")
    assert "Mina" in page.text and "Joon" in page.text
    store = web.conversations.store
    async with store.session() as s:
        joon_id = (
            await s.execute(select(StaffSession.id).where(StaffSession.staff_name == "Joon"))
        ).scalar_one()
    r = await mina.client.post(f"/staff/sessions/{joon_id}/revoke", data={"csrf": mina.csrf})
    assert r.status_code == 303
    refused(await joon.client.get("/staff/conversations"))
    refused(await joon.client.post("/staff/approvals/ORD001/approve", data={"csrf": joon.csrf}))
    assert (await mina.client.get("/staff/conversations")).status_code == 200
    # Logging out ends the session too.
    await mina.client.post("/staff/logout", data={"csrf": mina.csrf})
    refused(await mina.client.get("/staff/conversations"))
    rows = [(a.actor, a.action, a.code) for a in await store.recent_audit(20)]
    assert ("staff:4242", "console.revoke_session", "OK") in rows


async def test_an_idle_session_times_out(web) -> None:
    staff = await sign_in(web)
    store = web.conversations.store
    async with store.session() as s, s.begin():
        await s.execute(update(StaffSession).values(last_seen_at=utcnow() - timedelta(minutes=31)))
    refused(await staff.client.get("/staff/conversations"))


@pytest.mark.parametrize("csrf", [None, "", "wrong-token"])
async def test_a_wrong_csrf_token_changes_nothing(web, csrf) -> None:
    await add_pending(web)
    staff = await sign_in(web)
    data = {} if csrf is None else {"csrf": csrf}
    for path in (
        "/staff/approvals/ORD001/approve",
        "/staff/ledger/ORD001/revoke",
        "/staff/policies/reindex",
        "/staff/conversations/web:x:main/handoff",
        "/staff/logout",
    ):
        r = await staff.client.post(path, data=data)
        refused(r, status=(403,))
    page = await staff.client.get("/staff/approvals")
    assert "PEND-ORD001" not in page.text  # the code is not shown, the order is
    assert 'data-order="ORD001"' in page.text
    store = web.conversations.store
    async with store.session() as s:
        actions = list((await s.execute(select(AuditEntry.action))).scalars())
    assert not [a for a in actions if a.startswith("staff./coupon")]
    # the header form used by scripts works like the form field
    r = await staff.client.post("/staff/approvals/ORD001/approve", headers={"X-CSRF-Token": staff.csrf})
    assert r.status_code == 303
