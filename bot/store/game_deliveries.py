"""The outbox of grants into the game (DESIGN.md §11.2): table `game_deliveries`, one job per coupon
granted (`kind` `grant`) and per granted coupon revoked (`revoke`), written in the same transaction as
the ledger row, and the statements of the worker that posts them (lease, record, retry, list).

A job's `grant_id` is the coupon's code: unique in the ledger, never changed, so every attempt of one
coupon — after a retry, a crash, a second process — carries the same `Idempotency-Key` and the game
applies it once. A job is leased (PostgreSQL `FOR UPDATE SKIP LOCKED`; SQLite one conditional UPDATE
under the file's write lock) before it is posted; a lease left by a process that died expires and is
taken over. A revoke waits until its grant is delivered (the game cannot revoke what it never got).
The table arrives with schema version 9 (`models.UPGRADABLE_FROM`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
    bindparam,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.backends.engine import begin_immediate
from bot.store.models import Base, UTCDateTime, utcnow
from bot.store.units import UnitRunner

STATES = ("pending", "delivered", "dead")
KINDS = ("grant", "revoke")
CURRENCY = "KRW"
"""Coupons are amounts in KRW (the ledger keeps no currency of its own)."""
ERROR_CHARS = 500
"""The backend's reason is kept up to this long (it is shown to staff, escaped)."""


class GameDelivery(Base):
    """One grant or revoke to post to the game, until the game confirmed it (or refused it: `dead`)."""

    __tablename__ = "game_deliveries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    grant_id: Mapped[str] = mapped_column(String(64))
    """The `Idempotency-Key` of every attempt: the coupon's code."""
    kind: Mapped[str] = mapped_column(String(8))
    """`grant` or `revoke`."""
    coupon_code: Mapped[str] = mapped_column(String(32), index=True)
    player_id: Mapped[str] = mapped_column(String(32))
    order_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    amount: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3), default=CURRENCY)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    state: Mapped[str] = mapped_column(String(12), default="pending")
    """`pending` (to post, or being posted), `delivered` (the game confirmed), `dead` (refused)."""
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    """Posts started (counted when a lease is taken, so a post cut by a crash counts too)."""
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The last failure: the backend's reason for a refusal, or what went wrong on the wire."""
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    dead_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (
        UniqueConstraint("grant_id", "kind", name="uq_game_deliveries_grant_kind"),
        Index("ix_game_deliveries_due", "state", "next_attempt_at"),
    )


_D = GameDelivery.__table__
JOB_COLUMNS = (
    "grant_id",
    "kind",
    "coupon_code",
    "player_id",
    "order_id",
    "amount",
    "currency",
    "reason",
    "expires_at",
    "state",
    "attempts",
    "next_attempt_at",
    "created_at",
)


def grant_id_of(code: str) -> str:
    """The grant id of a coupon: its code (unique in the ledger, stable from issue to revoke)."""
    return code


