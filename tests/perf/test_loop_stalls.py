"""The loop-stall diagnosis (`bench/loop_stalls.py`) names what held the event loop: a coroutine that
blocks the loop thread for 80 ms of CPU is the culprit of the stall it causes, with its long step
recorded, and a loop that only waits has no step of ours in any stall.

Robust on a loaded machine: the hog burns CPU time (not wall time, which a descheduled thread spends
without working), and the test reads the stall that spans the hog (it records when it ran) instead of
the worst one, which on a busy machine may be the OS not scheduling the process at all."""

from __future__ import annotations

import asyncio
import threading
import time

from bench.concurrency import LoopWatchdog
from bench.loop_stalls import CollectorTimer, Sampler, StepRecorder, attribute

HOG_CPU_S = 0.08
HOGGED: list[tuple[float, float]] = []
"""(start, end) in perf_counter time of each hog run, so a test finds the stall it caused."""


def _hog(cpu_seconds: float) -> None:
    """Busy CPU on the loop thread for `cpu_seconds` of its own CPU time (what a heavy synchronous step
    does)."""
    started, end = time.perf_counter(), time.thread_time() + cpu_seconds
    while time.thread_time() < end:
        sum(range(200))
    HOGGED.append((started, time.perf_counter()))


async def _blocking_step() -> None:
    await asyncio.sleep(0.05)
    _hog(HOG_CPU_S)


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
    HOGGED.clear()
    late, samples, pauses, steps = await _measure(_blocking_step)
    [(_, hog_end)] = HOGGED
    # The watchdog's tick that came due while the hog ran woke only after it: that is the hog's stall.
    spanning = [(due, woke) for due, woke in late if due <= hog_end <= woke]
    assert len(spanning) == 1, (late, HOGGED)
    [stall], blame = attribute(spanning, samples, pauses, steps, over_ms=40)

    assert stall["lag_ms"] >= 40, stall
    assert "_hog" in stall["ours"][0][0], stall
    assert any("_blocking_step" in owner and cpu >= 40 for cpu, owner in stall["long_steps"]), stall
    assert "_hog" in blame.most_common(1)[0][0]
    assert blame.most_common(1)[0][1] >= 40, blame


async def test_a_loop_that_only_waits_has_nothing_of_ours_to_blame() -> None:
    late, samples, pauses, steps = await _measure(lambda: asyncio.sleep(0.15))
    stalls, blame = attribute(late, samples, pauses, steps, over_ms=40)
    # A loaded machine may leave the process unscheduled for a while (a stall), but no step of ours held
    # the loop: every stall is the loop waiting.
    assert all(stall["long_steps"] == [] for stall in stalls), (stalls, blame)


async def _asleep_in_step() -> None:
    await asyncio.sleep(0.01)
    time.sleep(0.06)  # noqa: ASYNC251 - the loop thread asleep inside a step, as when it waits for the GIL


async def test_a_step_that_sleeps_is_split_into_cpu_run_queue_and_asleep() -> None:
    with StepRecorder() as steps:
        await asyncio.create_task(_asleep_in_step())
    [(_, wall, cpu, queued, _)] = [w for w in steps.waits if "_asleep_in_step" in w[4]]
    assert wall >= 60 and cpu < 20, (wall, cpu)
    assert wall - cpu - queued >= 40, (wall, cpu, queued)  # most of it asleep, not working or queued
    assert all("_asleep_in_step" not in s[3] for s in steps.steps)  # not a long step of CPU
