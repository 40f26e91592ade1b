"""Fixtures for the scale-out tests: the same store on SQLite and on a real PostgreSQL server, a seeded
ledger, and the Chroma server URL.

PostgreSQL and Chroma come from `scripts/services.sh start` (ARCA_TEST_PG_URL, ARCA_TEST_CHROMA_URL).
Without them a `postgres` / `chroma_server` test skips on a developer machine and FAILS under CI.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bot.store import Order, Player, Store
from tools.base import Actor, ToolContext, ToolServices
from tools.coupon_rules import CouponRules

PG_ENV = "ARCA_TEST_PG_URL"
CHROMA_ENV = "ARCA_TEST_CHROMA_URL"
_NEEDS = {"postgres": PG_ENV, "chroma_server": CHROMA_ENV}

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
"""2026-03-02 10:00 in Seoul."""

LUNA = Actor(discord_id="9001", player_id="P100", display_name="루나")
SOL = Actor(discord_id="9002", player_id="P200", display_name="솔")
STAFF = Actor(discord_id="42", roles=frozenset({"Support Staff"}), is_staff=True)

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, env in _NEEDS.items():
        if item.get_closest_marker(marker) is not None and not os.environ.get(env):
            message = f'{env} is not set: run `eval "$(scripts/services.sh start)"` first'
            if os.environ.get("CI"):
                pytest.fail(f"{message} (CI must not skip {marker} tests)", pytrace=False)
            pytest.skip(message)


def pg_admin_url() -> str:
    return os.environ[PG_ENV]


def asyncpg_dsn(url: str) -> str:
    """The libpq-style DSN asyncpg takes for an SQLAlchemy `postgresql+asyncpg://` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def create_pg_database() -> str:
    """A fresh, empty database on the test server; returns its SQLAlchemy URL."""
    import asyncpg

    name = f"arca_t_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(asyncpg_dsn(pg_admin_url()))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return make_url(pg_admin_url()).set(database=name).render_as_string(hide_password=False)


async def drop_pg_database(url: str) -> None:
    import asyncpg

    name = make_url(url).database
    conn = await asyncpg.connect(asyncpg_dsn(pg_admin_url()))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def db_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """An empty database of `backend`: a temp SQLite file, or a new database on the PostgreSQL server."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 't.db'}"
        return
    url = await create_pg_database()
    try:
        yield url
    finally:
        await drop_pg_database(url)


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """An empty PostgreSQL database (for tests that only make sense there)."""
    url = await create_pg_database()
    try:
        yield url
    finally:
        await drop_pg_database(url)


async def seed_ledger(store: Store) -> None:
    """Two linked players; P100 has a delayed ORD001, a delivered ORD002 and ten delayed ORD100-ORD109."""
    async with store.session() as s:
        s.add_all(
            [
                Player(id="P100", discord_id="9001", name="루나"),
                Player(id="P200", discord_id="9002", name="솔"),
            ]
        )
        await s.flush()
        orders = [
            Order(id="ORD001", player_id="P100", status="delayed", item="한정판 굿즈", amount=39000),
            Order(id="ORD002", player_id="P100", status="delivered", item="시즌 패스", amount=15000),
            Order(id="ORD003", player_id="P200", status="delayed", item="펫 상자", amount=9900),
        ]
        orders += [
            Order(id=f"ORD1{i:02d}", player_id="P100", status="delayed", item=f"아이템 {i}", amount=10000)
            for i in range(10)
        ]
        s.add_all(orders)
        await s.commit()


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = Store(db_url)
    await st.open()
    await seed_ledger(st)
    try:
        yield st
    finally:
        await st.close()


@pytest.fixture
def make_ctx(store: Store) -> Callable[..., ToolContext]:
    """A tool context for `actor` with a unique call id (so an idempotency key of its own)."""
    counter = iter(range(1, 1_000_000))

    def make(
        actor: Actor = LUNA, *, call_id: str | None = None, rules: CouponRules | None = None
    ) -> ToolContext:
        ctx = ToolContext(
            actor=actor,
            thread_id="discord:1",
            run_id="r1",
            store=store,
            locale="ko",
            clock=lambda: NOW,
            services=ToolServices(coupon_rules=rules or CouponRules(), timezone="Asia/Seoul"),
        )
        return ctx.for_call(call_id or f"call_{next(counter)}")

    return make
