"""A process's deliveries, built from the settings: the poster (one HTTP client), the worker with the
configured caps and the dead-letter alert. Every long-running process (`run`, `start`, `web`) starts
one when `ARCA_COUPON_DELIVERY=game` (`deliveries_for`), on a thread of its own with its own event loop
and its own connection to the database, so a 10,000-grant wave's HTTP work never runs between the live
conversations' steps on the process's main loop; `replay` never starts one. `arca-bot deliveries drain`
runs the worker on its own loop (`drain_worker`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import Any

from bot.game.delivery.alerts import DeadLetterAlert, Notify
from bot.game.delivery.poster import GrantPoster
from bot.game.delivery.worker import DeliveryCaps, DeliveryWorker
from bot.store import Backlog, Store

log = logging.getLogger(__name__)

STOP_WITHIN_S = 30.0


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


class ThreadedDeliveries:
    """The worker on its own thread and loop: `start()` (on the main loop), then `await stop()`. Dead
    letters are announced through `notify` on the main loop (where the staff channel lives)."""

    def __init__(self, settings: Any, notify: Notify | None = None) -> None:
        self._settings = settings
        self._notify = notify
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self.worker: DeliveryWorker | None = None

    def start(self) -> None:
        main = asyncio.get_running_loop()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._run(main)), name="arca-deliveries", daemon=True
        )
        self._thread.start()

    async def _forward(self, main: asyncio.AbstractEventLoop, kind: str, payload: dict[str, Any]) -> None:
        if self._notify is not None:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._notify(kind, payload), main))

    async def _run(self, main: asyncio.AbstractEventLoop) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        # Its own engine (no fast paths: the worker's statements go through SQLAlchemy sessions).
        store = Store(self._settings.database_url, fast_paths=False)
        poster = GrantPoster.from_settings(self._settings)
        try:
            await store.open()
            alert = DeadLetterAlert(store, lambda kind, payload: self._forward(main, kind, payload))
            self.worker = DeliveryWorker(
                store, poster, DeliveryCaps.from_settings(self._settings), on_dead=alert
            )
            self.worker.start()
            self._ready.set()
            await self._stopping.wait()
            await self.worker.stop()
        except Exception:
            log.exception("deliveries: the worker stopped; grants wait for the next start or a drain")
        finally:
            self._ready.set()
            await poster.aclose()
            await store.close()

    async def stop(self) -> None:
        if self._thread is None:
            return
        await asyncio.to_thread(self._ready.wait, STOP_WITHIN_S)
        if self._loop is not None and self._stopping is not None:
            with contextlib.suppress(RuntimeError):  # its loop already ended
                self._loop.call_soon_threadsafe(self._stopping.set)
        await asyncio.to_thread(self._thread.join, STOP_WITHIN_S)
        self._thread = None


def deliveries_for(settings: Any, store: Store, notify: Notify | None = None) -> ThreadedDeliveries | None:
    """The deliveries of a long-running process with these settings (not started), or None when coupons
    are not delivered into the game. `store` is the process's (the worker opens its own on the same URL)."""
    if settings.coupon_delivery != "game":
        return None
    return ThreadedDeliveries(settings, notify)


def drain_worker(settings: Any, store: Store, notify: Notify | None = None) -> ProcessDeliveries:
    """Deliveries to the configured game backend on the caller's loop, whatever `ARCA_COUPON_DELIVERY`
    says now (jobs queued while it was `game` are still delivered by `arca-bot deliveries drain`)."""
    poster = GrantPoster.from_settings(settings)
    alert = DeadLetterAlert(store, notify) if notify is not None else None
    worker = DeliveryWorker(store, poster, DeliveryCaps.from_settings(settings), on_dead=alert)
    return ProcessDeliveries(worker, poster)
