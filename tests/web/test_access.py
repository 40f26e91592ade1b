"""Who may talk and how much: player tokens (expiry, forgery), anonymous visitors, thread ownership, rate
limits, body and message size limits, malformed input, CORS, and the page without an LLM."""

from __future__ import annotations

import asyncio
import time

import httpx
import jwt
import pytest

from bot.web_kit.identity import ANON_COOKIE, IdentityService
from tests.eventually import WITHIN
from tests.support.web import SECRET, read_sse


async def test_expired_and_forged_tokens_are_refused_with_401(make_web):
    web = await make_web()
    expired = web.identities.issue_token("P100", 60, now=time.time() - 3600)
    forged = IdentityService("some-other-secret-that-is-long-enough-000").issue_token("P100")
    none_alg = jwt.encode({"sub": "P100", "exp": int(time.time()) + 600}, key=None, algorithm="none")
    no_exp = jwt.encode({"sub": "P100"}, SECRET, algorithm="HS256")
    anon_cookie = web.identities.new_visitor()[1]
    cases = {
        expired: "token_expired",
        forged: "token_invalid",
        none_alg: "token_invalid",
        no_exp: "token_invalid",
        anon_cookie: "token_invalid",
        "not-a-jwt": "token_invalid",
    }
    async with httpx.AsyncClient(base_url=web.url) as client:
        for token, code in cases.items():
            r = await client.post(
                "/api/chat",
                json={"thread": "main", "message": "ORD003 보여줘"},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert r.status_code == 401, token
            assert r.json()["error"] == code
            assert r.headers["www-authenticate"].startswith("Bearer")
        r = await client.get("/api/status", headers={"Authorization": "Basic dXNlcjpwYXNz"})
        assert r.status_code == 401 and r.json()["error"] == "token_invalid"
    assert not web.queue and await web.conversations.memory.recent("web:P100:main") == []


async def test_a_valid_token_makes_the_visitor_that_player(make_web):
    web = await make_web()
    r = await web.client("P300").get("/api/status")
    assert r.json()["identity"] == {"kind": "player", "player_id": "P300"}
    assert ANON_COOKIE not in r.cookies


async def test_another_identity_gets_404_for_a_thread_never_its_history(make_web):
    web = await make_web()
    web.script({"final": "ORD001은 배송 지연 중입니다."})
    await web.chat(web.client("P100"), "ORD001 상태 알려주세요", thread="orders")
    assert (await web.client("P100").get("/api/threads/orders")).status_code == 200

    for other in (web.client("P200"), web.client()):
        r = await other.get("/api/threads/orders")
        assert r.status_code == 404
        assert r.json() == {"error": "thread_not_found", "message": "No such conversation."}
        assert "ORD001" not in r.text
        assert (await other.get("/api/threads/orders/events")).status_code == 204


async def test_two_anonymous_visitors_never_share_a_thread(make_web):
    web = await make_web()
    web.script({"final": "환불 정책은 7일 이내 신청입니다."})
    alice, bob = web.client(), web.client()
    await web.chat(alice, "환불 정책이 궁금해요")
    cookie = alice.cookies.get(ANON_COOKIE)
    assert cookie and web.identities.read_visitor(cookie) is not None
    assert (await alice.get("/api/threads/main")).status_code == 200
    assert (await bob.get("/api/status")).json()["identity"] == {"kind": "anon", "player_id": None}
    assert bob.cookies.get(ANON_COOKIE) not in (None, cookie)
    assert (await bob.get("/api/threads/main")).status_code == 404
    # A tampered cookie is a new visitor, not the old one.
    mallory = web.client(cookies={ANON_COOKIE: cookie[:-4] + "AAAA"})
    assert (await mallory.get("/api/threads/main")).status_code == 404


async def test_an_anonymous_visitor_is_an_unlinked_user_denied_order_and_coupon_tools(make_web):
    web = await make_web()
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 5000}},
        {"final": "계정 연동 후 조회할 수 있습니다."},
    )
    events = await web.chat(web.client(), "ORD001 쿠폰 주세요")
    dones = [
        e.data
        for e in events
        if e.event == "step" and e.data["type"] == "iteration" and e.data["status"] == "done"
    ]
    assert [d["tool_name"] for d in dones] == ["lookup_order", "issue_coupon"]
    assert all(d["observation"].startswith("[DENIED]") for d in dones)
    assert all("배송 지연" not in d["observation"] for d in dones)
    async with web.app.store.session() as s:
        from sqlalchemy import select

        from bot.store import Coupon

        assert (await s.execute(select(Coupon).where(Coupon.order_id == "ORD001"))).first() is None


