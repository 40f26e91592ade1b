"""A delivery worker process that stops dead at a chosen moment, for the kill -9 test.

`python -m tests.support.delivery_worker DB_URL GAME_URL TOKEN MOMENT MARKER`: leases and posts like
`arca-bot deliveries drain`, but at MOMENT it creates the file MARKER and hangs (until the test kills
it with SIGKILL):
- `before`: jobs leased, nothing posted yet;
- `during`: posts on the wire (the test makes the backend slow), none answered;
- `after`:  the game answered a post, the worker has not recorded it.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

from bot.game.delivery import DeliveryCaps, DeliveryWorker, GrantPoster, PostResult, RetryPolicy
from bot.store import Store
from bot.store.game_deliveries import DeliveryJob


class StopsDead:
    def __init__(self, poster: GrantPoster, moment: str, marker: Path) -> None:
        self._poster, self._moment, self._marker = poster, moment, marker

    async def _hang(self) -> None:
        self._marker.touch()
        await asyncio.Event().wait()

    async def send(self, job: DeliveryJob) -> PostResult:
        if self._moment == "before":
            await self._hang()
        if self._moment == "during":
            self._marker.touch()
        sent = await self._poster.send(job)
        if self._moment == "after":
            await self._hang()
        return sent


async def main(url: str, game_url: str, token: str, moment: str, marker: Path) -> None:
    store = Store(url, game_delivery=True)
    await store.open()
    poster = GrantPoster(game_url, token, timeout_s=30)
    caps = DeliveryCaps(concurrency=8, lease=timedelta(seconds=2), retry=RetryPolicy(first_s=0.05, max_s=0.5))
    try:
        await DeliveryWorker(store, StopsDead(poster, moment, marker), caps).deliver_all()
    finally:
        await poster.aclose()
        await store.close()


if __name__ == "__main__":
    db, game, token, moment, marker = sys.argv[1:6]
    asyncio.run(main(db, game, token, moment, Path(marker)))
