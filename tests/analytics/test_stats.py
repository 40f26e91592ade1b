"""`compute_stats`, `/stats` and `arca-bot stats` on a seeded history (every figure by hand, see
`history.py`), on SQLite and on PostgreSQL (`postgres` marker)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.analytics.feedback import FeedbackError, record_vote
from bot.analytics.record import record_run
from bot.analytics.stats import STATS_KEYS, compute_stats, conversations, percentile
from bot.store import AuditEntry, Escalation, Feedback, Order, Player, Store, utcnow
from tests.analytics.history import expected, seed_history

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


async def test_every_figure_matches_the_hand_computed_history(store: Store) -> None:
    seeded = await seed_history(store, NOW)
    stats = await compute_stats(store, days=7, now=NOW)
    assert tuple(stats) == STATS_KEYS
    assert stats == expected(seeded)
    # Days of the business time zone (KST): C2 at 23:10 UTC on 03-01 was issued at 08:10 on 03-02 in Seoul.
    assert stats["coupon_amount_by_day"] == {"2026-03-01": 5000, "2026-03-02": 5000}
    in_utc = await compute_stats(store, days=7, now=NOW, zone="UTC")
    assert in_utc["coupon_amount_by_day"] == {"2026-03-01": 8000, "2026-03-02": 2000}


async def test_each_conversation_gets_its_resolution(store: Store) -> None:
    await seed_history(store, NOW)
    convs = await conversations(store, since=NOW.replace(day=1, hour=0) - (NOW - NOW), now=NOW)
    found = {(c.thread_id, c.player, c.started_at.hour, c.runs): c.resolution for c in convs}
    assert found == {
        ("discord:1", "player:P100", 0, 2): "bot_resolved",
        ("discord:1", "player:P100", 2, 1): "escalated",
        ("discord:1", "discord:9003", 0, 1): "bot_resolved",
        ("dm:9002", "player:P200", 3, 1): "handed_off",
        ("web:u1:main", "player:P300", 4, 1): "staff_resolved",
        ("discord:5", "player:P100", 0, 1): "open",
    }


async def test_in_a_shared_channel_each_event_resolves_only_the_conversation_it_concerns(
    store: Store,
) -> None:
    """Three players talk in one Discord channel at once: P100 asks for a human, staff approve P200's
    coupon, then staff take the channel over right after the unlinked 9009 (the last to speak) spoke."""
    t0 = NOW - timedelta(hours=5)
    mins = timedelta(minutes=1)
    for run_id, player, start in (
        ("s1", "player:P100", 0),
        ("s2", "player:P200", 1),
        ("s3", "discord:9009", 2),
    ):
        assert await record_run(
            store,
            run_id=run_id,
            thread_id="discord:7",
            player=player,
            started_at=t0 + start * mins,
            answered_at=t0 + start * mins + timedelta(seconds=5),
            locale="ko",
            outcomes=(),
        )
    async with store.session() as s, s.begin():
        s.add_all([Player(id="P100", name="루나"), Player(id="P200", name="솔")])
        await s.flush()
        s.add(Order(id="O9", player_id="P200", status="delayed", item="x", amount=39000))
        s.add_all(
            [
                Escalation(
                    thread_id="discord:7",
                    player_id="P100",
                    discord_id="9001",
                    summary="사람",
                    created_at=t0 + 5 * mins,
                ),
                AuditEntry(
                    at=t0 + 6 * mins,
                    actor="staff:42",
                    action="coupon.approve",
                    thread_id="discord:7",
                    target="O9",
                    code="OK",
                ),
            ]
        )
    found = {c.player: (c.resolution, c.escalated) for c in await conversations(store, since=t0, now=NOW)}
    assert found == {
        "player:P100": ("escalated", True),
        "player:P200": ("staff_resolved", False),
        "discord:9009": ("bot_resolved", False),
    }
    async with store.session() as s, s.begin():  # names nobody: who spoke last (9009) was taken over
        s.add(AuditEntry(at=t0 + 7 * mins, actor="staff:42", action="handoff", thread_id="discord:7"))
    found = {c.player: c.resolution for c in await conversations(store, since=t0, now=NOW)}
    assert found == {
        "player:P100": "escalated",
        "player:P200": "staff_resolved",
        "discord:9009": "handed_off",
    }


async def test_the_idle_gap_and_the_resolution_window_are_configurable(store: Store) -> None:
    await seed_history(store, NOW)
    # With a 3-hour idle gap A and B are one conversation (escalated); a 1-minute window closes F.
    stats = await compute_stats(store, days=7, now=NOW, idle_minutes=180, resolution_window_minutes=1)
    assert stats["conversations"] == 5
    assert stats["escalation_rate"] == round(2 / 5, 4)  # A+B, D
    # C, F (its 1-minute window has passed) and E: staff approved 10 minutes after, outside the window.
    assert stats["bot_resolution_rate"] == round(3 / 5, 4)


async def test_a_shorter_look_back_drops_older_conversations(store: Store) -> None:
    await seed_history(store, NOW)
    stats = await compute_stats(store, days=1, now=NOW)
    # Only B, D, E and F started in the last 24 h (T0 = now - 25 h); A and C started before.
    assert stats["conversations"] == 4
    assert stats["coupons_issued"] == 2  # C2 (T0+23 h) and C3


async def test_an_empty_store_gives_zeros(store: Store) -> None:
    stats = await compute_stats(store, days=7, now=NOW)
    assert stats == {
        "conversations": 0,
        "bot_resolution_rate": 0.0,
        "escalation_rate": 0.0,
        "handoffs": 0,
        "first_answer_seconds_p50": 0.0,
        "first_answer_seconds_p90": 0.0,
        "feedback_positive_share": 0.0,
        "feedback_votes": 0,
        "coupons_issued": 0,
        "coupons_rejected_by_code": {},
        "coupon_amount_by_day": {},
        "top_policy_sections": [],
        "tool_errors_by_code": {},
        "first_staff_response_seconds_p50": 0.0,
        "first_staff_response_seconds_p90": 0.0,
        "sla_first_response_met_share": 0.0,
        "policy_gaps": 0,
    }


async def test_votes_are_one_per_answer_and_player_changeable_and_carry_the_run(store: Store) -> None:
    await seed_history(store, NOW)
    async with store.session() as s:
        rows = (await s.execute(Feedback.__table__.select().where(Feedback.run_id == "b1"))).all()
    assert len(rows) == 1
    row = rows[0]
    assert (row.vote, row.comment, row.thread_id) == (-1, "주문을 못 찾았어요", "discord:1")
    assert row.tools == ["search_policy", "lookup_order", "escalate_to_staff"]
    assert row.codes == ["OK", "ORDER_NOT_FOUND", "OK"]
    again = await record_vote(store, run_id="b1", player="player:P100", vote=-1)
    assert not again.changed and again.comment == "주문을 못 찾았어요"
    with pytest.raises(FeedbackError, match="only the player"):
        await record_vote(store, run_id="b1", player="player:P200", vote=1)
    with pytest.raises(FeedbackError, match="no answer"):
        await record_vote(store, run_id="nope", player="player:P100", vote=1)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([5.0], 90) == 5.0
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == 9
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50) == 5


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "var"


def arca_bot(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m bot …` in a child process: no LLM key, no Discord token, only the data folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "OPENAI_", "DISCORD_"))}
    env["ARCA_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_cli_stats_on_an_empty_store_exits_0_with_zeros(data_dir: Path) -> None:
    done = arca_bot(data_dir, "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert tuple(stats) == STATS_KEYS
    assert stats["conversations"] == 0 and stats["feedback_positive_share"] == 0.0
    text = arca_bot(data_dir, "stats", "--days", "30")
    assert text.returncode == 0 and "conversations: 0" in text.stdout


@pytest.mark.slow
async def test_cli_stats_json_reports_the_seeded_history(data_dir: Path) -> None:
    store = Store(f"sqlite+aiosqlite:///{data_dir / 'arca.db'}")
    await store.open()
    now = utcnow()
    seeded = await seed_history(store, now)
    await store.close()
    done = await asyncio.to_thread(arca_bot, data_dir, "stats", "--json", "--days", "7")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected(seeded)
