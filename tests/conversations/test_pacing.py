"""`TurnBudget`: a burst of runs starts a few per loop turn, in arrival order, with the loop's other
work served in between."""

from __future__ import annotations

import asyncio
from collections import Counter

from bot.conversations.pacing import TurnBudget


async def test_a_burst_passes_a_few_per_loop_turn_in_arrival_order_with_other_work_in_between() -> None:
    budget = TurnBudget(3)
    turn = 0
    passed: list[tuple[int, int]] = []
    ticks: list[int] = []

    async def ticker() -> None:  # other work of the loop: it must get a turn between the passes
        nonlocal turn
        while True:
            ticks.append(turn)
            await asyncio.sleep(0)
            turn += 1

    async def start(i: int) -> None:
        await budget.wait_turn()
        passed.append((i, turn))

    tick = asyncio.create_task(ticker())
    try:
        await asyncio.gather(*(start(i) for i in range(10)))
    finally:
        tick.cancel()
    assert [i for i, _ in passed] == list(range(10))
    per_turn = Counter(t for _, t in passed)
    assert max(per_turn.values()) <= 3
    assert len(per_turn) >= 4  # ten starts spread over at least four turns …
    assert len(ticks) >= 4  # … and the ticker ran in each of them


async def test_a_lone_start_passes_at_once() -> None:
    budget = TurnBudget(1)
    await asyncio.wait_for(budget.wait_turn(), 0.1)
    await asyncio.sleep(0)
    await asyncio.wait_for(budget.wait_turn(), 0.1)  # the next turn has its budget again
