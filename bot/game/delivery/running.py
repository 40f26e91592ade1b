"""A process's deliveries, built from the settings: the poster (one HTTP client), the worker with the
configured caps and the dead-letter alert. Every long-running process (`run`, `start`, `web`) starts
one when `ARCA_COUPON_DELIVERY=game` (`deliveries_for`), in a child process of its own with its own
connection to the database, so a 10,000-grant wave's HTTP work neither runs between the live
conversations' steps on the main loop nor holds the GIL they wait for (a thread did: 100 ms and more of
loop lag during a wave, bench/game_deliveries.py); `replay` never starts one. `arca-bot deliveries
drain` runs the worker on its own loop (`drain_worker`).

The child lives by a pipe to its parent: a message or the pipe's end (the parent stopped, or was
killed -9) stops it, with what came back recorded and the other leases given back; dead-letter alerts
travel up the pipe to the parent, where the staff channel lives."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from bot.game.delivery.alerts import DeadLetterAlert, Notify
from bot.game.delivery.poster import GrantPoster
from bot.game.delivery.worker import DeliveryCaps, DeliveryWorker
from bot.store import Backlog, Store

log = logging.getLogger(__name__)

STOP_WITHIN_S = 30.0
READY = "deliveries_ready"
"""What the child says up the pipe once its worker runs (every other message is a staff alert)."""


class ProcessDeliveries:
    """The worker and the HTTP client it owns, on the caller's loop: `await deliver_all()`."""

    def __init__(self, worker: DeliveryWorker, poster: GrantPoster) -> None:
        self.worker = worker
        self._poster = poster

    async def deliver_all(self) -> Backlog:
        try:
            return await self.worker.deliver_all()
        finally:
            await self._poster.aclose()


class ChildDeliveries:
    """The worker in a child process: `start()` (on the main loop), then `await stop()`. Dead letters
    are announced through `notify` on the main loop."""

    def __init__(
        self, settings: Any, notify: Notify | None = None, log_setup: Callable[[], object] | None = None
    ) -> None:
        self._settings = settings
        self._notify = notify
        self._log_setup = log_setup
        self._process: Any = None
        self._pipe: Connection | None = None
        self._alerts: set[asyncio.Task[None]] = set()
        self._ready = asyncio.Event()

    def start(self) -> None:
        if self._process is not None:
            return
        # spawn, not fork: the parent has threads and open connections a forked child must not inherit.
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(
            target=run_child,
            args=(self._settings, theirs, self._log_setup),
            name="arca-deliveries",
            daemon=True,
        )
        self._process.start()
        theirs.close()
        self._pipe = ours
        asyncio.get_running_loop().add_reader(ours.fileno(), self._heard)

    def _heard(self) -> None:
        """The child said something: a dead-letter alert, or its end (the pipe closed)."""
        assert self._pipe is not None
        try:
            kind, payload = self._pipe.recv()
        except (EOFError, OSError):
            asyncio.get_running_loop().remove_reader(self._pipe.fileno())
            if self._process is not None and self._process.exitcode not in (None, 0):
                log.error("deliveries: the worker process ended (%s); grants wait", self._process.exitcode)
            return
        if kind == READY:
            self._ready.set()
            return
        if self._notify is not None:
            task = asyncio.get_running_loop().create_task(self._notify(kind, payload))
            self._alerts.add(task)
            task.add_done_callback(self._alerts.discard)

    async def ready(self, within_s: float = STOP_WITHIN_S) -> bool:
        """Wait until the child has started its worker (its imports and its database take a moment);
        False when it did not within `within_s`."""
        try:
            await asyncio.wait_for(self._ready.wait(), within_s)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        process, pipe, self._process, self._pipe = self._process, self._pipe, None, None
        if process is None or pipe is None:
            return
        with contextlib.suppress(OSError, ValueError):
            asyncio.get_running_loop().remove_reader(pipe.fileno())
            pipe.send(None)  # stop
        await asyncio.to_thread(process.join, STOP_WITHIN_S)
        if process.is_alive():  # stuck: its leases expire and another process takes them over
            process.terminate()
            await asyncio.to_thread(process.join, STOP_WITHIN_S)
        pipe.close()
        if self._alerts:
            await asyncio.gather(*self._alerts, return_exceptions=True)


def run_child(settings: Any, pipe: Connection, log_setup: Callable[[], object] | None = None) -> None:
    """The child process's body (`ChildDeliveries`). `log_setup` (picklable: the parent's own logging
    set-up, `ARCA_LOG_FORMAT` and secret redaction included) installs the child's logging; this package
    sits below the observability layer, so the process that starts the child hands it down."""
    # Ctrl-C in a terminal reaches the whole process group: the parent stops the child through the
    # pipe, after what came back is recorded, instead of the child dying mid-flush.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if log_setup is not None:
        log_setup()
    else:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(_child(settings, pipe))


async def _child(settings: Any, pipe: Connection) -> None:
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    loop.add_reader(pipe.fileno(), stopping.set)  # a message or the parent's end

    async def notify(kind: str, payload: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # the parent is gone: the dead letters stay listed
            pipe.send((kind, payload))

    store = Store(settings.database_url, fast_paths=False)
    poster = GrantPoster.from_settings(settings)
    try:
        await store.open()
        worker = DeliveryWorker(
            store, poster, DeliveryCaps.from_settings(settings), on_dead=DeadLetterAlert(store, notify)
        )
        worker.start()
        log.info("deliveries: the worker process %s posts to the game", os.getpid())
        pipe.send((READY, {}))
        await stopping.wait()
        await worker.stop()
    except Exception:
        log.exception("deliveries: the worker stopped; grants wait for the next start or a drain")
    finally:
        loop.remove_reader(pipe.fileno())
        await poster.aclose()
        await store.close()


def deliveries_for(
    settings: Any,
    store: Store,
    notify: Notify | None = None,
    log_setup: Callable[[], object] | None = None,
) -> ChildDeliveries | None:
    """The deliveries of a long-running process with these settings (not started), or None when coupons
    are not delivered into the game. `store` is the process's (the worker opens its own on the same URL)."""
    if settings.coupon_delivery != "game":
        return None
    return ChildDeliveries(settings, notify, log_setup)


def drain_worker(settings: Any, store: Store, notify: Notify | None = None) -> ProcessDeliveries:
    """Deliveries to the configured game backend on the caller's loop, whatever `ARCA_COUPON_DELIVERY`
    says now (jobs queued while it was `game` are still delivered by `arca-bot deliveries drain`)."""
    poster = GrantPoster.from_settings(settings)
    alert = DeadLetterAlert(store, notify) if notify is not None else None
    worker = DeliveryWorker(store, poster, DeliveryCaps.from_settings(settings), on_dead=alert)
    return ProcessDeliveries(worker, poster)