def grant_job(coupon: Mapping[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The `grant` job of an issued coupon (a row of `coupons`, as a mapping), ready to insert."""
    at = now or coupon.get("created_at") or utcnow()
    return {
        "grant_id": grant_id_of(coupon["code"]),
        "kind": "grant",
        "coupon_code": coupon["code"],
        "player_id": coupon["player_id"],
        "order_id": coupon.get("order_id"),
        "amount": coupon["amount"],
        "currency": CURRENCY,
        "reason": coupon.get("reason"),
        "expires_at": coupon.get("expires_at"),
        "state": "pending",
        "attempts": 0,
        "next_attempt_at": at,
        "created_at": at,
    }


@dataclass(frozen=True, slots=True)
class DeliveryJob:
    """A leased job, as the worker posts it."""

    id: int
    grant_id: str
    kind: str
    coupon_code: str
    player_id: str
    order_id: str | None
    amount: int
    currency: str
    reason: str | None
    expires_at: datetime | None
    attempts: int

    def body(self) -> dict[str, Any]:
        """The body of `POST {base}/grants` (DESIGN.md §11.2)."""
        return {
            "grant_id": self.grant_id,
            "player_id": self.player_id,
            "order_id": self.order_id,
            "code": self.coupon_code,
            "amount": self.amount,
            "currency": self.currency,
            "reason": self.reason,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
        }


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """A job as staff and `arca-bot deliveries list` see it."""

    grant_id: str
    kind: str
    coupon_code: str
    order_id: str | None
    player_id: str
    amount: int
    state: str
    attempts: int
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None
    next_attempt_at: datetime

    def as_json(self) -> dict[str, Any]:
        """The fields of `deliveries list --json` (DESIGN.md §11.5)."""
        return {
            "grant_id": self.grant_id,
            "kind": self.kind,
            "order_id": self.order_id,
            "player_id": self.player_id,
            "state": self.state,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one post ended in: `delivered`, `retry` (at `next_at`) or `dead`; `error` says why."""

    job_id: int
    result: str
    error: str | None = None
    next_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Backlog:
    """What is left to deliver: jobs that can be posted (now or after their backoff), jobs waiting on
    a grant that is dead, dead letters, and when the next pending job is due."""

    pending: int
    blocked: int
    dead: int
    next_due: datetime | None


def _grant_delivered(job: Any) -> Any:
    g = _D.alias("g")
    return exists().where(g.c.grant_id == job.c.grant_id, g.c.kind == "grant", g.c.state == "delivered")


def _grant_dead(job: Any) -> Any:
    g = _D.alias("g")
    return exists().where(g.c.grant_id == job.c.grant_id, g.c.kind == "grant", g.c.state == "dead")


def _leasable(job: Any, now: Any) -> Any:
    return and_(
        job.c.state == "pending",
        job.c.next_attempt_at <= now,
        or_(job.c.lease_until.is_(None), job.c.lease_until < now),
        or_(job.c.kind == "grant", _grant_delivered(job)),
    )


_JOB_FIELDS = [c for c in _D.c if c.name in DeliveryJob.__slots__]
_VIEW_FIELDS = [c for c in _D.c if c.name in DeliveryView.__slots__]

_DELIVERED = (
    update(_D)
    .where(_D.c.id == bindparam("job_id"), _D.c.state == "pending")
    .values(
        state="delivered",
        delivered_at=bindparam("at"),
        last_error=None,
        lease_owner=None,
        lease_until=None,
    )
)
"""Delivered is a fact whoever holds the lease (a taken-over lease posts the same key again)."""
_RETRY = (
    update(_D)
    .where(_D.c.id == bindparam("job_id"), _D.c.state == "pending", _D.c.lease_owner == bindparam("owner"))
    .values(
        next_attempt_at=bindparam("next_at"),
        last_error=bindparam("error"),
        lease_owner=None,
        lease_until=None,
    )
)
_DEAD = (
    update(_D)
    .where(_D.c.id == bindparam("job_id"), _D.c.state == "pending", _D.c.lease_owner == bindparam("owner"))
    .values(
        state="dead",
        dead_at=bindparam("at"),
        last_error=bindparam("error"),
        lease_owner=None,
        lease_until=None,
    )
)


class GameDeliveries:
    """`store.game_deliveries`: whether issuances write jobs (`enabled`, from `ARCA_COUPON_DELIVERY`),
    the job rows the ledger writes in its own transactions, and the worker's statements."""

    def __init__(self, store: UnitRunner, *, enabled: bool = False) -> None:
        self._store = store
        self.enabled = enabled
        """True with `ARCA_COUPON_DELIVERY=game`: each coupon issued writes its grant job."""

    # -- written by the ledger, inside its transactions ----------------------------------------------

    async def add_grant(self, session: AsyncSession, coupon: Any, now: datetime) -> None:
        """The grant job of `coupon` (an ORM `Coupon` just activated), in the caller's transaction."""
        if not self.enabled:
            return
        row = {c: getattr(coupon, c) for c in ("code", "player_id", "order_id", "amount", "reason")}
        row["expires_at"] = coupon.expires_at
        await session.execute(insert(_D), [grant_job(row, now)])

    async def add_revoke(self, session: AsyncSession, code: str, now: datetime) -> None:
        """The revoke job of the coupon `code`, in the caller's transaction — only when its grant was
        queued (a coupon issued while delivery was `none` never reached the game: nothing to revoke).
        Written whatever `enabled` says now, so a grant delivered earlier is still taken back."""
        g = _D.alias("g")
        columns = [
            c for c in JOB_COLUMNS if c not in ("kind", "state", "attempts", "next_attempt_at", "created_at")
        ]
        source = select(
            *[g.c[c] for c in columns],
            literal("revoke").label("kind"),
            literal("pending").label("state"),
            literal(0).label("attempts"),
            literal(now, UTCDateTime()).label("next_attempt_at"),
            literal(now, UTCDateTime()).label("created_at"),
        ).where(
            g.c.grant_id == grant_id_of(code),
            g.c.kind == "grant",
            ~exists().where(_D.c.grant_id == grant_id_of(code), _D.c.kind == "revoke"),
        )
        names = [*columns, "kind", "state", "attempts", "next_attempt_at", "created_at"]
        await session.execute(insert(_D).from_select(names, source))

    # -- the worker ----------------------------------------------------------------------------------

    async def lease(self, owner: str, *, now: datetime, lease: timedelta, limit: int) -> list[DeliveryJob]:
        """Take up to `limit` due jobs for `owner` until `now + lease` (their attempts counted)."""
        pick_from = _D.alias("p")
        pick = (
            select(pick_from.c.id)
            .where(_leasable(pick_from, now))
            # The due index's own order (state, next_attempt_at, then the row id): the earliest due first,
            # read off the index and stopped at `limit`, instead of every pending row sorted by id.
            .order_by(pick_from.c.next_attempt_at, pick_from.c.id)
            .limit(limit)
        )
        taking = update(_D).values(lease_owner=owner, lease_until=now + lease, attempts=_D.c.attempts + 1)
        still_free = and_(_D.c.state == "pending", or_(_D.c.lease_until.is_(None), _D.c.lease_until < now))
        async with self._store.session() as session:
            # An idle outbox is the common case: a read finds that without taking the write lock.
            if (await session.execute(pick.limit(1))).first() is None:
                return []
        async with self._store.session() as session, session.begin():
            if session.bind.dialect.name == "postgresql":
                # The ids first, locked (rows another worker holds are skipped), then the UPDATE: inside
                # `UPDATE … WHERE id IN (SELECT … LIMIT n FOR UPDATE)` PostgreSQL may run the subquery
                # again per row and take more than n.
                ids = list((await session.execute(pick.with_for_update(skip_locked=True))).scalars())
                if not ids:
                    return []
                taken = taking.where(_D.c.id.in_(ids), still_free)
            else:
                # The file's write lock first, so the rows picked stay free until the UPDATE; then the
                # UPDATE by row id alone. (With the state test in it, SQLite walks every pending row of
                # the due index to match the ids: milliseconds per lease in a 10,000-grant wave.)
                await begin_immediate(await session.connection())
                ids = list((await session.execute(pick)).scalars())
                if not ids:
                    return []
                taken = taking.where(_D.c.id.in_(ids))
            rows = (await session.execute(taken.returning(*_JOB_FIELDS))).all()
        return sorted((DeliveryJob(**row._mapping) for row in rows), key=lambda j: j.id)

    async def record(self, owner: str, outcomes: Sequence[Outcome], *, now: datetime) -> None:
        """The outcomes of posts, in one transaction (a lease taken over meanwhile keeps its job,
        except that delivered is recorded whoever holds it)."""
        by: dict[str, list[dict[str, Any]]] = {"delivered": [], "retry": [], "dead": []}
        for o in outcomes:
            error = o.error[:ERROR_CHARS] if o.error else None
            by[o.result].append(
                {"job_id": o.job_id, "owner": owner, "at": now, "error": error, "next_at": o.next_at or now}
            )
        async with self._store.session() as session, session.begin():
            for statement, rows in (
                (_DELIVERED, by["delivered"]),
                (_RETRY, by["retry"]),
                (_DEAD, by["dead"]),
            ):
                if rows:
                    await session.execute(statement, rows)

    async def release(self, owner: str, job_ids: Iterable[int]) -> None:
        """Give back leases of jobs never posted (a stopping worker), so another process takes them at once."""
        ids = list(job_ids)
        if not ids:
            return
        async with self._store.session() as session, session.begin():
            await session.execute(
                update(_D)
                .where(_D.c.id.in_(ids), _D.c.lease_owner == owner, _D.c.state == "pending")
                .values(lease_owner=None, lease_until=None, attempts=_D.c.attempts - 1)
            )

    async def backlog(self, *, now: datetime) -> Backlog:
        """What is left: pending jobs that can be posted, revokes blocked by a dead grant, dead letters."""
        blocked = and_(_D.c.state == "pending", _D.c.kind == "revoke", _grant_dead(_D))
        async with self._store.session() as session:
            dead = (await session.execute(select(func.count()).where(_D.c.state == "dead"))).scalar_one()
            stuck = (await session.execute(select(func.count()).where(blocked))).scalar_one()
            pending = (
                await session.execute(
                    select(func.count(), func.min(_D.c.next_attempt_at)).where(
                        _D.c.state == "pending", ~blocked
                    )
                )
            ).one()
        return Backlog(int(pending[0]), int(stuck), int(dead), pending[1])

    # -- staff -----------------------------------------------------------------------------------------

    async def retry(self, grant_id: str, *, now: datetime | None = None) -> int:
        """Dead letters of `grant_id` back to pending, due now (attempts start again); how many."""
        async with self._store.session() as session, session.begin():
            result = await session.execute(
                update(_D)
                .where(_D.c.grant_id == grant_id.strip(), _D.c.state == "dead")
                .values(state="pending", attempts=0, next_attempt_at=now or utcnow(), dead_at=None)
            )
            return int(result.rowcount or 0)

    async def list(
        self, *, state: str | None = None, codes: Iterable[str] | None = None, limit: int = 200
    ) -> list[DeliveryView]:
        """Jobs newest first; only those in `state`, or of the coupons `codes`, when given."""
        query = select(*_VIEW_FIELDS).order_by(_D.c.id.desc()).limit(limit)
        if state is not None:
            query = query.where(_D.c.state == state)
        if codes is not None:
            query = query.where(_D.c.coupon_code.in_(list(codes) or [""]))
        async with self._store.session() as session:
            rows = (await session.execute(query)).all()
        return [DeliveryView(**row._mapping) for row in rows]

    async def counts(self) -> dict[str, int]:
        """How many jobs are in each state."""
        async with self._store.session() as session:
            rows = (await session.execute(select(_D.c.state, func.count()).group_by(_D.c.state))).all()
        found = {state: int(n) for state, n in rows}
        return {state: found.get(state, 0) for state in STATES}

    async def grant_states(self, codes: Iterable[str]) -> dict[str, str]:
        """The state of each coupon's grant job (coupons without one are absent)."""
        wanted = list(dict.fromkeys(codes))
        if not wanted:
            return {}
        query = select(_D.c.coupon_code, _D.c.state).where(_D.c.kind == "grant", _D.c.coupon_code.in_(wanted))
        async with self._store.session() as session:
            return {code: state for code, state in (await session.execute(query)).all()}
