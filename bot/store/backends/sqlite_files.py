"""The store's SQLite file as every connection of the direct path opens it: the same pragmas and lock
wait as the Store's own (SQLAlchemy) connections, and one transaction helper for every unit."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

LOCK_WAIT_S = 30.0
"""As long as the Store's own connections wait for the write lock (`busy_timeout`)."""

PRAGMAS = ("synchronous=NORMAL", "foreign_keys=ON", "wal_autocheckpoint=0")
"""WAL with `synchronous=NORMAL`: a commit appends to the WAL without an fsync (the WAL is synced at each
checkpoint), so a commit costs ≈0.03 ms instead of the disk's sync (milliseconds: `FULL` syncs every
commit). A crash of the bot loses nothing committed; a power loss or OS crash may roll back the last
transactions before the checkpoint, never corrupts the file, and rolls each one back whole (a coupon, its
audit row and anything else written in its transaction go together). Same as the Store's own connections
(`bot.store.database`)."""


def locked(exc: sqlite3.OperationalError) -> bool:
    """The error says another connection holds the lock (not a real failure: wait or hand over)."""
    text = str(exc)
    return "locked" in text or "busy" in text


def connect(path: Path, *, lock_wait_s: float) -> sqlite3.Connection:
    """A connection to the file in autocommit mode (units BEGIN themselves), usable from any one thread at
    a time, waiting at most `lock_wait_s` for another connection's lock."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=lock_wait_s)
    for pragma in PRAGMAS:
        conn.execute(f"PRAGMA {pragma}")
    return conn


def transaction(conn: sqlite3.Connection, begin: str | None, unit: Callable[[sqlite3.Connection], T]) -> T:
    """`unit(conn)` between `begin` (None: no BEGIN, one statement is consistent by itself) and COMMIT,
    rolled back when anything raises. BEGIN is inside the rollback guard: an exception raised right after
    it (a signal, a timeout) must not leave a shared connection inside a transaction."""
    try:
        if begin is not None:
            conn.execute(begin)
        out = unit(conn)
        if conn.in_transaction:
            conn.execute("COMMIT")
        return out
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
