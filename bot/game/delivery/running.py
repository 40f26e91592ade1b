"""A process's deliveries, built from the settings: the poster (one HTTP client), the worker with the
configured caps and the dead-letter alert. Every long-running process (`run`, `start`, `web`) starts
one when `ARCA_COUPON_DELIVERY=game`; `replay` never does."""

from __future__ import annotations

from typing import Any

from bot.game.delivery.alerts import DeadLetterAlert, Notify
from bot.game.delivery.poster import GrantPoster
from bot.game.delivery.worker import DeliveryCaps, DeliveryWorker
from bot.store import Backlog, Store


class ProcessDeliveries:
    """The worker and the HTTP client it owns: `start()`, then `await stop()` (or `await deliver_all()`)."""

    def __init__(self, worker: DeliveryWorker, poster: GrantPoster) -> None:
        self.worker = worker
        self._poster = poster

    def start(self) -> None:
        self.worker.start()

    async def stop(self) -> None:
        try:
            await self.worker.stop()
        finally:
            await self._poster.aclose()

    async def deliver_all(self) -> Backlog:
        try:
            return await self.worker.deliver_all()
        finally:
            await self._poster.aclose()


def deliveries_for(settings: Any, store: Store, notify: Notify | None = None) -> ProcessDeliveries | None:
    """The deliveries of a process with these settings, or None when coupons are not delivered."""
    if settings.coupon_delivery != "game":
        return None
    return drain_worker(settings, store, notify)


def drain_worker(settings: Any, store: Store, notify: Notify | None = None) -> ProcessDeliveries:
    """Deliveries to the configured game backend, whatever `ARCA_COUPON_DELIVERY` says now (jobs queued
    while it was `game` are still delivered by `arca-bot deliveries drain`)."""
    poster = GrantPoster.from_settings(settings)
    alert = DeadLetterAlert(store, notify) if notify is not None else None
    worker = DeliveryWorker(store, poster, DeliveryCaps.from_settings(settings), on_dead=alert)
    return ProcessDeliveries(worker, poster)
