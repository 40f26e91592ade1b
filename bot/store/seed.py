"""Demo seed and test fixtures: players, orders and coupons from YAML into the store.

Seeding is idempotent (rows that exist are left as they are); a malformed file is refused with
its file name and line before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlalchemy import select

from bot.store.coupon_codes import new_coupon_code
from bot.store.database import Store
from bot.store.models import ORDER_STATUSES, Coupon, Order, Player, utcnow

DEFAULT_SEED = Path(__file__).resolve().parents[2] / "data" / "demo_seed.yaml"


class SeedError(Exception):
    """A seed or fixture file is malformed; the message names the file and line."""


def _aware(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        raise ValueError("timestamps need a time zone offset, e.g. 2026-03-02T10:00:00+09:00")
    return value


class SeedPlayer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=32)
    discord_id: str | None = None
    name: str = Field(min_length=1, max_length=100)
    locale: Literal["ko", "en"] = "ko"
    email: str | None = None
    phone: str | None = None

    @field_validator("discord_id", mode="before")
    @classmethod
    def _discord_id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value


class SeedOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=32)
    player_id: str
    status: str
    item: str = "상품"
    amount: int = Field(default=10_000, ge=0)
    currency: str = "KRW"
    ordered_at: datetime | None = None

    @field_validator("status")
    @classmethod
    def _known_status(cls, value: str) -> str:
        if value not in ORDER_STATUSES:
            raise ValueError(f"unknown status {value!r}; expected one of {', '.join(ORDER_STATUSES)}")
        return value

    _ordered_aware = field_validator("ordered_at")(lambda cls, v: _aware(v))


class SeedCoupon(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    amount: int = Field(gt=0)
    status: Literal["active", "revoked", "pending"] = "active"
    code: str | None = None
    reason: str | None = None
    created_at: datetime | None = None

    _created_aware = field_validator("created_at")(lambda cls, v: _aware(v))


class SeedData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    players: list[SeedPlayer] = Field(default_factory=list)
    orders: list[SeedOrder] = Field(default_factory=list)
    coupons: list[SeedCoupon] = Field(default_factory=list)

    def check_references(self) -> list[tuple[tuple[Any, ...], str]]:
        """Cross-row problems as (location, message), located like pydantic errors."""
        problems: list[tuple[tuple[Any, ...], str]] = []
        player_ids = [p.id for p in self.players]
        for i, pid in enumerate(player_ids):
            if pid in player_ids[:i]:
                problems.append((("players", i, "id"), f"duplicate player id {pid!r}"))
        discord_ids = [p.discord_id for p in self.players]
        for i, did in enumerate(discord_ids):
            if did is not None and did in discord_ids[:i]:
                problems.append((("players", i, "discord_id"), f"duplicate discord_id {did!r}"))
        order_ids = [o.id for o in self.orders]
        for i, o in enumerate(self.orders):
            if o.player_id not in player_ids:
                problems.append((("orders", i, "player_id"), f"unknown player {o.player_id!r}"))
            if o.id in order_ids[:i]:
                problems.append((("orders", i, "id"), f"duplicate order id {o.id!r}"))
        live: set[str] = set()
        for i, c in enumerate(self.coupons):
            if c.order_id not in order_ids:
                problems.append((("coupons", i, "order_id"), f"unknown order {c.order_id!r}"))
            if c.status in ("active", "pending"):
                if c.order_id in live:
                    problems.append((("coupons", i, "order_id"), f"second live coupon for {c.order_id}"))
                live.add(c.order_id)
        return problems


def line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Walk the composed YAML node tree along a pydantic error location; 1-based line."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    nxt = value
                    line = key.start_mark.line + 1
                    break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
        if node is None:
            break
    return line


def parse_fixture_data(data: Any, *, source: str, root: yaml.Node | None = None) -> SeedData:
    """Validate already-parsed YAML data (e.g. a transcript's `fixtures`), errors as file:line."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SeedError(f"{source}: expected a mapping with players/orders/coupons")
    try:
        seed = SeedData.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err.get("loc", ()))
        line = line_of(root, loc)
        where = f"{source}:{line}" if line else source
        path = ".".join(str(p) for p in loc)
        raise SeedError(f"{where}: {path}: {err.get('msg')}") from None
    problems = seed.check_references()
    if problems:
        loc, msg = problems[0]
        line = line_of(root, loc)
        where = f"{source}:{line}" if line else source
        raise SeedError(f"{where}: {'.'.join(str(p) for p in loc)}: {msg}")
    return seed


def load_seed_file(path: Path) -> SeedData:
    """Read and validate a seed YAML file; any problem is a `SeedError` naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SeedError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SeedError(f"{path}: not UTF-8 text") from None
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        raise SeedError(f"{path}{line}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise SeedError(f"{path}: invalid YAML: {exc}") from None
    return parse_fixture_data(data, source=str(path), root=root)


@dataclass
class SeedReport:
    players_added: int = 0
    orders_added: int = 0
    coupons_added: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.players_added or self.orders_added or self.coupons_added)


async def apply_seed(store: Store, seed: SeedData, *, now: datetime | None = None) -> SeedReport:
    """Insert the rows that do not exist yet, in one transaction. Existing rows are not touched."""
    now = now or utcnow()
    report = SeedReport()
    async with store.session() as s, s.begin():
        have_players = set((await s.execute(select(Player.id))).scalars())
        have_orders = set((await s.execute(select(Order.id))).scalars())
        for p in seed.players:
            if p.id in have_players:
                continue
            s.add(Player(**p.model_dump(), created_at=now))
            report.players_added += 1
        await s.flush()
        for o in seed.orders:
            if o.id in have_orders:
                continue
            when = (o.ordered_at or now).astimezone(UTC)
            fields = o.model_dump(exclude={"ordered_at"})
            s.add(Order(**fields, ordered_at=when, updated_at=when))
            report.orders_added += 1
        await s.flush()
        owners = {oid: pid for oid, pid in (await s.execute(select(Order.id, Order.player_id))).all()}
        live = set(
            (
                await s.execute(select(Coupon.order_id).where(Coupon.status.in_(("active", "pending"))))
            ).scalars()
        )
        for c in seed.coupons:
            if c.status in ("active", "pending") and c.order_id in live:
                continue
            if c.code and (await s.execute(select(Coupon.id).where(Coupon.code == c.code))).first():
                continue
            created = (c.created_at or now).astimezone(UTC)
            s.add(
                Coupon(
                    code=c.code or new_coupon_code(),
                    order_id=c.order_id,
                    player_id=owners[c.order_id],
                    amount=c.amount,
                    status=c.status,
                    reason=c.reason or "fixture",
                    issued_by="seed",
                    created_at=created,
                    expires_at=created + timedelta(days=30),
                    revoked_at=created if c.status == "revoked" else None,
                )
            )
            if c.status in ("active", "pending"):
                live.add(c.order_id)
            report.coupons_added += 1
    return report


async def is_empty(store: Store) -> bool:
    async with store.session() as s:
        return (await s.execute(select(Player.id).limit(1))).first() is None


async def seed_if_empty(store: Store, path: Path = DEFAULT_SEED) -> SeedReport | None:
    """Load the demo seed into a database that has no players yet; None when it had data."""
    if not await is_empty(store):
        return None
    return await apply_seed(store, load_seed_file(path))
