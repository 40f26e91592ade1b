"""The player API as an attacker finds it (issue 27): forwarded headers, new identities per address, weak
secrets, oversized and malformed bodies, cross-site simple requests, and the CLI's player tokens."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from sqlalchemy import func, select

from bot.store import ThreadMessage
from bot.web_kit.identity import ANON_COOKIE, IdentityService
from tests.support.web import SECRET

JSON = {"Content-Type": "application/json"}


async def _stored_messages(web) -> int:
    async with web.conversations.store.session() as s:
        return (await s.execute(select(func.count(ThreadMessage.id)))).scalar_one()


async def test_a_forwarded_header_does_not_change_the_address_the_limits_count(make_web):
    web = await make_web(rate_limit=100, rate_limit_ip=2, rate_window=30.0)
    for _ in range(2):
        web.script({"final": "네."})
    for i in range(2):  # anonymous visitors: they share their address's budget
        client = web.client(headers={"X-Forwarded-For": f"203.0.113.{i}"})
        await web.chat(client, "안녕")
    late = web.client(headers={"X-Forwarded-For": "198.51.100.7"})
    r = await late.post("/api/chat", json={"thread": "main", "message": "안녕"})
    assert r.status_code == 429 and r.json()["error"] == "rate_limited"


async def test_a_configured_proxy_names_the_client(make_web):
    web = await make_web(rate_limit=100, rate_limit_ip=1, rate_window=30.0, trusted_proxies=["127.0.0.1"])
    for _ in range(2):
        web.script({"final": "네."})
    for i in range(2):  # two anonymous clients behind the proxy: one message each
        await web.chat(web.client(headers={"X-Forwarded-For": f"203.0.113.{i}"}), "안녕")
    again = web.client(headers={"X-Forwarded-For": "203.0.113.0"})
    assert (await again.post("/api/chat", json={"thread": "main", "message": "안녕"})).status_code == 429


async def test_new_anonymous_visitors_are_capped_per_address(make_web):
    web = await make_web(new_visitors_ip=3, rate_window=30.0)
    kept = web.client()
    assert (await kept.get("/api/status")).status_code == 200  # a visitor that keeps its cookie
    async with httpx.AsyncClient(base_url=web.url) as bare:
        for _ in range(2):  # no cookie kept: each request is a new visitor
            r = await bare.get("/api/status")
            assert r.status_code == 200 and ANON_COOKIE in r.headers["set-cookie"]
            bare.cookies.clear()
        r = await bare.post("/api/chat", json={"thread": "main", "message": "안녕"})
        assert r.status_code == 429 and r.json()["error"] == "rate_limited"
        assert 1 <= int(r.headers["retry-after"]) <= 30
    # The visitor with its cookie, and a signed-in player, are not new visitors.
    assert (await kept.get("/api/status")).status_code == 200
    assert (await web.client("P100").get("/api/status")).status_code == 200


async def test_the_visitor_cookie_is_sent_with_an_expiry(make_web):
    web = await make_web()
    r = await web.client().get("/api/status")
    cookie = r.headers["set-cookie"]
    assert "Max-Age=31536000" in cookie and "HttpOnly" in cookie


def test_a_weak_web_secret_stops_the_start_without_echoing_it(monkeypatch, capsys, tmp_path):
    from bot.cli import main

    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ARCA_CONFIG", "")
    monkeypatch.setenv("ARCA_WEB_SECRET", "hunter2-weak")
    assert main(["web", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ARCA_WEB_SECRET" in err and "32 bytes" in err
    assert "hunter2" not in err
    assert main(["web-token", "P100"]) == 2  # nor does the CLI sign with it
    assert "hunter2" not in capsys.readouterr().err


async def test_doctor_reports_a_weak_or_missing_web_secret():
    from bot.config import load_settings
    from bot.doctor import check_web_secret

    weak = await check_web_secret(load_settings(ARCA_WEB_SECRET="hunter2-weak"))
    assert weak.status == "fail" and "32 bytes" in weak.detail and "hunter2" not in weak.detail
    assert (await check_web_secret(load_settings(ARCA_WEB_SECRET=SECRET))).status == "ok"
    assert (await check_web_secret(load_settings(ARCA_WEB_SECRET=""))).status == "warn"


def test_web_token_refuses_an_anonymous_visitor_id(monkeypatch, capsys):
    from bot.cli import main

    monkeypatch.setenv("ARCA_WEB_SECRET", SECRET)
    assert main(["web-token", "anon-abc"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "anon-" in captured.err


@pytest.mark.parametrize(
    "path",
    ["/staff/login", "/api/threads/main/feedback", "/staff/logout", "/api/chat", "/api/nowhere"],
)
async def test_a_huge_body_is_refused_before_it_is_read(make_web, path):
    web = await make_web()
    sent = 0

    async def body():  # 50 MB, without Content-Length: the server must stop reading on its own
        nonlocal sent
        for _ in range(800):
            sent += 65_536
            yield b"x" * 65_536

    async with httpx.AsyncClient(base_url=web.url, timeout=20) as client:
        try:
            r = await client.post(path, content=body(), headers=JSON)
        except httpx.TransportError:
            r = None  # the server answered and closed while the client was still writing
        if r is not None:
            assert r.status_code == 413
            if path.startswith("/api"):
                assert r.json()["error"] == "body_too_large"
        assert sent < 10_000_000
        started = time.monotonic()
        head, answer = await _declare_100_mb(web.url, path)
        assert head.startswith("HTTP/1.1 413") and time.monotonic() - started < 2
        if path.startswith("/staff"):
            assert "content-type: text/html" in head.lower()
        else:
            assert json.loads(answer)["error"] == "body_too_large"
        assert (await client.get("/healthz")).status_code == 200


async def _declare_100_mb(url: str, path: str) -> tuple[str, bytes]:
    """A request that says it will send 100 MB and sends 1 KB: the answer's head and body."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000000\r\n\r\n".encode()
        + b"x" * 1024
    )
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(65_536), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.decode(), body


