"""The loop-stall diagnosis (`bench/loop_stalls.py`) names what held the event loop: a coroutine that
blocks the loop thread for 80 ms is the culprit of the stall it causes, with its long step recorded, and
a loop that only waits has no stall to attribute."""

from __future__ import annotations

import asyncio
import threading
import time

from bench.concurrency import LoopWatchdog
from bench.loop_stalls import CollectorTimer, Sampler, StepRecorder, attribute


def _hog(seconds: float) -> None:
    """Busy CPU on the loop thread (what a heavy synchronous step does)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        sum(range(200))


async def _blocking_step() -> None:
    await asyncio.sleep(0.05)
    _hog(0.08)


async def _measure(work) -> tuple[list, list, list, list]:  # type: ignore[no-untyped-def]
    sampler = Sampler(threading.get_ident())
    with CollectorTimer() as collector, StepRecorder() as steps, LoopWatchdog() as dog:
        sampler.start()
        try:
            await asyncio.create_task(work())  # its own task: the step recorder names its coroutine
            await asyncio.sleep(0.05)
        finally:
            sampler.stop()
    return dog.late, sampler.samples, collector.pauses, steps.steps


async def test_a_blocking_coroutine_is_named_as_the_culprit_of_its_stall() -> None:
    late, samples, pauses, steps = await _measure(_blocking_step)
    stalls, blame = attribute(late, samples, pauses, steps, over_ms=40)

    assert stalls, late
    worst = stalls[0]
    assert worst["lag_ms"] >= 40
    assert any("_hog" in culprit for culprit, _ in worst["ours"]), worst
    assert any("_blocking_step" in owner and cpu >= 40 for cpu, owner in worst["long_steps"]), worst
    assert "_hog" in blame.most_common(1)[0][0]


async def test_a_loop_that_only_waits_has_no_stall() -> None:
    late, samples, pauses, steps = await _measure(lambda: asyncio.sleep(0.15))
    stalls, blame = attribute(late, samples, pauses, steps, over_ms=40)
    assert stalls == [] and not blame
