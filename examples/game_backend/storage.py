"""The reference backend's data: players, orders and grants in one SQLite file (stdlib `sqlite3`).

One connection behind a lock: the backend is one process and every statement is short, so this is the
simplest thing that is correct under the server's thread pool. A studio would use its own database.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS players (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, locale TEXT NOT NULL DEFAULT 'ko');
CREATE TABLE IF NOT EXISTS orders (
  id TEXT PRIMARY KEY, player_id TEXT NOT NULL, status TEXT NOT NULL, item TEXT NOT NULL,
  amount INTEGER NOT NULL, currency TEXT NOT NULL DEFAULT 'KRW',
  ordered_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS orders_by_player ON orders (player_id, ordered_at);
CREATE INDEX IF NOT EXISTS orders_by_status ON orders (status, updated_at, id);
CREATE TABLE IF NOT EXISTS grants (
  grant_id TEXT PRIMARY KEY, player_id TEXT NOT NULL, order_id TEXT, code TEXT NOT NULL,
  amount INTEGER NOT NULL, currency TEXT NOT NULL, reason TEXT, expires_at TEXT,
  status TEXT NOT NULL, granted_at TEXT NOT NULL, revoked_at TEXT);
CREATE TABLE IF NOT EXISTS grant_posts (
  grant_id TEXT NOT NULL, kind TEXT NOT NULL, answered TEXT NOT NULL, at TEXT NOT NULL);
"""
ORDER_FIELDS = ("id", "player_id", "status", "item", "amount", "currency", "ordered_at", "updated_at")
GRANT_FIELDS = ("grant_id", "player_id", "order_id", "code", "amount", "currency", "reason", "expires_at")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class GameStore:
    """Players, orders and grants. `grant` is idempotent by `grant_id`: the game applies a grant once."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, no fsync per grant
        self._db.executescript(SCHEMA)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- orders and players --------------------------------------------------------------------------

    def upsert_player(self, player: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO players (id, name, locale) VALUES (:id, :name, :locale) ON CONFLICT (id) "
                "DO UPDATE SET name = excluded.name, locale = excluded.locale",
                {"locale": "ko", **player},
            )

    def upsert_orders(self, orders: list[dict[str, Any]]) -> None:
        rows = [{"currency": "KRW", "updated_at": o.get("updated_at") or now_iso(), **o} for o in orders]
        with self._tx() as db:
            db.executemany(
                f"INSERT INTO orders ({', '.join(ORDER_FIELDS)}) VALUES ({', '.join(':' + f for f in ORDER_FIELDS)}) "
                "ON CONFLICT (id) DO UPDATE SET player_id = excluded.player_id, status = excluded.status, "
                "item = excluded.item, amount = excluded.amount, currency = excluded.currency, "
                "ordered_at = excluded.ordered_at, updated_at = excluded.updated_at",
                rows,
            )

    def order(self, order_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        return None if row is None else dict(row)

    def player_orders(self, player_id: str, limit: int) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM orders WHERE player_id = ? ORDER BY ordered_at DESC, id DESC LIMIT ?",
                (player_id, limit),
            ).fetchall()
        return [dict(r) for r in rows]

    def search_orders(
        self, *, status: str | None, after: str | None, before: str | None, cursor: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Orders by id, `limit` a page; the cursor is the last id of the previous page."""
        where, params = ["1 = 1"], []
        for clause, value in (
            ("status = ?", status),
            ("updated_at > ?", after),
            ("updated_at < ?", before),
            ("id > ?", cursor),
        ):
            if value is not None:
                where.append(clause)
                params.append(value)
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM orders WHERE {' AND '.join(where)} ORDER BY id LIMIT ?", (*params, limit + 1)
            ).fetchall()
        page = [dict(r) for r in rows[:limit]]
        return page, (page[-1]["id"] if len(rows) > limit else None)

    # -- grants --------------------------------------------------------------------------------------

    def grant(self, body: dict[str, Any]) -> bool:
        """Apply a grant; False when `grant_id` was already granted (nothing changes then)."""
        with self._tx() as db:
            done = db.execute("SELECT 1 FROM grants WHERE grant_id = ?", (body["grant_id"],)).fetchone()
            if done is None:
                db.execute(
                    f"INSERT INTO grants ({', '.join(GRANT_FIELDS)}, status, granted_at) VALUES "
                    f"({', '.join(':' + f for f in GRANT_FIELDS)}, 'granted', :at)",
                    {**{f: body.get(f) for f in GRANT_FIELDS}, "at": now_iso()},
                )
            db.execute(
                "INSERT INTO grant_posts VALUES (?, 'grant', ?, ?)",
                (body["grant_id"], "granted" if done is None else "repeat", now_iso()),
            )
        return done is None

    def revoke(self, grant_id: str) -> bool | None:
        """Revoke a grant: True when revoked now, False when it already was, None when unknown."""
        with self._tx() as db:
            row = db.execute("SELECT status FROM grants WHERE grant_id = ?", (grant_id,)).fetchone()
            if row is None:
                return None
            db.execute(
                "INSERT INTO grant_posts VALUES (?, 'revoke', ?, ?)", (grant_id, row["status"], now_iso())
            )
            if row["status"] == "revoked":
                return False
            db.execute(
                "UPDATE grants SET status = 'revoked', revoked_at = ? WHERE grant_id = ?",
                (now_iso(), grant_id),
            )
            return True

    def grants(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM grants ORDER BY granted_at, grant_id").fetchall()
        return [dict(r) for r in rows]

    def posts(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM grant_posts ORDER BY rowid").fetchall()
        return [dict(r) for r in rows]

    def reset(self) -> None:
        with self._tx() as db:
            for table in ("grant_posts", "grants", "orders", "players"):
                db.execute(f"DELETE FROM {table}")
