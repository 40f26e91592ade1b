"""`arca-bot orders import FILE`: fill the builtin orders table from a CSV or JSONL file. Every line is
validated first (errors as `file:line: field: reason`); only a file with no error is written, in one
transaction, so nothing is ever half-imported. An order already stored is replaced by the file's."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from bot.game.orders.wire import Status
from bot.store import OrderRecord, Store, utcnow

CSV_COLUMNS = ("id", "player_id", "status", "item", "amount", "currency", "ordered_at", "updated_at")
REQUIRED = ("id", "player_id", "status", "item", "amount")
MAX_SHOWN = 20
"""At most this many line errors are printed (the count says how many there were)."""


class OrderFileError(Exception):
    """The file cannot be imported; `lines` are its `file:line: reason` errors (nothing was written)."""

    def __init__(self, lines: list[str], total: int | None = None) -> None:
        self.lines = lines
        self.total = len(lines) if total is None else total
        shown = "\n".join(lines[:MAX_SHOWN])
        more = f"\n… and {self.total - MAX_SHOWN} more" if self.total > MAX_SHOWN else ""
        super().__init__(f"{self.total} error(s), nothing imported:\n{shown}{more}")


class ImportedOrder(BaseModel):
    """One order line; times are optional (the import time) but must carry an offset when given."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")
    player_id: str = Field(min_length=1, max_length=32)
    status: Status
    item: str = Field(min_length=1, max_length=200)
    amount: int = Field(ge=0)
    currency: str = Field(default="KRW", min_length=3, max_length=3)
    ordered_at: AwareDatetime | None = None
    updated_at: AwareDatetime | None = None


@dataclass(frozen=True)
class ImportReport:
    orders: int
    new_players: int


def _rows(path: Path, text: str) -> list[tuple[int, Any]]:
    """(line number, raw row) of a CSV (by its header) or JSONL file; an unreadable line is an error row."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        rows: list[tuple[int, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                rows.append((number, ValueError(f"not JSON ({exc.msg})")))
        return rows
    if path.suffix.lower() != ".csv":
        raise OrderFileError([f"{path}: expected a .csv or .jsonl file"])
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in CSV_COLUMNS]
    if missing or unknown:
        why = f"missing {missing}" if missing else f"unknown {unknown}"
        raise OrderFileError([f"{path}:1: header: columns {why}; expected {', '.join(CSV_COLUMNS)}"])
    out: list[tuple[int, Any]] = []
    for row in reader:
        clean = {k.strip(): v for k, v in row.items() if k is not None and v not in (None, "")}
        if None in row:
            out.append((reader.line_num, ValueError("more values than columns")))
            continue
        out.append((reader.line_num, clean))
    return out


def _error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "line"
    return f"{where}: {first.get('msg', 'invalid')}"


def read_order_file(path: Path) -> list[OrderRecord]:
    """Every order of the file, or `OrderFileError` with each bad line; nothing is written here."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise OrderFileError([f"{path}: cannot read ({exc})"]) from None
    errors: list[str] = []
    orders: list[OrderRecord] = []
    seen: dict[str, int] = {}
    now = utcnow()
    for number, raw in _rows(path, text):
        if isinstance(raw, ValueError):
            errors.append(f"{path}:{number}: {raw}")
            continue
        if not isinstance(raw, dict):
            errors.append(f"{path}:{number}: expected an object with the order's fields")
            continue
        try:
            o = ImportedOrder.model_validate(raw)
        except ValidationError as exc:
            errors.append(f"{path}:{number}: {_error(exc)}")
            continue
        if o.id in seen:
            errors.append(f"{path}:{number}: id: {o.id} is already on line {seen[o.id]}")
            continue
        seen[o.id] = number
        ordered: datetime = o.ordered_at or now
        orders.append(
            OrderRecord(
                o.id, o.player_id, o.status, o.item, o.amount, o.currency, ordered, o.updated_at or now
            )
        )
    if errors:
        raise OrderFileError(errors)
    if not orders:
        raise OrderFileError([f"{path}: no orders in the file"])
    return orders


async def import_orders(store: Store, path: Path) -> ImportReport:
    """Validate the whole file, then write it in one transaction (players unknown to the bot get a stub
    row named after their id; `arca-bot seed` or the game's `player.upserted` events name them)."""
    orders = read_order_file(path)
    return ImportReport(len(orders), await store.orders.import_all(orders))
