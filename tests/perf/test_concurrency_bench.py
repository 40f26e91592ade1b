"""The 200-conversation burst (`bench/concurrency.py`) runs its own routine here on a few conversations, so
the bench cannot silently stop measuring what it says: every run must be a grounded run that ends
answered with its own coupon (issue 29: after issue 28 its scripted runs were sent back and failed)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bench import concurrency
from bot.conversations import TurnOutcome
from bot.store import Coupon, Store

pytestmark = pytest.mark.slow

N = 5


async def test_every_burst_conversation_ends_answered_with_its_own_coupon(
    tmp_path: Path, policy_index: Any
) -> None:
    figures = await concurrency.run(N, 0.0, tmp_path, policy_index=policy_index, idle_s=0.2)

    assert figures["conversations"] == N
    assert figures["idle_loop_max_lag_ms"] >= 0.0  # the machine's own jitter is reported beside the burst's
    store = Store(f"sqlite+aiosqlite:///{tmp_path / 'concurrency.db'}")
    await store.open()
    try:
        async with store.session() as s:
            coupons = (await s.execute(select(Coupon))).scalars().all()
    finally:
        await store.close()
    # N in the burst plus the two that ran alone (the first use, timed apart, then the steady one), one
    # coupon each, of the amount its player wrote.
    assert sorted((c.order_id, c.player_id, c.amount) for c in coupons) == [
        (f"ORD{i:05d}", f"B{i:05d}", concurrency.COUPON_AMOUNT) for i in range(N + 2)
    ]
    assert figures["single_statements"] > 0 and figures["single_commits"] > 0  # the store's counts are read


async def test_a_burst_with_a_failed_conversation_ends_with_its_reason(
    tmp_path: Path, policy_index: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = concurrency.expected_answer
    # Conversation 1 is held to an answer its script never gives: it ends otherwise than the bench expects.
    monkeypatch.setattr(concurrency, "expected_answer", lambda i: "다른 답변" if i == 1 else expected(i))
    with pytest.raises(
        RuntimeError, match="1 of 3 conversations failed; first: conversation 1 ended as answered"
    ):
        await asyncio.wait_for(concurrency.run(3, 0.0, tmp_path, policy_index=policy_index, idle_s=0.0), 120)


async def test_a_run_gets_the_script_of_the_player_who_wrote_the_order_even_out_of_order() -> None:
    # Under a burst, runs ask for their model in no fixed order: the script follows the player's message.
    models = [concurrency.latency_llm(latency=0.0) for _ in range(3)]
    for i, model in zip((2, 0, 1), models, strict=True):
        reply = await model.chat(
            [{"role": "user", "content": concurrency.player_message(i)}], tools=[{"type": "function"}]
        )
        assert reply.tool_calls[0].name == "search_policy"
        assert f"({i % 64})" in reply.tool_calls[0].arguments


def test_a_conversation_that_does_not_end_with_its_coupon_stops_the_bench() -> None:
    refused = TurnOutcome(kind="answered", answer="쿠폰은 발급되지 않았습니다: 처리 중 오류가 발생했습니다.")
    with pytest.raises(RuntimeError, match="conversation 3 ended as answered"):
        concurrency.check_outcome(3, refused)
    concurrency.check_outcome(3, TurnOutcome(kind="answered", answer=concurrency.expected_answer(3)))


def test_the_player_writes_the_amount_the_script_issues() -> None:
    message = concurrency.player_message(7)
    assert "ORD00007" in message and str(concurrency.COUPON_AMOUNT) in message
