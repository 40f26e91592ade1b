"""Short PostgreSQL transactions on plain asyncpg connections, for the coupon ledger's hot path.

Through the SQLAlchemy engine one issuance costs eight round trips: the pool's pre-ping alone is
three (BEGIN, `;`, ROLLBACK, for pgbouncer), then BEGIN, the lock, the facts, the insert and COMMIT.
Here a small asyncpg pool of its own hands out connections without a ping and without a reset query
(nothing on this path changes session state; an unfinished transaction is still rolled back on
release), so an issuance is BEGIN, lock, facts, insert, COMMIT. A connection that died is dropped by
the pool, and the statement that found it fails like any database error (the tool answers ERROR;
nothing was written).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.engine import make_url

POOL_SIZE = 10
"""At most this many connections (the engine's own pool_size); opened on demand, closed after idling."""

IDLE_CLOSE_S = 300.0
CLOSE_WAIT_S = 10.0


async def _no_reset(_conn: Any) -> None:
    """Release without the default reset query: this path sets no session state to undo."""


def asyncpg_dsn(url: str) -> str:
    """The libpq-style DSN asyncpg takes for an SQLAlchemy `postgresql+asyncpg://` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class DirectPostgres:
    """An asyncpg pool next to the Store's engine, on the same database."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    async def open(cls, url: str) -> DirectPostgres:
        import asyncpg

        pool = await asyncpg.create_pool(
            asyncpg_dsn(url),
            min_size=0,
            max_size=POOL_SIZE,
            max_inactive_connection_lifetime=IDLE_CLOSE_S,
            reset=_no_reset,
        )
        return cls(pool)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        """A pooled connection inside `BEGIN … COMMIT` (rolled back when the block raises)."""
        async with self._pool.acquire() as conn, conn.transaction():
            yield conn

    async def close(self) -> None:
        """Wait briefly for connections in use to come back, then drop whatever is still out."""
        try:
            await asyncio.wait_for(self._pool.close(), CLOSE_WAIT_S)
        except TimeoutError:
            self._pool.terminate()