async def test_unreadable_numbers_and_strings_answer_400_not_500(make_web):
    web = await make_web()
    web.script({"final": "ORD001은 배송 지연 중입니다."})
    client = web.client("P100")
    await web.chat(client, "ORD001 상태", thread="orders")
    await web.idle()
    stored = await _stored_messages(web)
    bodies = {
        "/api/chat": [
            b'{"thread": "main", "message": "hi", "n": ' + b"9" * 5_001 + b"}",
            b'{"thread": "main", "message": "\\udfff"}',
            b'{"thread": "main", "message": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",
            b'{"thread": "main", "message": "\xff"}',
            b'{"thread": "main", "message": "NUL \\u0000 here"}',
        ],
        "/api/threads/orders/feedback": [
            b'{"vote": "down", "comment": "\\udfff"}',
            b'{"vote": "down", "comment": "a\\u0000b"}',
            b'{"vote": "down", "n": ' + b"9" * 5_001 + b"}",
        ],
    }
    for path, cases in bodies.items():
        for raw in cases:
            r = await client.post(path, content=raw, headers=JSON)
            assert r.status_code == 400, (path, raw[:60], r.text)
            assert r.json()["error"] in ("invalid_json", "invalid_request")
    assert await _stored_messages(web) == stored


async def test_a_simple_cross_site_request_is_refused(make_web):
    web = await make_web()
    client = web.client()
    assert (await client.get("/api/status")).status_code == 200  # the visitor has its cookie
    evil = "http://127.0.0.1:9"
    body = json.dumps({"thread": "main", "message": "공격자의 메시지"}).encode()
    for content_type in ("text/plain; x=json", "text/plain", "application/x-www-form-urlencoded"):
        r = await client.post(
            "/api/chat", content=body, headers={"Content-Type": content_type, "Origin": evil}
        )
        assert r.status_code in (403, 415), content_type
    # JSON from another site's page, without the widget's header (a preflight would carry it).
    r = await client.post("/api/chat", content=body, headers={**JSON, "Origin": evil})
    assert r.status_code == 403 and r.json()["error"] == "cross_site"
    r = await client.post("/api/threads/main/feedback", json={"vote": "up"}, headers={"Origin": evil})
    assert r.status_code == 403
    # The media type is read exactly: "json" somewhere in it is not JSON.
    r = await client.post("/api/chat", content=body, headers={"Content-Type": "text/json-ish"})
    assert r.status_code == 415
    assert await _stored_messages(web) == 0


