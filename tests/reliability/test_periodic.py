"""The timer every poller shares (`bot.periodic`): a failing round never ends the poller, one start is one
task, and stop ends it for good."""

from __future__ import annotations

import asyncio
import logging

from bot.periodic import Periodic
from tests.eventually import eventually

log = logging.getLogger("tests.periodic")


async def test_a_failing_round_is_logged_and_the_next_round_still_runs(caplog) -> None:
    calls: list[int] = []

    async def work() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise ConnectionError("database away")

    poller = Periodic(work, 0.01, name="test-poller", log=log, failure="the test round failed")
    poller.start()
    try:
        await eventually(lambda: len(calls) >= 3, what="rounds after the failed one")
    finally:
        await poller.stop()
    assert poller.rounds >= 2
    failed = [r for r in caplog.records if r.getMessage() == "the test round failed"]
    assert len(failed) == 1 and failed[0].exc_info is not None and failed[0].levelno == logging.ERROR


async def test_starting_twice_runs_one_task_and_stop_ends_it() -> None:
    running = 0
    most = 0

    async def work() -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.005)
        running -= 1

    poller = Periodic(work, 0.0, name="test-poller", log=log, failure="failed")
    poller.start()
    poller.start()
    assert sum(1 for t in asyncio.all_tasks() if t.get_name() == "test-poller") == 1
    await eventually(lambda: poller.rounds >= 3, what="three rounds")
    await poller.stop()
    assert not poller.running and most == 1
    ended = poller.rounds
    await asyncio.sleep(0.03)
    assert poller.rounds == ended
    await poller.stop()  # stopping a stopped poller is a no-op
    poller.start()  # and it can be started again (a restarted server)
    await eventually(lambda: poller.rounds > ended, what="a round after the restart")
    await poller.stop()
