"""`replay` reads orders from the configured source: with ARCA_ORDER_SOURCE=http a transcript's orders
come from the reference backend (its fixture orders are not loaded); with builtin, from its fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_settings
from bot.replay.format import load_transcript
from bot.replay.runner import Replayer
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.game.orders_world import load_world
from tests.support.game_backend import GameBackend

CASE = """\
name: orders come from the configured source
fixtures:
  clock: "2026-03-02T10:00:00+09:00"
  players: [{id: P100, discord_id: "9001", name: 루나}]
  orders: [{id: ORD777, player_id: P100, status: delivered, item: 픽스처 주문, amount: 1000}]
turns:
  - user: "ORD501 어디쯤 왔어요?"
    script:
      - {tool: lookup_order, args: {order_id: ORD501}}
      - {final: "확인했습니다."}
    expect:
      codes: [%(backend_order)s]
  - user: "ORD777 어디쯤 왔어요?"
    script:
      - {tool: lookup_order, args: {order_id: ORD777}}
      - {final: "확인했습니다."}
    expect:
      codes: [%(fixture_order)s]
"""


@pytest.mark.parametrize(
    ("source", "backend_order", "fixture_order"),
    [("http", "OK", "ORDER_NOT_FOUND"), ("builtin", "ORDER_NOT_FOUND", "OK")],
)
async def test_replay_reads_the_configured_order_source(
    game_backend: GameBackend, tmp_path: Path, source: str, backend_order: str, fixture_order: str
) -> None:
    load_world(game_backend)
    path = tmp_path / "case.yaml"
    path.write_text(CASE % {"backend_order": backend_order, "fixture_order": fixture_order}, encoding="utf-8")
    extra = (
        {"game_api_url": game_backend.url, "game_api_token": game_backend.token} if source == "http" else {}
    )
    settings = load_settings(data_dir=tmp_path / "data", order_source=source, **extra)
    result = await Replayer(settings, policy_index=EmptyPolicyIndex()).run_case(
        load_transcript(path), "native"
    )
    assert result.passed, result.failures
