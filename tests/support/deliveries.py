"""The delivery tests' parts: a store that queues grants (`ARCA_COUPON_DELIVERY=game`) with the tool
tests' players and orders, a worker posting to the reference backend with quick retries, and what the
outbox holds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from bot.game.delivery import DeliveryCaps, DeliveryWorker, GrantPoster, RetryPolicy
from bot.store import Store
from bot.store.game_deliveries import GameDelivery
from tests.support.game_backend import GameBackend

QUICK = RetryPolicy(max_attempts=6, first_s=0.02, max_s=0.2)
"""Retries in tens of milliseconds (the backoff's shape is tested on its own)."""


async def open_store(url: str, *, game: bool = True) -> Store:
    store = Store(url, game_delivery=game)
    await store.open()
    return store


def worker_for(
    store: Store,
    backend: GameBackend,
    *,
    timeout_s: float = 2.0,
    concurrency: int = 8,
    on_dead: Any = None,
    **caps: Any,
) -> tuple[DeliveryWorker, GrantPoster]:
    poster = GrantPoster(backend.url, backend.token, timeout_s=timeout_s, max_connections=concurrency)
    caps.setdefault("retry", QUICK)
    caps.setdefault("poll_s", 0.1)
    caps.setdefault("lease", timedelta(seconds=30))
    return DeliveryWorker(
        store, poster, DeliveryCaps(concurrency=concurrency, **caps), on_dead=on_dead
    ), poster


async def drain(store: Store, backend: GameBackend, **options: Any) -> Any:
    worker, poster = worker_for(store, backend, **options)
    try:
        return await worker.deliver_all()
    finally:
        await poster.aclose()


async def jobs(store: Store) -> list[dict[str, Any]]:
    async with store.session() as s:
        rows = await s.execute(select(GameDelivery).order_by(GameDelivery.id))
        return [
            {
                c: getattr(r, c)
                for c in ("grant_id", "kind", "state", "attempts", "last_error", "next_attempt_at")
            }
            for r in rows.scalars()
        ]


def effective(backend: GameBackend) -> dict[str, str]:
    """grant_id → status of every grant the game holds."""
    return {g["grant_id"]: g["status"] for g in backend.grants()["grants"]}


def json_logs_to(path: str) -> None:
    """A delivery child's logging set-up for tests (picklable through `functools.partial`): the bot's
    own JSON logging, into a file the test reads."""
    from bot.observability import configure_logging

    configure_logging(fmt="json", stream=open(path, "a", encoding="utf-8"))
