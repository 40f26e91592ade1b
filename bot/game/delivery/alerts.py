"""One staff alert per burst of dead letters, not one per grant: the first dead letter of a window
(`WINDOW`) posts a notice (kind `delivery_dead`) through the staff notifications (the Discord staff
channel, the console); the others of that window only add to the count staff see in the console and in
`arca-bot deliveries list --state dead`. Across processes the window is claimed once (`desk_claims`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.store import Store, utcnow
from bot.store.desk_claims import claim
from bot.store.game_deliveries import DeliveryJob

log = logging.getLogger(__name__)

WINDOW = timedelta(minutes=15)
KIND = "delivery_dead"
SHOWN = 5
"""Grant ids named in one alert."""

Notify = Callable[[str, dict[str, Any]], Awaitable[None]]


class DeadLetterAlert:
    """`await alert(dead)`: the worker's `on_dead`."""

    def __init__(
        self,
        store: Store,
        notify: Notify,
        *,
        window: timedelta = WINDOW,
        clock: Callable[[], datetime] = utcnow,
        by: str = "deliveries",
    ) -> None:
        self._store, self._notify, self._window, self._clock, self._by = store, notify, window, clock, by

    def _window_key(self, now: datetime) -> str:
        start = int(now.astimezone(UTC).timestamp() // self._window.total_seconds())
        return f"deliveries:dead:{start}"

    async def __call__(self, dead: list[tuple[DeliveryJob, str]]) -> None:
        if not dead:
            return
        now = self._clock()
        if not await claim(self._store, self._window_key(now), by=self._by, now=now):
            return  # this burst was announced already (by this process or another)
        counts = await self._store.game_deliveries.counts()
        job, reason = dead[-1]
        await self._notify(
            KIND,
            {
                "new": len(dead),
                "dead_total": counts["dead"],
                "grant_ids": [j.grant_id for j, _r in dead[:SHOWN]],
                "last_error": reason,
                "example": {"grant_id": job.grant_id, "order_id": job.order_id, "player_id": job.player_id},
            },
        )
        log.warning("deliveries: %s dead letters (latest: %s)", counts["dead"], reason)
