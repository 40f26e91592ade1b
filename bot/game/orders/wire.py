"""The studio's order object on the wire (DESIGN.md §11) and what the bot refuses of it: an unknown
status, a missing or mistyped field, a time without an offset. A refused order is never trusted."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from bot.store import ORDER_STATUSES, OrderRecord

Status = Literal["paid", "preparing", "shipping", "delayed", "delivered", "cancelled", "refunded"]
assert set(Status.__args__) == set(ORDER_STATUSES), "the wire statuses are §5's order statuses"  # type: ignore[attr-defined]


class BadData(Exception):
    """The backend answered something the bot will not trust; `reason` is one loggable line (no secrets,
    no body beyond a short excerpt)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WireOrder(BaseModel):
    """One order object as the studio's backend sends it; extra fields are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: StrictStr = Field(min_length=1, max_length=64)
    player_id: StrictStr = Field(min_length=1, max_length=64)
    status: Status
    item: StrictStr = Field(max_length=500)
    amount: StrictInt = Field(ge=0)
    currency: StrictStr = Field(default="KRW", min_length=3, max_length=3)
    ordered_at: AwareDatetime
    updated_at: AwareDatetime


def _why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    value = first.get("input")
    shown = f" ({str(value)[:40]!r})" if isinstance(value, str | int) and where != "body" else ""
    return f"{where}: {first.get('msg', 'invalid')}{shown}"


def parse_order(data: Any, *, read_at: datetime) -> OrderRecord:
    """An `OrderRecord` from one order object, or `BadData` saying which field is wrong."""
    if not isinstance(data, dict):
        raise BadData(f"an order must be a JSON object, got {type(data).__name__}")
    try:
        wire = WireOrder.model_validate(data)
    except ValidationError as exc:
        raise BadData(f"order {str(data.get('id'))[:40]!r} refused: {_why(exc)}") from None
    return OrderRecord(
        id=wire.id,
        player_id=wire.player_id,
        status=wire.status,
        item=wire.item,
        amount=wire.amount,
        currency=wire.currency,
        ordered_at=wire.ordered_at,
        updated_at=wire.updated_at,
        source="http",
        read_at=read_at,
    )


def order_list(data: Any, key: str = "orders") -> list[Any]:
    """The `orders` array of a list or page answer, or `BadData`."""
    if not isinstance(data, dict) or not isinstance(data.get(key), list):
        raise BadData(f"expected an object with an {key!r} array")
    return data[key]