async def test_rate_limit_per_identity_answers_429_with_retry_after(make_web):
    web = await make_web(rate_limit=2, rate_window=30.0)
    for _ in range(2):
        web.script({"final": "네, 확인했습니다."})
    client = web.client("P100")
    for i in range(2):
        await web.chat(client, f"질문 {i}", thread=f"t{i}")
    r = await client.post("/api/chat", json={"thread": "t9", "message": "또 질문"})
    assert r.status_code == 429
    assert r.json()["error"] == "rate_limited"
    assert 1 <= int(r.headers["retry-after"]) <= 30
    # Another player is not limited by P100's messages.
    web.script({"final": "네."})
    await web.chat(web.client("P200"), "안녕")


async def test_rate_limit_per_ip_covers_every_anonymous_visitor_behind_it(make_web):
    web = await make_web(rate_limit=100, rate_limit_ip=2, rate_window=30.0)
    for _ in range(2):
        web.script({"final": "네."})
    for _ in range(2):
        await web.chat(web.client(), "안녕")  # two visitors, each with a cookie of its own
    r = await web.client().post("/api/chat", json={"thread": "main", "message": "안녕"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1


async def test_bad_input_gets_a_clear_json_error_and_stores_nothing(make_web):
    web = await make_web(max_message_chars=200)
    client = web.client("P100")
    cases = [
        (
            {"content": b'{"thread": "main", "message": ', "headers": {"Content-Type": "application/json"}},
            400,
            "invalid_json",
        ),
        ({"json": ["main", "hi"]}, 400, "invalid_request"),
        ({"json": {"thread": "main"}}, 400, "invalid_request"),
        ({"json": {"thread": "main", "message": 42}}, 400, "invalid_request"),
        ({"json": {"thread": "../etc", "message": "hi"}}, 400, "invalid_request"),
        ({"json": {"thread": "main", "message": "   "}}, 400, "empty_message"),
        (
            {"content": b"thread=main", "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
            415,
            "unsupported_media_type",
        ),
        ({"json": {"thread": "main", "message": "가" * 201}}, 413, "message_too_long"),
        ({"json": {"thread": "main", "message": "x" * 10_000}}, 413, "body_too_large"),
    ]
    for kwargs, status, code in cases:
        r = await client.post("/api/chat", **kwargs)
        assert r.status_code == status, (kwargs, r.text)
        body = r.json()
        assert body["error"] == code and body["message"], body
    too_long = await client.post("/api/chat", json={"thread": "main", "message": "가" * 201})
    assert "최대 200자" in too_long.json()["message"] and too_long.json()["limit"] == 200
    missing = await client.post("/api/chat", json={"thread": "main"})
    assert missing.json()["field"] == "message"
    assert (await client.get("/api/threads/main")).status_code == 404
    assert (await client.get("/api/threads/no%20spaces")).status_code == 400


async def test_cors_allows_only_the_configured_origins(make_web):
    web = await make_web(origins=["https://arca.example.com"])
    async with httpx.AsyncClient(base_url=web.url) as client:
        preflight = {
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        }
        ok = await client.options("/api/chat", headers={"Origin": "https://arca.example.com", **preflight})
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == "https://arca.example.com"
        assert ok.headers["access-control-allow-credentials"] == "true"
        bad = await client.options("/api/chat", headers={"Origin": "https://evil.example.net", **preflight})
        assert "access-control-allow-origin" not in bad.headers
        simple = await client.get("/healthz", headers={"Origin": "https://evil.example.net"})
        assert "access-control-allow-origin" not in simple.headers


async def test_without_an_llm_the_page_says_so_and_chat_answers_503(make_web):
    web = await make_web(llm_ready=False)
    client = web.client()
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "static/widget.js" in page.text
    status = (await client.get("/api/status")).json()
    # The player is told plainly; the configuration hint is the operator's (log, doctor), not the page's.
    assert status["llm"] is False and "지금은 답변할 수 없어요" in status["message"]
    r = await client.post("/api/chat", json={"thread": "main", "message": "안녕"})
    assert r.status_code == 503
    assert r.json()["error"] == "llm_not_configured" and "상담원" in r.json()["message"]
    for text in (status["message"], r.json()["message"]):
        assert "ARCA_MODEL" not in text and "OPENAI_API_KEY" not in text and "LLM" not in text
    assert (await client.get("/healthz")).json() == {"status": "ok", "llm": False, "policy_index": "ready"}


async def test_closing_the_stream_does_not_stop_the_run_and_a_new_tab_can_follow_it(make_web):
    web = await make_web()
    web.script({"final": ("긴 답변입니다. " * 10).strip()}, chunk_delay=0.05)
    client = web.client("P100")
    async with client.stream("POST", "/api/chat", json={"thread": "main", "message": "안녕"}) as r:
        async for _first in read_sse(r):
            break
    # A second tab (no Last-Event-ID) follows the running stream from its start.
    async with client.stream("GET", "/api/threads/main/events") as r:
        events = [e async for e in read_sse(r)]
    assert events[0].id.endswith("-1") and events[-1].event == "done"
    assert events[-1].data["answer"] == ("긴 답변입니다. " * 10).strip()
    await asyncio.wait_for(web.conversations.wait_idle(), WITHIN)


@pytest.mark.parametrize("ttl,seconds", [("15m", 900), ("2h", 7200), ("90", 90), ("30s", 30)])
def test_web_token_command_prints_a_token_the_server_accepts(monkeypatch, capsys, ttl, seconds):
    from bot.cli import main

    monkeypatch.setenv("ARCA_WEB_SECRET", SECRET)
    assert main(["web-token", "P100", "--ttl", ttl]) == 0
    token = capsys.readouterr().out.strip()
    claims = jwt.decode(token, SECRET, algorithms=["HS256"])
    assert claims["sub"] == "P100" and claims["exp"] - claims["iat"] == seconds
    assert IdentityService(SECRET).verify_token(token).player_id == "P100"


def test_web_token_command_needs_the_secret_and_a_sane_ttl(monkeypatch, capsys):
    from bot.cli import main

    assert main(["web-token", "P100"]) == 2
    assert "ARCA_WEB_SECRET" in capsys.readouterr().err
    monkeypatch.setenv("ARCA_WEB_SECRET", SECRET)
    assert main(["web-token", "P100", "--ttl", "soon"]) == 2
    assert main(["web-token", "P1:00"]) == 2


def test_the_limiter_forgets_idle_keys_and_counts_a_refusal_nowhere():
    from bot.players.web.widget.limits import SlidingWindowLimiter, check_all

    now = [0.0]
    per_id = SlidingWindowLimiter(2, 10.0, clock=lambda: now[0])
    per_ip = SlidingWindowLimiter(3, 10.0, clock=lambda: now[0])
    assert check_all([(per_id, "a"), (per_ip, "ip")]) == 0
    assert check_all([(per_id, "a"), (per_ip, "ip")]) == 0
    now[0] = 4.0
    assert check_all([(per_id, "a"), (per_ip, "ip")]) == 6  # a's first hit leaves the window at t=10
    assert check_all([(per_id, "b"), (per_ip, "ip")]) == 0  # the refusal above cost ip nothing
    assert check_all([(per_id, "c"), (per_ip, "ip")]) == 6
    now[0] = 10.5
    assert check_all([(per_id, "a"), (per_ip, "ip")]) == 0
    per_id.max_keys = 2
    now[0] = 100.0
    per_id.hit("d")
    assert len(per_id) == 1


def test_player_tokens_and_the_web_secret_never_reach_a_log_line():
    from bot.config import load_settings
    from bot.observability import SecretRedactor, secret_values

    settings = load_settings(ARCA_WEB_SECRET=SECRET)
    token = IdentityService(SECRET).issue_token("P100")
    cookie = IdentityService(SECRET).new_visitor()[1]
    line = SecretRedactor(secret_values(settings))(f"got {token} / cookie={cookie} / key {SECRET}")
    assert token not in line and cookie not in line and SECRET not in line
    assert "P100" not in line


def test_web_token_link_opens_the_page_as_that_player(monkeypatch, capsys):
    from bot.cli import main

    monkeypatch.setenv("ARCA_WEB_SECRET", SECRET)
    assert main(["web-token", "P300", "--link"]) == 0
    local = capsys.readouterr().out.strip()
    assert local.startswith("http://127.0.0.1:8080/#token=")
    monkeypatch.setenv("ARCA_WEB_PUBLIC_URL", "https://support.arca.example.com/")
    assert main(["web-token", "P300", "--link"]) == 0
    public = capsys.readouterr().out.strip()
    prefix = "https://support.arca.example.com/#token="
    assert public.startswith(prefix)
    assert IdentityService(SECRET).verify_token(public[len(prefix) :]).player_id == "P300"
