"""`arca-bot doctor` checks the game's backend when it is configured: reachable, token accepted, the
order API at the configured address, clocks in step; each failure says what to fix, never the token."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.cli import main
from bot.game.orders.check import check_connection
from tests.support.game_backend import GameBackend


async def test_a_healthy_backend_is_ok(game_backend: GameBackend) -> None:
    found = await check_connection(game_backend.url, game_backend.token, timeout_s=2)
    assert found.status == "ok" and "token accepted" in found.detail


async def test_a_wrong_token_says_which_setting_to_fix(game_backend: GameBackend) -> None:
    found = await check_connection(game_backend.url, "not-the-token", timeout_s=2)
    assert found.status == "fail" and "ARCA_GAME_API_TOKEN" in found.fix
    assert "not-the-token" not in found.detail + found.fix


async def test_a_wrong_base_path_is_named(game_backend: GameBackend) -> None:
    found = await check_connection(game_backend.url + "/arca/v1", game_backend.token, timeout_s=2)
    assert found.status == "fail" and "404" in found.detail and "ARCA_GAME_API_URL" in found.fix


async def test_an_unreachable_backend_is_named() -> None:
    found = await check_connection("http://127.0.0.1:9", "t", timeout_s=1)
    assert found.status == "fail" and "cannot reach" in found.detail


@pytest.fixture
def skewed_backend() -> Iterator[str]:
    """A loopback server that answers the contract's empty order list with a Date 10 minutes late."""

    class Handler(BaseHTTPRequestHandler):
        def date_time_string(self, timestamp: float | None = None) -> str:
            return formatdate(time.time() - 600, usegmt=True)

        def do_GET(self) -> None:
            body = b'{"orders": []}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


async def test_clock_skew_beyond_the_event_tolerance_fails(skewed_backend: str) -> None:
    found = await check_connection(skewed_backend, "t", timeout_s=2)
    assert found.status == "fail" and re.search(r"(599|600|601|602) s apart", found.detail)
    assert "NTP" in found.fix


@pytest.mark.slow
def test_doctor_prints_the_game_backend_line(
    game_backend: GameBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_ORDER_SOURCE", "http")
    monkeypatch.setenv("ARCA_GAME_API_URL", game_backend.url)
    monkeypatch.setenv("ARCA_GAME_API_TOKEN", "wrong-token-value")
    main(["doctor"])
    out = capsys.readouterr().out
    assert "✘ game backend:" in out and "ARCA_GAME_API_TOKEN" in out and "wrong-token-value" not in out


def test_doctor_says_the_orders_it_counts_are_a_mirror_under_http(
    game_backend: GameBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    main(["seed"])
    main(["doctor"])
    builtin = capsys.readouterr().out
    monkeypatch.setenv("ARCA_ORDER_SOURCE", "http")
    monkeypatch.setenv("ARCA_GAME_API_URL", game_backend.url)
    monkeypatch.setenv("ARCA_GAME_API_TOKEN", game_backend.token)
    main(["doctor"])
    http = capsys.readouterr().out
    line = next(li for li in builtin.splitlines() if "database:" in li)
    assert re.search(r"\d+ orders$", line) and "mirrored" not in line
    line = next(li for li in http.splitlines() if "database:" in li)
    assert "orders mirrored from the game backend (ARCA_ORDER_SOURCE=http)" in line
