"""Fixtures for the tool tests: a real SQLite file store with two players, their orders, and a fixed clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from bot.store import Order, Player, Store
from tools.base import Actor, ToolContext, ToolServices
from tools.coupon_rules import CouponRules
from tools.registry import build_registry

# 2026-03-02 10:00 in Seoul.
NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)

LUNA = Actor(discord_id="9001", player_id="P100", display_name="루나")
SOL = Actor(discord_id="9002", player_id="P200", display_name="솔")
UNLINKED = Actor(discord_id="9009")
STAFF = Actor(discord_id="42", roles=frozenset({"Support Staff"}), is_staff=True)


class FixedClock:
    """A clock tests can move: `clock.now = ...`."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def seed(store: Store) -> None:
    async with store.session() as s:
        s.add_all(
            [
                Player(
                    id="P100", discord_id="9001", name="루나", email="luna@example.com", phone="010-1111-2222"
                ),
                Player(id="P200", discord_id="9002", name="솔"),
            ]
        )
        await s.flush()
        s.add_all(
            [
                Order(
                    id="ORD001",
                    player_id="P100",
                    status="delayed",
                    item="한정판 굿즈",
                    amount=39000,
                    ordered_at=datetime(2026, 2, 20, 3, 0, tzinfo=UTC),
                ),
                Order(
                    id="ORD002",
                    player_id="P100",
                    status="delivered",
                    item="시즌 패스",
                    amount=15000,
                    ordered_at=datetime(2026, 2, 21, 3, 0, tzinfo=UTC),
                ),
                Order(
                    id="ORD003",
                    player_id="P200",
                    status="delayed",
                    item="펫 상자",
                    amount=9900,
                    ordered_at=datetime(2026, 2, 22, 3, 0, tzinfo=UTC),
                ),
            ]
            + [
                Order(
                    id=f"ORD1{i:02d}",
                    player_id="P100",
                    status="delayed",
                    item=f"아이템 {i}",
                    amount=10000,
                    ordered_at=datetime(2026, 2, 1, i, 0, tzinfo=UTC),
                )
                for i in range(10)
            ]
        )
        await s.commit()


@pytest.fixture
async def store(store: Store) -> Store:
    """The suite's SQLite store (tests/conftest.py) with the rows above."""
    await seed(store)
    return store


@pytest.fixture
def rules() -> CouponRules:
    return CouponRules()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def registry():
    return build_registry()


@pytest.fixture
def make_ctx(store: Store, rules: CouponRules, clock: FixedClock) -> Callable[..., ToolContext]:
    counter = iter(range(1, 1_000_000))

    def make(
        actor: Actor = LUNA,
        *,
        locale: str = "ko",
        call_id: str | None = None,
        rules_: CouponRules | None = None,
        notify=None,
        run_id: str = "r1",
    ) -> ToolContext:
        services = ToolServices(coupon_rules=rules_ or rules, timezone="Asia/Seoul", notify_staff=notify)
        ctx = ToolContext(
            actor=actor,
            thread_id="test:1",
            run_id=run_id,
            store=store,
            locale=locale,
            clock=clock,
            services=services,
        )
        return ctx.for_call(call_id or f"call_{next(counter)}")

    return make
