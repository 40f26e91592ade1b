"""`scripts/run --game`'s parts: the demo world loads into the reference backend, and the bot reads
the demo's orders from it; plain `scripts/run` stays the two-command quick start."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bot.game.orders import HttpOrderSource
from examples.game_backend.demo_world import load_demo_world
from tests.support.game_backend import GameBackend

RUN = Path(__file__).resolve().parents[2] / "scripts" / "run"


async def test_the_demo_world_is_read_through_the_http_source(game_backend: GameBackend) -> None:
    players, orders = load_demo_world(game_backend.app.state.store)
    assert players >= 9 and orders >= 30
    src = HttpOrderSource(base_url=game_backend.url, token=game_backend.token)
    try:
        order = await src.order("ORD001")
        assert order is not None and (order.player_id, order.status) == ("P100", "delayed")
        assert order.ordered_at is not None and order.ordered_at.utcoffset() is not None
    finally:
        await src.close()


def test_scripts_run_keeps_its_plain_path_and_offers_game() -> None:
    assert subprocess.run(["bash", "-n", str(RUN)], check=False).returncode == 0
    text = RUN.read_text(encoding="utf-8")
    assert text.rstrip().endswith('exec "$bot" start')  # the plain path: seed, doctor, start
    assert "--game" in text and "ARCA_ORDER_SOURCE=http" in text
