"""The delivery worker against the reference game backend over loopback HTTP: each coupon reaches the
game once through 5xx, timeouts, 429 + Retry-After and an answer lost after the game committed; a
refusal (422) is a dead letter with the backend's reason, retried by staff; a revoke follows its grant."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.store import Store
from tests.support.context import LUNA, NOW, STAFF
from tests.support.deliveries import drain, effective, jobs, open_store
from tests.support.game_backend import GameBackend
from tests.support.store import sqlite_url
from tests.support.tools import seed
from tools.coupon_rules import CouponRules
from tools.coupon_staff import revoke
from tools.ledger import issue_for_player, staff_issue


@pytest.fixture
async def store(tmp_path: Path):
    s = await open_store(sqlite_url(tmp_path / "arca.db"))
    await seed(s)
    try:
        yield s
    finally:
        await s.close()


async def _issue(store: Store, order_id: str = "ORD001", key: str = "k1") -> str:
    result = await issue_for_player(
        store, CouponRules(), actor=LUNA, order_id=order_id, amount=5000, idempotency_key=key, now=NOW
    )
    assert result.ok, result.message
    return result.data["coupon"]["code"]


async def test_a_bot_coupon_arrives_once_with_the_contracts_body(
    store: Store, game_backend: GameBackend
) -> None:
    code = await _issue(store)
    backlog = await drain(store, game_backend)
    assert backlog.pending == backlog.dead == 0
    seen = game_backend.grants()
    assert seen["posts"] == 1 and seen["repeats"] == 0
    (grant,) = seen["grants"]
    assert grant["grant_id"] == code and grant["code"] == code
    assert (grant["player_id"], grant["order_id"], grant["amount"], grant["currency"]) == (
        "P100",
        "ORD001",
        5000,
        "KRW",
    )
    assert grant["expires_at"].startswith("2026-04-01")
    assert [(j["state"], j["attempts"]) for j in await jobs(store)] == [("delivered", 1)]


@pytest.mark.parametrize(
    ("faults", "attempts"),
    [
        ({"fail_next": 2}, 3),
        ({"timeout_next": 1, "hang_s": 3}, 2),
        ({"drop_after_commit_next": 1, "hang_s": 3}, 2),
    ],
    ids=["5xx", "timeout", "drop-after-commit"],
)
async def test_passing_faults_are_retried_with_the_same_key_to_one_grant(
    store: Store, game_backend: GameBackend, faults: dict, attempts: int
) -> None:
    code = await _issue(store)
    game_backend.faults(only="grants", **faults)
    backlog = await drain(store, game_backend, timeout_s=0.5)
    assert backlog.pending == backlog.dead == 0
    assert effective(game_backend) == {code: "granted"}
    (job,) = await jobs(store)
    assert (job["state"], job["attempts"], job["last_error"]) == ("delivered", attempts, None)


async def test_429_waits_at_least_retry_after(store: Store, game_backend: GameBackend) -> None:
    code = await _issue(store)
    game_backend.faults(only="grants", rate_limit_next=1, retry_after_s=1)
    started = time.monotonic()
    await drain(store, game_backend)
    assert time.monotonic() - started >= 1.0  # the quick backoff alone would retry within 0.02 s
    assert effective(game_backend) == {code: "granted"}
    assert game_backend.grants()["posts"] == 1  # the 429 was answered before anything was applied


async def test_a_refusal_is_a_dead_letter_with_the_backends_reason_until_staff_retry(
    store: Store, game_backend: GameBackend
) -> None:
    code = await _issue(store)
    game_backend.faults(only="grants", refuse_next=1, refuse_reason="player <b>suspended</b>")
    backlog = await drain(store, game_backend)
    assert (backlog.pending, backlog.dead) == (0, 1)
    (job,) = await jobs(store)
    assert (job["state"], job["attempts"]) == ("dead", 1)
    assert job["last_error"] == "422 player <b>suspended</b>"
    assert effective(game_backend) == {}

    assert await store.game_deliveries.retry(code) == 1
    assert await store.game_deliveries.retry(code) == 0  # pending now: nothing dead to retry
    backlog = await drain(store, game_backend)
    assert (backlog.pending, backlog.dead) == (0, 0)
    assert effective(game_backend) == {code: "granted"}


async def test_giving_up_after_max_attempts_makes_a_dead_letter(
    store: Store, game_backend: GameBackend
) -> None:
    await _issue(store)
    game_backend.faults(only="grants", fail_next=10)
    backlog = await drain(store, game_backend)
    assert backlog.dead == 1
    (job,) = await jobs(store)
    assert job["attempts"] == 6 and job["last_error"].startswith("gave up after 6 attempts: 503")


async def test_a_revoke_waits_for_its_grant_then_reaches_the_game_once(
    store: Store, game_backend: GameBackend
) -> None:
    code = await _issue(store)
    staff_code = (
        await staff_issue(
            store,
            CouponRules(),
            actor=STAFF,
            order_id="ORD002",
            amount=9000,
            reason="VIP",
            idempotency_key="s1",
            now=NOW,
        )
    ).data["coupon"]["code"]
    assert (await revoke(store, actor=STAFF, order_id="ORD001")).ok  # before the grant was even posted
    await drain(store, game_backend)
    assert effective(game_backend) == {code: "revoked", staff_code: "granted"}
    posts = game_backend.grants()
    assert posts["posts"] == 3 and posts["repeats"] == 0
    assert {(j["grant_id"], j["kind"], j["state"]) for j in await jobs(store)} == {
        (code, "grant", "delivered"),
        (code, "revoke", "delivered"),
        (staff_code, "grant", "delivered"),
    }


async def test_a_revoke_whose_grant_is_dead_is_left_and_counted(
    store: Store, game_backend: GameBackend
) -> None:
    await _issue(store)
    game_backend.faults(only="grants", refuse_next=1)
    assert (await revoke(store, actor=STAFF, order_id="ORD001")).ok
    backlog = await drain(store, game_backend)
    assert (backlog.pending, backlog.blocked, backlog.dead) == (0, 1, 1)
