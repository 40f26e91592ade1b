"""The delivery worker: takes due jobs from the outbox under a lease, posts each to the game at most
`concurrency` at a time and `rate` per second, and records what came back in one transaction per
flush. Several processes run one side by side (every long-running process does); the lease keeps them
from posting one job at the same time, and the job's fixed `Idempotency-Key` keeps anything that still
goes twice (a lease taken over after a crash) to one effective grant in the game.

`start()`/`stop()` run it for as long as its process runs; `deliver_all()` delivers what is pending and
returns (`arca-bot deliveries drain`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from bot.game.delivery.pacing import RateCap, RetryPolicy
from bot.game.delivery.poster import PostResult
from bot.store import Store, utcnow
from bot.store.game_deliveries import Backlog, DeliveryJob, Outcome

log = logging.getLogger(__name__)

LEASE_BATCH = 200
"""Jobs taken in one statement at most."""
FLUSH_S = 0.02
"""Outcomes gathered this long before they are written (one transaction for many posts)."""


class Poster(Protocol):
    async def send(self, job: DeliveryJob) -> PostResult: ...


DeadSink = Callable[[list[tuple[DeliveryJob, str]]], Awaitable[None]]
"""Told the jobs that just became dead letters, with the reason (the staff alert)."""


@dataclass(frozen=True)
class DeliveryCaps:
    """The worker's limits (settings `ARCA_GAME_DELIVERY_*`, bot/config/game.py)."""

    rate: float = 1000.0
    concurrency: int = 32
    lease: timedelta = timedelta(seconds=60)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    poll_s: float = 1.0

    @classmethod
    def from_settings(cls, settings: Any) -> DeliveryCaps:
        return cls(
            rate=settings.game_delivery_rate,
            concurrency=settings.game_delivery_concurrency,
            lease=timedelta(seconds=settings.game_delivery_lease_s),
            retry=RetryPolicy(
                max_attempts=settings.game_delivery_max_attempts, max_s=settings.game_delivery_backoff_max_s
            ),
        )


