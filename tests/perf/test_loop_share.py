"""Runs that arrive together share the loop's turns (`bot.loop_share`): past `TURN_S` of work in one turn,
the rest wait for the next, so what else is waiting (a stream's chunk, a heartbeat) runs in between."""

from __future__ import annotations

import asyncio
import math
import sys
import time

import pytest

from bot.loop_share import TURN_S, give_way

SLICE_S = 0.001
RUNS = 40


def _work(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def _slices_per_turn(*, share: bool) -> tuple[list[int], list[list[int]]]:
    """Start RUNS runs of three 1 ms slices together; count the slices each loop turn ran (a ticker that
    reschedules itself once per turn closes each count) and record each run's own order of slices."""
    loop = asyncio.get_running_loop()
    counts = [0]
    done = asyncio.Event()
    order: list[list[int]] = [[] for _ in range(RUNS)]

    def tick() -> None:
        if not done.is_set():
            counts.append(0)
            loop.call_soon(tick)

    async def run(i: int) -> None:
        for step in range(3):
            if share:
                await give_way()
            _work(SLICE_S)
            counts[-1] += 1
            order[i].append(step)

    loop.call_soon(tick)
    await asyncio.gather(*(run(i) for i in range(RUNS)))
    done.set()
    return counts, order


async def test_runs_that_arrive_together_are_spread_over_turns() -> None:
    counts, order = await _slices_per_turn(share=True)
    assert sum(counts) == 3 * RUNS
    assert order == [[0, 1, 2]] * RUNS  # each run's own steps keep their order
    # A turn stops taking slices once TURN_S is spent: at most that many 1 ms slices, plus the one
    # that crossed the line (a loaded machine only makes slices longer, so fewer fit).
    assert max(counts) <= math.ceil(TURN_S / SLICE_S) + 1


async def test_without_give_way_one_turn_runs_every_run() -> None:
    """The control: the same runs with no `give_way()` put all their first slices in one turn."""
    counts, _ = await _slices_per_turn(share=False)
    assert max(counts) >= RUNS


async def test_the_first_give_way_of_a_turn_does_not_yield() -> None:
    """A lone run passing `give_way()` first in a turn keeps going: what was scheduled before it waits."""
    ran: list[str] = []
    await asyncio.sleep(0)  # a fresh turn
    asyncio.get_running_loop().call_soon(ran.append, "other")
    await give_way()
    assert ran == []
    await asyncio.sleep(0)
    assert ran == ["other"]


def _priority() -> int:
    import os
    import threading

    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a thread has a priority of its own on Linux"
)
async def test_the_policy_searchs_workers_yield_the_cpu_to_the_loop_thread(policy_index) -> None:
    """The embedders run on threads of lower priority; the loop's thread (this one) keeps its own."""
    from bot.loop_share import BACKGROUND_NICE

    mine = _priority()
    loop = asyncio.get_running_loop()
    worker = await loop.run_in_executor(policy_index._worker("search"), _priority)
    assert worker == min(19, mine + BACKGROUND_NICE)
    assert _priority() == mine
    assert await policy_index.search("환불 기간", 3)  # and the search still answers on them


async def test_the_loop_knows_while_a_background_thread_is_at_work() -> None:
    import threading

    from bot.loop_share import BackgroundExecutor, background_busy, to_background_thread

    started, release = threading.Event(), threading.Event()

    def work() -> str:
        started.set()
        assert release.wait(5)
        return "done"

    executor = BackgroundExecutor(1, thread_name_prefix="test-background")
    try:
        assert not background_busy()
        running = asyncio.get_running_loop().run_in_executor(executor, work)
        assert await asyncio.to_thread(started.wait, 5)
        assert background_busy()  # the task is at work …
        release.set()
        assert await running == "done"
        assert not background_busy()  # … and no longer once it returned
        failing = executor.submit(lambda: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            failing.result(5)
        assert not background_busy()  # a task that raised is no longer counted either
        # A one-off thread of background work (a staff reindex, the gaps page's grouping) counts alike.
        assert await to_background_thread(background_busy) is True
        assert not background_busy()
    finally:
        release.set()
        executor.shutdown(wait=True)


async def test_an_answers_sentence_checks_wait_for_the_next_turn_once_the_turn_is_spent() -> None:
    """The output guard checks a streamed answer sentence by sentence; past `TURN_S` of the turn, the
    next sentence waits, so what was already waiting runs first (the answer is unchanged)."""
    from bot.guards.output import OutputGuard

    answer = "주문 상태를 확인했습니다. 배송은 내일 도착합니다. 더 궁금한 점이 있으면 말씀해 주세요."
    loop = asyncio.get_running_loop()

    async def check_in_a_spent_turn() -> tuple[str, list[str]]:
        ran: list[str] = []
        await asyncio.sleep(0)  # a fresh turn
        await give_way()  # the turn's count starts here
        _work(2 * TURN_S)
        loop.call_soon(ran.append, "other")
        verdict = await OutputGuard().check(answer, outcomes=[])
        return verdict.text, ran

    text, ran = await check_in_a_spent_turn()
    assert text == answer
    assert ran == ["other"]  # it ran while the answer was being checked


def test_the_app_hands_the_gil_over_within_a_millisecond() -> None:
    import sys

    from bot.loop_share import SWITCH_INTERVAL_S, share_the_gil

    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        share_the_gil()
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S == 0.001
    finally:
        sys.setswitchinterval(before)
