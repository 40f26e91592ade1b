"""`game_order_facts`: the order facts each coupon was decided on (id, player, status, amount, when and
from which source they were read), written in the coupon's own transaction. With the http order source
the order lives in the studio's backend; this row keeps every coupon auditable without it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base, UTCDateTime

FACT_COLUMNS = (
    "coupon_code",
    "order_id",
    "player_id",
    "status",
    "amount",
    "currency",
    "order_updated_at",
    "source",
    "read_at",
)


class GameOrderFacts(Base):
    __tablename__ = "game_order_facts"

    coupon_code: Mapped[str] = mapped_column(ForeignKey("coupons.code"), primary_key=True)
    order_id: Mapped[str] = mapped_column(String(64), index=True)
    player_id: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    amount: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3))
    order_updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    source: Mapped[str] = mapped_column(String(16))
    """`builtin` or `http`."""
    read_at: Mapped[datetime] = mapped_column(UTCDateTime())
    """When the source answered with these facts."""


def fact_row(coupon_code: str, facts: dict[str, Any]) -> dict[str, Any]:
    """The row of `coupon_code` from `OrderRecord.facts()`-shaped facts (times as datetimes or ISO text)."""

    def when(value: Any) -> datetime | None:
        return datetime.fromisoformat(value) if isinstance(value, str) else value

    return {
        "coupon_code": coupon_code,
        "order_id": facts["id"],
        "player_id": facts["player_id"],
        "status": facts["status"],
        "amount": int(facts["amount"]),
        "currency": facts.get("currency") or "KRW",
        "order_updated_at": when(facts.get("updated_at")),
        "source": facts.get("source") or "builtin",
        "read_at": when(facts["read_at"]),
    }


async def facts_of_coupons(store: Any, codes: list[str]) -> dict[str, GameOrderFacts]:
    """The ledger's copy of the order facts of each coupon in `codes` (coupons without one are absent)."""
    if not codes:
        return {}
    async with store.session() as s:
        rows = await s.execute(select(GameOrderFacts).where(GameOrderFacts.coupon_code.in_(codes)))
        return {row.coupon_code: row for row in rows.scalars()}
