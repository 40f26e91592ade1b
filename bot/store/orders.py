"""Orders' storage: the embedded orders table behind the builtin order source (and the mirror of the
orders the http source read fresh), one order with the coupon that holds its slot, a player's orders,
and the all-or-nothing import of an order file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.coupons import LIVE_STATUSES, CouponRow
from bot.store.models import Coupon, Order, Player, utcnow
from bot.store.units import Fetch, Unit, UnitRunner

_ORDER_AND_LIVE_COUPON = (
    select(
        Order.id,
        Order.player_id,
        Order.item,
        Order.amount,
        Order.status,
        Order.ordered_at,
        *(getattr(Coupon, c).label(f"coupon_{c}") for c in ("code", "amount", "status", "expires_at")),
    )
    .outerjoin(Coupon, and_(Coupon.order_id == Order.id, Coupon.status.in_(LIVE_STATUSES)))
    .where(Order.id == bindparam("order_id", None))
    .order_by(Coupon.id.desc())
    .limit(1)
)
_ORDER_COLUMNS = (
    Order.id,
    Order.player_id,
    Order.status,
    Order.item,
    Order.amount,
    Order.currency,
    Order.ordered_at,
    Order.updated_at,
)
_ORDER = select(*_ORDER_COLUMNS).where(Order.id == bindparam("order_id", None))
_LIVE_COUPON = (
    select(Coupon.order_id, Coupon.player_id, Coupon.code, Coupon.amount, Coupon.status, Coupon.expires_at)
    .where(Coupon.order_id == bindparam("order_id", None), Coupon.status.in_(LIVE_STATUSES))
    .order_by(Coupon.id.desc())
    .limit(1)
)


@dataclass(frozen=True)
class OrderRecord:
    """One order as every reader sees it, whichever source it came from (DESIGN.md §11's order object)."""

    id: str
    player_id: str
    status: str
    item: str
    amount: int
    currency: str
    ordered_at: datetime | None
    updated_at: datetime | None
    source: str = "builtin"
    """`builtin` (the embedded table) or `http` (the studio's backend)."""
    read_at: datetime | None = None
    """When the source answered with it: the ledger keeps it beside each decision."""

    def facts(self) -> dict[str, Any]:
        """The facts a coupon decision was made on, for the ledger and the audit (JSON-ready)."""
        return {
            "id": self.id,
            "player_id": self.player_id,
            "status": self.status,
            "amount": self.amount,
            "currency": self.currency,
            "updated_at": None if self.updated_at is None else self.updated_at.isoformat(),
            "source": self.source,
            "read_at": None if self.read_at is None else self.read_at.isoformat(),
        }


@dataclass(frozen=True)
class OrderView:
    """An order as the order tools read it, with the coupon that holds its slot (active or pending)."""

    id: str
    player_id: str
    item: str
    amount: int
    status: str
    ordered_at: datetime | None
    live_coupon: CouponRow | None
    """Only the code, amount, status and expiry are read (the other fields are empty)."""


def _coupon_row(
    order_id: str, player_id: str, code: str, amount: int, status: str, expires: Any
) -> CouponRow:
    return CouponRow(
        id=None,
        code=code,
        order_id=order_id,
        player_id=player_id,
        amount=amount,
        status=status,
        reason=None,
        issued_by="",
        idempotency_key=None,
        created_at=None,
        expires_at=expires,
        revoked_at=None,
    )


def _view(row: Any) -> OrderView:
    coupon = None
    if row.coupon_code is not None:
        coupon = _coupon_row(
            row.id,
            row.player_id,
            row.coupon_code,
            row.coupon_amount,
            row.coupon_status,
            row.coupon_expires_at,
        )
    return OrderView(row.id, row.player_id, row.item, row.amount, row.status, row.ordered_at, coupon)


def _record(row: Any, read_at: datetime | None = None) -> OrderRecord:
    return OrderRecord(
        row.id,
        row.player_id,
        row.status,
        row.item,
        row.amount,
        row.currency or "KRW",
        row.ordered_at,
        row.updated_at,
        "builtin",
        read_at,
    )


class Orders:
    """`store.orders`: the embedded orders table (each read one compiled statement), and its writes."""

    def __init__(self, store: UnitRunner) -> None:
        self._store = store

    async def with_live_coupon(self, order_id: str) -> OrderView | None:
        """The order `order_id` (None when there is none) and the coupon holding its slot, if any."""

        def unit() -> Unit[OrderView | None]:
            row = yield Fetch(_ORDER_AND_LIVE_COUPON, {"order_id": order_id}, one=True)
            return None if row is None else _view(row)

        return await self._store.run(unit, write=False, snapshot=False)

    async def get(self, order_id: str) -> OrderRecord | None:
        """The stored order `order_id`, or None."""

        def unit() -> Unit[OrderRecord | None]:
            row = yield Fetch(_ORDER, {"order_id": order_id}, one=True)
            return None if row is None else _record(row, utcnow())

        return await self._store.run(unit, write=False, snapshot=False)

    async def live_coupon(self, order_id: str) -> CouponRow | None:
        """The coupon holding `order_id`'s slot (active or pending), or None."""

        def unit() -> Unit[CouponRow | None]:
            r = yield Fetch(_LIVE_COUPON, {"order_id": order_id}, one=True)
            if r is None:
                return None
            return _coupon_row(r.order_id, r.player_id, r.code, r.amount, r.status, r.expires_at)

        return await self._store.run(unit, write=False, snapshot=False)

    async def of_player(
        self, player_id: str, *, limit: int, status: str | None = None
    ) -> tuple[list[OrderRecord], int]:
        """The player's newest `limit` orders (optionally of one status) and how many there are in all."""
        where = [Order.player_id == player_id]
        if status:
            where.append(Order.status == status)
        async with self._store.session() as session:
            total = (await session.execute(select(func.count(Order.id)).where(*where))).scalar_one()
            rows = await session.execute(
                select(*_ORDER_COLUMNS)
                .where(*where)
                .order_by(Order.ordered_at.desc(), Order.id.desc())
                .limit(limit)
            )
            now = utcnow()
            return [_record(r, now) for r in rows], int(total)

    async def mirror(self, orders: Sequence[OrderRecord]) -> None:
        """Keep the orders read fresh from the studio's backend in the embedded table (a stub player for
        an unknown owner), so a coupon's `order_id` and `player_id` always name stored rows; an older
        read (by `updated_at`) never overwrites a newer one."""
        if not orders:
            return
        async with self._store.session() as session:
            await upsert_orders(session, orders, only_newer=True)
            await session.commit()

    async def import_all(self, orders: Sequence[OrderRecord]) -> int:
        """Import: insert or replace `orders` in one transaction (all or nothing), with a stub player
        per unknown owner; how many players were added."""
        count = select(func.count(Player.id))
        async with self._store.session() as session:
            before = (await session.execute(count)).scalar_one()
            await upsert_orders(session, orders, only_newer=False)
            after = (await session.execute(count)).scalar_one()
            await session.commit()
        return int(after - before)


def _insert_for(session: AsyncSession) -> Any:
    name = session.get_bind().dialect.name
    return pg_insert if name == "postgresql" else sqlite_insert


async def upsert_orders(session: AsyncSession, orders: Sequence[OrderRecord], *, only_newer: bool) -> None:
    """Insert or update `orders` (and a stub player per unknown owner) in the caller's transaction."""
    insert = _insert_for(session)
    now = utcnow()
    owners = sorted({o.player_id for o in orders})
    fields = ("id", "player_id", "status", "item", "amount", "currency", "ordered_at", "updated_at")
    rows = []
    for o in orders:
        row = {k: v for k, v in asdict(o).items() if k in fields}
        row["ordered_at"] = row["ordered_at"] or now
        row["updated_at"] = row["updated_at"] or now
        rows.append(row)
    # In slices: SQLite binds at most 32,766 parameters per statement (an incident's scope is larger).
    for start in range(0, len(owners), _SLICE):
        stubs = [
            {"id": p, "name": p, "locale": "ko", "created_at": now} for p in owners[start : start + _SLICE]
        ]
        await session.execute(
            insert(Player.__table__).values(stubs).on_conflict_do_nothing(index_elements=["id"])
        )
    for start in range(0, len(rows), _SLICE):
        stmt = insert(Order.__table__).values(rows[start : start + _SLICE])
        changed = {k: getattr(stmt.excluded, k) for k in fields if k != "id"}
        where = Order.__table__.c.updated_at <= stmt.excluded.updated_at if only_newer else None
        await session.execute(stmt.on_conflict_do_update(index_elements=["id"], set_=changed, where=where))


_SLICE = 500
