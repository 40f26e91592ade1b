"""`arca-bot deliveries list|retry|drain` (DESIGN.md §11.5): drain delivers what is pending and says by
its exit status whether dead letters remain; list shows each job with the contract's JSON fields and the
backend's reason; retry puts a dead letter back, and the next drain delivers it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.store import Store
from tests.support.context import NOW, STAFF
from tests.support.deliveries import effective
from tests.support.game_backend import GameBackend
from tools.coupon_rules import CouponRules
from tools.ledger import staff_issue


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game_backend: GameBackend) -> Path:
    data = tmp_path / "var"
    for name, value in {
        "ARCA_DATA_DIR": str(data),
        "ARCA_COUPON_DELIVERY": "game",
        "ARCA_GAME_API_URL": game_backend.url,
        "ARCA_GAME_API_TOKEN": game_backend.token,
        "ARCA_GAME_DELIVERY_BACKOFF_MAX_S": "0.2",
        "ARCA_GAME_DELIVERY_CONCURRENCY": "1",  # posted in order: the first one meets the refusal
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["seed"]) == 0
    return data


def _issue(data: Path, orders: list[str]) -> list[str]:
    async def go() -> list[str]:
        store = Store(f"sqlite+aiosqlite:///{data / 'arca.db'}", game_delivery=True)
        await store.open()
        try:
            codes = []
            for i, order in enumerate(orders):
                result = await staff_issue(
                    store,
                    CouponRules(),
                    actor=STAFF,
                    order_id=order,
                    amount=2000,
                    reason="사과",
                    idempotency_key=f"k{i}",
                    now=NOW,
                )
                codes.append(result.data["coupon"]["code"])
            return codes
        finally:
            await store.close()

    return asyncio.run(go())


def _listed(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict]:
    capsys.readouterr()
    assert main(["deliveries", "list", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_drain_list_and_retry_a_dead_letter(
    configured: Path, game_backend: GameBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = _issue(configured, ["ORD001", "ORD003"])
    assert [j["state"] for j in _listed(capsys)] == ["pending", "pending"]

    game_backend.faults(only="grants", refuse_next=1, refuse_reason="unknown player")
    assert main(["deliveries", "drain"]) == 1
    assert "dead letters 1" in capsys.readouterr().out
    (dead,) = _listed(capsys, "--state", "dead")
    assert set(dead) == {"grant_id", "kind", "order_id", "player_id", "state", "attempts", "last_error"}
    assert dead["grant_id"] == first and dead["kind"] == "grant" and dead["order_id"] == "ORD001"
    assert (dead["state"], dead["attempts"], dead["last_error"]) == ("dead", 1, "422 unknown player")
    assert [j["grant_id"] for j in _listed(capsys, "--state", "delivered")] == [second]

    assert main(["deliveries", "list"]) == 0
    text = capsys.readouterr().out
    assert "pending 0  delivered 1  dead 1" in text and "422 unknown player" in text

    assert main(["deliveries", "retry", "NOPE"]) == 1
    assert "no dead letter" in capsys.readouterr().err
    assert main(["deliveries", "retry", first]) == 0
    assert main(["deliveries", "drain"]) == 0
    assert effective(game_backend) == {first: "granted", second: "granted"}
    assert {j["state"] for j in _listed(capsys)} == {"delivered"}


def test_drain_without_a_game_backend_says_what_to_set(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    assert main(["deliveries", "drain"]) == 2
    assert "ARCA_GAME_API_URL is not set" in capsys.readouterr().err