def process_owner() -> str:
    """Who holds a lease: host, pid and a random tag (a pid is reused after a restart)."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(4)}"


class DeliveryWorker:
    """One process's deliveries. Construct, then `start()` … `await stop()`, or `await deliver_all()`."""

    def __init__(
        self,
        store: Store,
        poster: Poster,
        caps: DeliveryCaps = DeliveryCaps(),
        *,
        clock: Callable[[], datetime] = utcnow,
        on_dead: DeadSink | None = None,
        owner: str | None = None,
    ) -> None:
        self._store, self._poster, self.caps = store, poster, caps
        self._clock, self._on_dead = clock, on_dead
        self.owner = owner or process_owner()
        self._rate = RateCap(caps.rate)
        self._queue: asyncio.Queue[DeliveryJob] = asyncio.Queue()
        self._held: dict[int, DeliveryJob] = {}
        """Jobs leased and not yet recorded (queued or being posted)."""
        self._outcomes: list[tuple[DeliveryJob, Outcome]] = []
        self._flush = asyncio.Event()
        self._room = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.posted = 0
        """Posts made by this worker (tests and the bench read it)."""

    # -- running ------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return bool(self._tasks) and not all(t.done() for t in self._tasks)

    def start(self) -> None:
        """Post in the background until `stop()` (starting twice starts one worker)."""
        if self.running:
            return
        self._start_posting()
        self._tasks.append(asyncio.create_task(self._lease_forever(), name="deliveries-lease"))

    async def stop(self) -> None:
        """Stop posting; what came back is recorded, leases of jobs not answered are given back (posting
        one again later is safe: same key)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        try:
            await self._record_outcomes()
            await self._store.game_deliveries.release(self.owner, list(self._held))
        except Exception:  # the database is gone at shutdown: the leases expire by themselves
            log.exception("deliveries: could not give back %s leases", len(self._held))
        self._held.clear()
        self._queue = asyncio.Queue()

    async def deliver_all(self) -> Backlog:
        """Deliver every job that can be delivered (waiting out backoffs and the leases of processes that
        died), then return what is left: dead letters and revokes whose grant is dead."""
        self._start_posting()
        try:
            while True:
                leased = await self._lease_some()
                if leased:
                    continue
                if self._held:
                    await self._wait_room(self.caps.poll_s)
                    continue
                backlog = await self._store.game_deliveries.backlog(now=self._clock())
                if backlog.pending == 0:
                    return backlog
                due = backlog.next_due
                wait = self.caps.poll_s if due is None else (due - self._clock()).total_seconds()
                await asyncio.sleep(min(max(wait, 0.01), self.caps.poll_s))
        finally:
            await self.stop()

    def _start_posting(self) -> None:
        self._tasks += [
            asyncio.create_task(self._post_forever(), name=f"deliveries-post-{i}")
            for i in range(self.caps.concurrency)
        ]
        self._tasks.append(asyncio.create_task(self._record_forever(), name="deliveries-record"))

    # -- leasing --------------------------------------------------------------------------------------

    async def _lease_some(self) -> int:
        """Take as many due jobs as there is room for (twice the posts in flight); how many."""
        room = min(LEASE_BATCH, 2 * self.caps.concurrency - len(self._held))
        if room <= 0:
            await self._wait_room(self.caps.poll_s)
            return 0
        jobs = await self._store.game_deliveries.lease(
            self.owner, now=self._clock(), lease=self.caps.lease, limit=room
        )
        for job in jobs:
            self._held[job.id] = job
            self._queue.put_nowait(job)
        return len(jobs)

    async def _lease_forever(self) -> None:
        while True:
            try:
                if await self._lease_some():
                    continue
            except Exception:  # the database is away: the next round tries again
                log.exception("deliveries: leasing jobs failed")
            await self._wait_room(self.caps.poll_s)

    async def _wait_room(self, seconds: float) -> None:
        """Until a recorded outcome frees room, or `seconds`."""
        self._room.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._room.wait(), seconds)

    # -- posting and recording ------------------------------------------------------------------------

    async def _post_forever(self) -> None:
        while True:
            job = await self._queue.get()
            await self._rate.take()
            sent = await self._poster.send(job)
            self.posted += 1
            self._outcomes.append((job, self._outcome(job, sent)))
            self._flush.set()

    def _outcome(self, job: DeliveryJob, sent: PostResult) -> Outcome:
        if sent.result == "retry":
            policy = self.caps.retry
            if policy.gives_up(job.attempts):
                return Outcome(job.id, "dead", f"gave up after {job.attempts} attempts: {sent.error}")
            return Outcome(
                job.id, "retry", sent.error, policy.next_at(self._clock(), job.attempts, sent.retry_after)
            )
        return Outcome(job.id, sent.result, sent.error)

    async def _record_forever(self) -> None:
        while True:
            await self._flush.wait()
            await asyncio.sleep(FLUSH_S)  # more posts end meanwhile: one transaction for all of them
            try:
                await self._record_outcomes()
            except Exception:  # kept for the next flush; the leases still hold them
                log.exception("deliveries: recording outcomes failed")
                await asyncio.sleep(self.caps.poll_s)

    async def _record_outcomes(self) -> None:
        self._flush.clear()
        batch, self._outcomes = self._outcomes, []
        if not batch:
            return
        try:
            await self._store.game_deliveries.record(self.owner, [o for _j, o in batch], now=self._clock())
        except BaseException:
            self._outcomes[:0] = batch
            raise
        for job, _o in batch:
            self._held.pop(job.id, None)
        self._room.set()
        dead = [(job, o.error or "") for job, o in batch if o.result == "dead"]
        if dead and self._on_dead is not None:
            try:
                await self._on_dead(dead)
            except Exception:  # the staff channel being down must not stop deliveries
                log.exception("deliveries: the dead-letter alert failed")
