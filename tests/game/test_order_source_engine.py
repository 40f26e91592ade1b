"""End to end through the engine (scripted model, native and JSON modes) with ARCA_ORDER_SOURCE=http
against the reference backend: a lookup answers from the backend; a backend that is down gives
SOURCE_UNAVAILABLE, no coupon, an honest answer (a made-up "issued" is corrected) and recovery when it
is back; staff `/order` and `/orders` read the backend too."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming, TurnOutcome
from bot.llm.scripted import ScriptedLLM
from bot.store import Coupon, GameOrderFacts, Store
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.game.orders_world import load_world, wire_order
from tests.support.conversations import FIXED_NOW
from tests.support.game_backend import GameBackend
from tests.support.surface import RecordingSurface

STAFF_ROLE = "Support Staff"


@pytest.fixture(params=["native", "json"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
async def app(seeded_store: Store, game_backend: GameBackend, tmp_path: Any) -> AsyncIterator[App]:
    load_world(game_backend)
    settings = load_settings(
        data_dir=tmp_path / "var",
        edit_interval=0.0,
        order_source="http",
        game_api_url=game_backend.url,
        game_api_token=game_backend.token,
        game_api_timeout_s=1.0,
        game_api_retries=1,
    )
    queue: list[ScriptedLLM] = []
    built = await build_app(
        settings,
        llm_factory=lambda: queue.pop(0),
        store=seeded_store,
        policy_index=EmptyPolicyIndex(),
        clock=lambda: FIXED_NOW,
    )
    built.scripts = queue  # type: ignore[attr-defined]
    try:
        yield built
    finally:
        await built.conversations.services.orders.close()


async def _say(app: App, text: str, *, who: str = "9001", staff: bool = False) -> tuple[TurnOutcome, str]:
    actor = await app.conversations.resolve_actor(who, {STAFF_ROLE} if staff else set())
    surface = RecordingSurface()
    outcome = await app.conversations.handle(Incoming("console:game", actor, text, ref=text), surface)
    return outcome, surface.text


def _script(app: App, mode: str, *steps: dict[str, Any]) -> None:
    app.scripts.append(ScriptedLLM(list(steps), mode=mode))  # type: ignore[attr-defined]


def _codes(outcome: TurnOutcome) -> list[str]:
    return [str(o.result.code) for run in outcome.runs for o in run.tool_outcomes]


async def _coupons(store: Store) -> list[Coupon]:
    async with store.session() as s:
        return list((await s.execute(select(Coupon))).scalars())


async def test_a_lookup_answers_from_the_backend(app: App, mode: str) -> None:
    _script(
        app,
        mode,
        {"tool": "lookup_order", "args": {"order_id": "ORD501"}},
        {"final": "ORD501은 배송 지연 상태입니다."},
    )
    outcome, text = await _say(app, "ORD501 어디쯤 왔어요?")
    assert _codes(outcome) == ["OK"] and "ORD501" in text


async def test_a_down_backend_issues_nothing_and_the_answer_stays_honest(
    app: App, game_backend: GameBackend, mode: str
) -> None:
    game_backend.faults(error_rate=1.0)
    _script(
        app,
        mode,
        {"tool": "lookup_order", "args": {"order_id": "ORD501"}},
        {"tool": "issue_coupon", "args": {"order_id": "ORD501", "amount": 10000}},
        {"final": "ORD501에 10,000원 쿠폰을 발급했어요!"},  # a claim the ledger does not back
    )
    outcome, text = await _say(app, "ORD501 배송이 늦어요. 10000원 보상해 주세요.")
    assert _codes(outcome) == ["SOURCE_UNAVAILABLE", "SOURCE_UNAVAILABLE"]
    assert await _coupons(app.store) == []
    assert "발급했어요" not in text and "발급되지 않았습니다" in text
    assert "확인할 수 없습니다" in text

    game_backend.faults()  # the backend is back: the same request is decided and issued
    _script(
        app,
        mode,
        {"tool": "lookup_order", "args": {"order_id": "ORD501"}},
        {"tool": "issue_coupon", "args": {"order_id": "ORD501", "amount": 10000}},
        {"final": "쿠폰을 발급했어요."},
    )
    outcome, _ = await _say(app, "다시 부탁해요. ORD501 10000원 보상 쿠폰 주세요.")
    assert _codes(outcome) == ["OK", "ISSUED"]
    assert [c.order_id for c in await _coupons(app.store)] == ["ORD501"]


async def test_a_lookup_that_cannot_read_says_why_no_coupon_came(
    app: App, game_backend: GameBackend, mode: str
) -> None:
    game_backend.faults(error_rate=1.0)
    _script(
        app,
        mode,
        {"tool": "lookup_order", "args": {"order_id": "ORD501"}},
        {"final": "ORD501에 쿠폰을 발급했어요."},
    )
    outcome, text = await _say(app, "ORD501 보상 쿠폰 받을 수 있어요?")
    assert _codes(outcome) == ["SOURCE_UNAVAILABLE"] and await _coupons(app.store) == []
    assert "발급되지 않았습니다" in text and "확인할 수 없습니다" in text


async def test_staff_order_commands_read_the_backend(app: App, game_backend: GameBackend) -> None:
    outcome, _ = await _say(app, "/order ORD503", who="42", staff=True)
    assert outcome.reply.ok and "P200" in outcome.reply.text
    outcome, _ = await _say(app, "/orders P100", who="42", staff=True)
    assert outcome.reply.ok and "ORD501" in outcome.reply.text and "ORD502" in outcome.reply.text
    assert "ORD001" not in outcome.reply.text  # the demo seed's orders are not the backend's
    outcome, _ = await _say(app, "/coupon issue ORD502 5000 배송 사과", who="42", staff=True)
    assert outcome.reply.ok and "[ISSUED]" in outcome.reply.text  # staff may compensate any status
    async with app.store.session() as s:
        kept = (await s.execute(select(GameOrderFacts))).scalar_one()
    assert (kept.order_id, kept.status, kept.source) == ("ORD502", "shipping", "http")
    game_backend.faults(error_rate=1.0)
    outcome, _ = await _say(app, "/coupon issue ORD501 5000 배송 사과", who="42", staff=True)
    assert not outcome.reply.ok and "[SOURCE_UNAVAILABLE]" in outcome.reply.text
    outcome, _ = await _say(app, "/orders P200", who="42", staff=True)  # P100's list is cached
    assert not outcome.reply.ok and "SOURCE_UNAVAILABLE" in outcome.reply.text


async def test_staff_orders_says_how_many_more_than_it_shows(
    app: App, game_backend: GameBackend, seeded_store: Store, tmp_path: Any
) -> None:
    many = [
        wire_order(f"ORD6{i:02d}", player="P300", ordered_at=f"2026-03-{1 + i % 28:02d}T10:00:00+09:00")
        for i in range(53)
    ]
    game_backend.load(players=[{"id": "P300", "name": "별", "locale": "ko"}], orders=many)

    outcome, _ = await _say(app, "/orders P300", who="42", staff=True)  # http: the API gives no total
    lines = outcome.reply.text.splitlines()
    assert outcome.reply.ok and "주문 50+건" in lines[0]
    assert sum(line.startswith("- ORD6") for line in lines) == 50
    assert "더 있음" in lines[-1] and "more (newest 50 shown" in lines[-1]

    # The builtin table knows its total: the 51 orders read above were mirrored into it.
    builtin = await build_app(
        load_settings(data_dir=tmp_path / "var2", edit_interval=0.0),
        llm_factory=lambda: None,
        store=seeded_store,
        policy_index=EmptyPolicyIndex(),
        clock=lambda: FIXED_NOW,
    )
    outcome, _ = await _say(builtin, "/orders P300", who="42", staff=True)
    lines = outcome.reply.text.splitlines()
    assert outcome.reply.ok and "주문 51건" in lines[0]
    assert sum(line.startswith("- ORD6") for line in lines) == 50
    assert "외 1건 더" in lines[-1] and "1 more (newest 50 shown" in lines[-1]