async def test_the_widget_and_same_origin_pages_still_send(make_web):
    web = await make_web()
    web.script({"final": "네."})
    web.script({"final": "네."})
    client = web.client()
    body = {"thread": "main", "message": "안녕"}
    for headers in ({"Origin": web.url}, {"Origin": "http://127.0.0.1:9", "X-Arca-Request": "1"}):
        headers["Content-Type"] = "application/json; charset=utf-8"
        async with client.stream("POST", "/api/chat", content=json.dumps(body), headers=headers) as r:
            assert r.status_code == 200, await r.aread()
            await r.aread()
        await web.idle()


async def test_half_sent_bodies_leave_one_json_line_each_and_no_traceback(make_web, capfd):
    import io
    import logging

    from bot.observability.logging_setup import configure_logging

    web = await make_web()
    log = io.StringIO()
    root_level = logging.getLogger().level
    handler = configure_logging(level="INFO", fmt="json", stream=log)
    try:
        host, port = web.url.removeprefix("http://").split(":")
        for path in ("/api/chat", "/staff/login", "/api/threads/main/feedback"):
            for _ in range(5):
                _reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    'Content-Length: 1000\r\n\r\n{"thread": '.encode()
                )
                await writer.drain()
                writer.close()
                await writer.wait_closed()
        await asyncio.sleep(0.5)
        assert (await web.client().get("/healthz")).status_code == 200
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(root_level)
    lines = [line for line in log.getvalue().splitlines() if line.strip()]
    for line in lines:
        record = json.loads(line)
        assert record.get("level", "INFO") in ("DEBUG", "INFO", "WARNING"), record
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "Traceback" not in out


def test_identity_service_signs_no_anon_ids():
    with pytest.raises(ValueError, match="anon-"):
        IdentityService(SECRET).issue_token("anon-abc")


async def test_odd_numbers_in_a_resume_request_are_no_500(make_web):
    web = await make_web()
    web.script({"final": "네."})
    client = web.client("P100")
    await web.chat(client, "안녕")
    await web.idle()
    run = (await client.get("/api/threads/main")).json()["messages"][-1]["run"]
    events = "/api/threads/main/events"
    for params, headers in [
        ({"after": "9" * 5_000}, {}),
        ({"after": "²"}, {}),
        ({"wait": "²"}, {}),
        ({"wait": "9" * 5_000}, {}),
        ({}, {"Last-Event-ID": f"{run}-" + "9" * 5_000}),
        ({}, {"Last-Event-ID": f"{run}-\u00b2".encode("latin-1")}),
    ]:
        r = await client.get(events, params=params, headers=headers)
        assert r.status_code in (200, 204), (params, headers, r.status_code)


async def test_an_embedding_site_can_read_the_413(make_web):
    site = "https://arca.example.com"
    web = await make_web(origins=[site])
    r = await web.client("P100").post(
        "/api/threads/main/feedback",
        content=b"x" * 100_000,
        headers={**JSON, "Origin": site, "X-Arca-Request": "1"},
    )
    assert r.status_code == 413 and r.headers["access-control-allow-origin"] == site


async def test_run_with_the_web_channel_refuses_a_weak_secret_before_it_starts(tmp_path):
    from bot.config import ConfigError
    from bot.serving.process import serve
    from tests.support.discord import make_settings

    settings = make_settings(
        tmp_path / "var", web_port=0, web_secret="hunter2-weak", model="m", openai_api_key="sk-test-x"
    )
    with pytest.raises(ConfigError) as info:
        await asyncio.wait_for(serve(settings, discord=True, web=True, port=0), 10)
    assert "ARCA_WEB_SECRET" in str(info.value) and "hunter2" not in str(info.value)
    assert not (tmp_path / "var").exists()  # refused before a database was opened
