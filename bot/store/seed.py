"""Demo seed and test fixtures: players, orders and coupons from YAML into the store.

Seeding is idempotent (rows that exist are left as they are); a malformed file is refused with
its file name and line before anything is written.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from bot.redaction import redact_url
from bot.store.coupon_codes import new_coupon_code
from bot.store.database import Store
from bot.store.models import ORDER_STATUSES, Coupon, Order, Player, utcnow
from bot.store.schema import StoreError, describe_error
from bot.yaml_files import first_error, located, parse_yaml, yaml_error_at

DEFAULT_SEED = Path(__file__).resolve().parents[2] / "data" / "demo_seed.yaml"


MAX_AMOUNT = 2_147_483_647
"""The largest amount a row can hold on every backend (PostgreSQL INTEGER); SQLite overflows at 2**63."""


class SeedError(Exception):
    """A seed or fixture file is malformed; the message names the file and line."""


def normalize_order_id(value: str) -> str:
    """An order id as the tools read one (`tools.order_views.normalize_order_id`): trimmed, upper case."""
    return value.strip().upper()


def _text_id(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _trimmed(value: Any) -> Any:
    value = _text_id(value)
    return value.strip() if isinstance(value, str) else value


def _order_id(value: Any) -> Any:
    value = _text_id(value)
    return normalize_order_id(value) if isinstance(value, str) else value


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
        value = _trimmed(value)
        # Discord sends ASCII digits; `²³` or `９００１` would never match a real user.
        if isinstance(value, str) and not re.fullmatch(r"[0-9]{1,20}", value):
            raise ValueError(f"a Discord id is 1 to 20 ASCII digits, got {value!r}")
        return value

    # Player ids are read trimmed by the tools and staff commands (`player_id.strip()`).
    _id_text = field_validator("id", mode="before")(lambda cls, v: _trimmed(v))


class SeedOrder(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=32)
    player_id: str
    status: str
    item: str = "상품"
    amount: int = Field(default=10_000, ge=0, le=MAX_AMOUNT)
    currency: str = "KRW"
    ordered_at: datetime | None = None

    @field_validator("status")
    @classmethod
    def _known_status(cls, value: str) -> str:
        if value not in ORDER_STATUSES:
            raise ValueError(f"unknown status {value!r}; expected one of {', '.join(ORDER_STATUSES)}")
        return value

    _ordered_aware = field_validator("ordered_at")(lambda cls, v: _aware(v))
    _id_as_tools_read_it = field_validator("id", mode="before")(lambda cls, v: _order_id(v))
    _player_trimmed = field_validator("player_id", mode="before")(lambda cls, v: _trimmed(v))


class SeedCoupon(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    amount: int = Field(gt=0, le=MAX_AMOUNT)
    status: Literal["active", "revoked", "pending"] = "active"
    code: str | None = Field(default=None, min_length=1, max_length=32)
    reason: str | None = None
    created_at: datetime | None = None

    _created_aware = field_validator("created_at")(lambda cls, v: _aware(v))
    _order_as_tools_read_it = field_validator("order_id", mode="before")(lambda cls, v: _order_id(v))


class SeedData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    players: list[SeedPlayer] = Field(default_factory=list)
    orders: list[SeedOrder] = Field(default_factory=list)
    coupons: list[SeedCoupon] = Field(default_factory=list)

    _source: str = PrivateAttr(default="seed")
    _root: Any = PrivateAttr(default=None)

    def where(self, loc: tuple[Any, ...]) -> str:
        """`file:line: players.1.discord_id` for a row's field, for one-line error messages."""
        return located(self._source, self._root, loc)

    def check_coupon_amounts(self, staff_max_amount: int) -> None:
        """No seeded coupon is larger than staff may issue (`staff_max_amount` of the coupon rules)."""
        for i, c in enumerate(self.coupons):
            if c.amount > staff_max_amount:
                raise SeedError(
                    f"{self.where(('coupons', i, 'amount'))}: {c.amount:,} is above staff_max_amount "
                    f"({staff_max_amount:,})"
                )

    def check_references(self) -> list[tuple[tuple[Any, ...], str]]:
        """Cross-row problems as (location, message), located like pydantic errors (sets: linear time)."""
        problems: list[tuple[tuple[Any, ...], str]] = []
        player_ids: set[str] = set()
        for i, p in enumerate(self.players):
            if p.id in player_ids:
                problems.append((("players", i, "id"), f"duplicate player id {p.id!r}"))
            player_ids.add(p.id)
        discord_ids: set[str] = set()
        for i, p in enumerate(self.players):
            if p.discord_id is not None and p.discord_id in discord_ids:
                problems.append((("players", i, "discord_id"), f"duplicate discord_id {p.discord_id!r}"))
            if p.discord_id is not None:
                discord_ids.add(p.discord_id)
        order_ids: set[str] = set()
        for i, o in enumerate(self.orders):
            if o.player_id not in player_ids:
                problems.append((("orders", i, "player_id"), f"unknown player {o.player_id!r}"))
            if o.id in order_ids:
                problems.append((("orders", i, "id"), f"duplicate order id {o.id!r}"))
            order_ids.add(o.id)
        live: set[str] = set()
        for i, c in enumerate(self.coupons):
            if c.order_id not in order_ids:
                problems.append((("coupons", i, "order_id"), f"unknown order {c.order_id!r}"))
            if c.status in ("active", "pending"):
                if c.order_id in live:
                    problems.append((("coupons", i, "order_id"), f"second live coupon for {c.order_id}"))
                live.add(c.order_id)
        return problems


