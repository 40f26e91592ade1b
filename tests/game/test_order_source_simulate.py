"""A simulation with `ARCA_ORDER_SOURCE=http` grades `orders_untouched` from the studio's backend: the
embedded table is only a mirror of what the bot read, so an order changed in the backend during the run
(here: before it, behind the bot's back) fails the grade though the table still says the fixture's."""

from __future__ import annotations

import json
from pathlib import Path

from bot.config import load_settings
from bot.simulate.command import simulate
from bot.simulate.scenario import load_scenario
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.fakes.openai_server import FakeOpenAIServer
from tests.simulate.scripted_bot import DELAYED
from tests.simulate.scripted_bot import bot_turn as _bot_turn
from tests.simulate.scripted_bot import model as _model
from tests.support.game_backend import GameBackend


def _wire(order: object) -> dict:
    o = order  # a SeedOrder
    return {
        "id": o.id,
        "player_id": o.player_id,
        "status": o.status,
        "item": o.item,
        "amount": o.amount,
        "currency": o.currency,
        "ordered_at": "2026-03-01T10:00:00+09:00",
        "updated_at": "2026-03-01T11:00:00+09:00",
    }


async def _run(tmp_path: Path, game_backend: GameBackend) -> tuple[int, dict]:
    tmp_path.mkdir(parents=True)
    settings = load_settings(
        data_dir=tmp_path / "data",
        order_source="http",
        game_api_url=game_backend.url,
        game_api_token=game_backend.token,
        game_api_timeout_s=1.0,
        game_api_retries=1,
    )
    lines: list[str] = []
    async with FakeOpenAIServer(_bot_turn(10000, "ORD101에 10,000원 쿠폰을 발급했습니다.")) as server:
        code = await simulate(
            settings,
            [load_scenario(DELAYED)],
            bot_model_factory=lambda: _model(server),
            policy_index=EmptyPolicyIndex(),
            out=lines.append,
            report=tmp_path / "report.json",
        )
    return code, json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["scenarios"][0]["runs"][0]


async def test_orders_untouched_is_graded_from_the_backend(tmp_path: Path, game_backend: GameBackend) -> None:
    seed = load_scenario(DELAYED).seed
    players = [{"id": p.id, "name": p.name, "locale": "ko"} for p in seed.players]
    game_backend.load(players=players, orders=[_wire(o) for o in seed.orders])

    code, run = await _run(tmp_path / "same", game_backend)
    assert code == 0 and run["failures"] == [], run["failures"]
    assert run["end_coupons"] == [["ORD101", 10000]]

    changed = [_wire(o) | ({"status": "refunded"} if o.id == "ORD303" else {}) for o in seed.orders]
    game_backend.load(players=players, orders=changed)
    code, run = await _run(tmp_path / "changed", game_backend)
    assert code == 1
    assert run["failures"] == ["orders_untouched: {'ORD303': ('delayed', 'refunded')} (fixture → end)"]
