"""A process that runs one incident's approved bulk grant (the kill -9 and two-process tests start it).

`python -m tests.scale.incident_worker DB_URL INCIDENT_ID [BATCH] [PAUSE_S]`: prints `done ISSUED` at the end.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime

from bot.incidents import run_compensation
from bot.store import Store


async def main(url: str, incident_id: int, batch: int, pause: float) -> None:
    store = Store(url)
    await store.open()

    async def slowly(_step: object) -> None:
        await asyncio.sleep(pause)  # gives the test time to kill this process mid-run

    try:
        result = await run_compensation(
            store,
            incident_id,
            actor="staff:worker",
            clock=lambda: datetime.now(UTC),
            batch_size=batch,
            progress=slowly if pause else None,
        )
    finally:
        await store.close()
    print(f"done {result.issued}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(
        main(
            args[0],
            int(args[1]),
            int(args[2]) if len(args) > 2 else 250,
            float(args[3]) if len(args) > 3 else 0.0,
        )
    )
