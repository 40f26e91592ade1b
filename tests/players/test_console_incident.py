"""The console's incident compensation: the same preview (players, orders, total, exclusions, overridden
rules, how to approve or cancel) and, while an approval runs, a progress bar read from the store."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from bench.incident_seed import seed_orders
from bot.app import App, build_app
from bot.config import load_settings
from bot.incidents import parse_scope
from bot.llm.scripted import ScriptedLLM
from bot.players.terminal import run_console
from bot.store import Store, utcnow
from tests.fakes.knowledge import EmptyPolicyIndex

STAFF_ROLE = "Support Staff"


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


async def _console(app: App, *lines: str, roles: set[str]) -> str:
    out = io.StringIO()
    await run_console(
        app.conversations, discord_id="42", roles=roles, stdin=io.StringIO("\n".join(lines) + "\n"), out=out
    )
    return out.getvalue()


async def test_the_console_previews_then_approves_with_a_progress_bar(app: App) -> None:
    store = app.store
    await seed_orders(store, 3_000)
    incident = await store.incidents.open(
        title="택배 지연",
        notice_ko="배송이 3일 늦어집니다.",
        notice_en="",
        scope=parse_scope("status=delayed"),
        actor="staff:42",
        now=utcnow(),
    )
    orders = await store.incidents.count_orders(incident)
    i = incident.id
    text = await _console(
        app,
        f"/incident compensate {i} 2000 per=order",
        f"/incident compensate {i} approve",
        roles={STAFF_ROLE},
    )
    assert f"주문 {orders:,}건" in text and "daily_max_count" in text
    assert f"/incident compensate {i} approve" in text and f"/incident compensate {i} cancel" in text
    bars = re.findall(r"보상 진행 / progress ([▓░]+) (\d+)%", text)
    assert bars and bars[-1][1] == "100" and "░" not in bars[-1][0], text[-600:]
    assert f"발급 / issued {orders:,} / {orders:,}" in text
    assert f"발급 {orders:,}건" in text  # the command's own final line


async def test_a_player_typing_the_approval_gets_no_bar_and_no_coupon(app: App) -> None:
    incident = await app.store.incidents.open(
        title="점검",
        notice_ko="점검 중입니다.",
        notice_en="",
        scope=parse_scope("all"),
        actor="s",
        now=utcnow(),
    )
    text = await _console(app, f"/incident compensate {incident.id} approve", roles=set())
    assert "보상 진행" not in text and "운영진" in text