def parse_fixture_data(data: Any, *, source: str, root: yaml.Node | None = None) -> SeedData:
    """Validate already-parsed YAML data (e.g. a transcript's `fixtures`), errors as file:line."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SeedError(f"{source}: expected a mapping with players/orders/coupons")
    try:
        seed = SeedData.model_validate(data)
        seed._source, seed._root = source, root
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise SeedError(f"{located(source, root, loc)}: {msg}") from None
    problems = seed.check_references()
    if problems:
        loc, msg = problems[0]
        raise SeedError(f"{located(source, root, loc)}: {msg}")
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
        root, data = parse_yaml(text)
    except yaml.YAMLError as exc:
        line, what = yaml_error_at(exc, text)
        raise SeedError(f"{path}{f':{line}' if line else ''}: invalid YAML: {what}") from None
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
    try:
        return await _apply_seed(store, seed, now=now or utcnow())
    except SQLAlchemyError as exc:  # a read-only or full database: one line, nothing was written
        raise StoreError(
            f"cannot write to database {redact_url(store.url)}: {describe_error(exc)}; nothing was written"
        ) from None


async def _apply_seed(store: Store, seed: SeedData, *, now: datetime) -> SeedReport:
    report = SeedReport()
    async with store.session() as s, s.begin():
        rows = (await s.execute(select(Player.id, Player.discord_id))).all()
        have_players = {pid for pid, _ in rows}
        linked = {did: pid for pid, did in rows if did}
        have_orders = set((await s.execute(select(Order.id))).scalars())
        for i, p in enumerate(seed.players):
            if p.id in have_players:
                continue
            owner = linked.get(p.discord_id) if p.discord_id else None
            if owner is not None and owner != p.id:
                raise SeedError(
                    f"{seed.where(('players', i, 'discord_id'))}: Discord id {p.discord_id} is already "
                    f"linked to {owner}; nothing was written"
                )
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
        # A coupon without a code is found again by its content: the k-th identical row of the file
        # matches the k-th such seeded row, so seeding twice adds nothing and two identical rows are two.
        seeded = Counter(
            tuple(row)
            for row in await s.execute(
                select(Coupon.order_id, Coupon.amount, Coupon.status, Coupon.reason).where(
                    Coupon.issued_by == "seed"
                )
            )
        )
        wanted: Counter[tuple[Any, ...]] = Counter()
        for c in seed.coupons:
            if c.code is None:
                key = (c.order_id, c.amount, c.status, c.reason or "fixture")
                wanted[key] += 1
                if seeded[key] >= wanted[key]:
                    continue
            elif (await s.execute(select(Coupon.id).where(Coupon.code == c.code))).first():
                continue
            if c.status in ("active", "pending") and c.order_id in live:
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
