"""Shared fixtures: an isolated environment, a real SQLite store (empty or seeded with the demo data), the
SQLite / PostgreSQL parameter and its databases, and the fake Discord with a bot harness over it.

PostgreSQL and Chroma come from `scripts/services.sh start` (ARCA_TEST_PG_URL, ARCA_TEST_CHROMA_URL).
Without them a `postgres` / `chroma_server` test skips on a developer machine and FAILS under CI.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bot.store import Store
from bot.store.seed import DEFAULT_SEED, apply_seed, load_seed_file
from tests.support.clock import FakeClock
from tests.support.context import LUNA, NOW, make_ctx
from tests.support.game_backend import GameBackend
from tests.support.services import BACKENDS, NEEDS, create_pg_database, drop_pg_database
from tests.support.settings_env import is_setting
from tests.support.store import sqlite_url
from tools.base import Actor, ToolContext
from tools.coupon_rules import CouponRules

if TYPE_CHECKING:  # the Discord stack is imported only by the tests that start it
    from tests.support.discord import BotHarness
    from tests.support.fake_discord import FakeDiscord


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's configuration or writes into the checkout's ./var: every variable
    the settings model would read is cleared (and any other ARCA_* but the suite's own)."""
    for name in [n for n in os.environ if is_setting(n)]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ARCA_CONFIG", "")  # empty: no configuration file
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _root_log_handlers_restored():
    """`main()` installs a stderr log handler bound to the test's captured stream; a later test must
    not log into that closed stream."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
    root.setLevel(level)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(sqlite_url(tmp_path / "arca.db"))
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def seeded_store(store: Store) -> Store:
    await apply_seed(store, load_seed_file(DEFAULT_SEED))
    return store


def pytest_report_header(config: pytest.Config) -> str:
    return f"arca: cores={os.cpu_count()}"


@pytest.fixture(scope="session")
def policy_index(tmp_path_factory: pytest.TempPathFactory):
    """The project's real policy index (e5 embedder, embedded Chroma), built once per test session."""
    from bot.app import PROJECT_ROOT
    from bot.knowledge.embedders import E5Embedder
    from bot.knowledge.index import PolicyIndex

    index = PolicyIndex(
        E5Embedder(),
        chroma_dir=tmp_path_factory.mktemp("policy-index"),
        policies_dir=PROJECT_ROOT / "policies",
    )
    index.ensure_built(PROJECT_ROOT / "policies")
    index.fit_search_model()  # here, not inside the first test's page load (seconds on a busy machine)
    return index


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker, env in NEEDS.items():
        if item.get_closest_marker(marker) is not None and not os.environ.get(env):
            message = f'{env} is not set: run `eval "$(scripts/services.sh start)"` first'
            if os.environ.get("CI"):
                pytest.fail(f"{message} (CI must not skip {marker} tests)", pytrace=False)
            pytest.skip(message)


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


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """The fake Discord on loopback, with discord.py's REST base and gateway URL pointed at it."""
    import discord.gateway
    import discord.http
    import yarl

    from tests.support.fake_discord import FakeDiscord

    async with FakeDiscord() as server:
        # The only two redirections: REST base and gateway URL. The client itself is unmodified.
        monkeypatch.setattr(discord.http.Route, "BASE", server.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(server.gateway_url))
        yield server


@pytest.fixture
async def harness(fake: FakeDiscord, tmp_path: Path) -> AsyncIterator[BotHarness]:
    """The real discord.py client and a real app (demo data) against `fake`; `await harness.start()`."""
    from tests.support.discord import BotHarness

    h = BotHarness(fake, tmp_path / "var")
    try:
        yield h
    finally:
        await h.aclose()


@pytest.fixture
def game_backend() -> Iterator[GameBackend]:
    """The reference game backend (examples/game_backend) on a loopback port, for the game connection's
    tests and the console pages that read orders through it."""
    with GameBackend() as backend:
        yield backend


@pytest.fixture
def rules() -> CouponRules:
    """The coupon rules' built-in defaults (not the checkout's policies/coupon_rules.yaml)."""
    return CouponRules()


@pytest.fixture
def clock() -> FakeClock:
    """A wall clock at `NOW` (2026-03-02 10:00 in Seoul) that a test moves with `clock.now = ...`."""
    return FakeClock(NOW)


@pytest.fixture
def ctx_for(store: Store, rules: CouponRules, clock: FakeClock) -> Callable[..., ToolContext]:
    """`make_ctx` on this test's store, coupon rules and clock, in thread `test:1`, with a new call id each
    time (so an idempotency key of its own) unless `call_id` is given."""

    def make(actor: Actor = LUNA, **kwargs: Any) -> ToolContext:
        kwargs.setdefault("rules", rules)
        return make_ctx(
            actor,
            store=store,
            clock=clock,
            thread_id="test:1",
            run_id=kwargs.pop("run_id", "r1"),
            new_call=True,
            **kwargs,
        )

    return make


LONG_MODULE_LINES = 400
"""Advice, not a rule (issue 52): a module past this is named at the end of the run, to be read for
whether it still owns one concept. Split along ownership, never to fit the number."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    root = Path(__file__).resolve().parent.parent
    long = sorted(
        (lines, str(path.relative_to(root)))
        for folder in ("bot", "tools")
        for path in (root / folder).rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > LONG_MODULE_LINES
    )
    if long:
        terminalreporter.write_sep("-", f"modules over {LONG_MODULE_LINES} lines (advice: one concept each?)")
        for lines, name in long:
            terminalreporter.write_line(f"{name}: {lines}")
