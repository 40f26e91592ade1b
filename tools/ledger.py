"""The coupon ledger: `CouponRules` from policies/coupon_rules.yaml and every way a coupon is born or changed.

The `issue_coupon` tool and the staff `/coupon` commands both go through here, so the rules, the
exactly-once write and the audit trail exist once. The ledger, not the model, is the truth.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import ORDER_STATUS_EN, ORDER_STATUSES, Coupon, Order, Player, utcnow
from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED, ORDER_NOT_FOUND, STAFF_ONLY_COMMAND
from bot.vocabulary.catalogue import say as _say
from tools.base import Actor, ResultCode, ToolResult
from tools.money import format_krw

log = logging.getLogger(__name__)

DEFAULT_RULES_PATH = Path(__file__).resolve().parent.parent / "policies" / "coupon_rules.yaml"
"""policies/coupon_rules.yaml of this checkout: the source of truth for coupon limits."""

LIVE_STATUSES = ("active", "pending")
"""Statuses that hold an order's one coupon slot and count against the player's daily caps."""

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O/1/I: codes are read aloud and typed by players."""

StaffNotifier = Callable[[str, dict[str, Any]], Awaitable[None]]


# ---- rules -----------------------------------------------------------------------------------


class CouponRulesError(Exception):
    """policies/coupon_rules.yaml cannot be used; the message names the file, the key and the reason."""


class CouponRules(BaseModel):
    """Compensation limits. Every number the bot enforces comes from the YAML file, not from code."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eligible_statuses: list[str] = Field(default_factory=lambda: ["delayed"])
    """Order statuses that may be compensated by the bot (default only `delayed`, 배송 지연)."""
    min_amount: int = Field(default=1_000, gt=0)
    """Smallest coupon in KRW."""
    max_amount: int = Field(default=20_000, gt=0)
    """Largest coupon the bot may issue in one call, in KRW."""
    amount_step: int = Field(default=1_000, gt=0)
    """Coupon amounts are multiples of this (KRW)."""
    one_active_per_order: bool = True
    """At most one live coupon per order; the database enforces it, so it cannot be switched off."""
    daily_max_count: int = Field(default=3, ge=0)
    """Coupons per player per calendar day (in the configured time zone)."""
    daily_max_amount: int = Field(default=50_000, ge=0)
    """KRW per player per calendar day."""
    staff_max_amount: int = Field(default=100_000, gt=0)
    """Largest coupon a staff member may issue with `/coupon issue`."""
    valid_days: int = Field(default=30, gt=0, le=3650)
    """A coupon expires this many days after it is issued."""
    approval_threshold: int | None = None
    """Bot-issued amounts above this wait for `/coupon approve` (null: no approval step)."""
    currency: str = "KRW"

    @field_validator("eligible_statuses")
    @classmethod
    def _known_statuses(cls, value: list[str]) -> list[str]:
        unknown = [s for s in value if s not in ORDER_STATUSES]
        if unknown:
            raise ValueError(f"unknown order status {unknown[0]!r}; valid: {', '.join(ORDER_STATUSES)}")
        return value

    @field_validator("one_active_per_order")
    @classmethod
    def _always_one(cls, value: bool) -> bool:
        if not value:
            raise ValueError("must be true: the database allows one live coupon per order")
        return value

    @field_validator("currency")
    @classmethod
    def _krw_only(cls, value: str) -> str:
        if value != "KRW":
            raise ValueError("only KRW is supported")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> CouponRules:
        if self.max_amount < self.min_amount:
            raise _RuleError("max_amount", "must be ≥ min_amount")
        if self.staff_max_amount < self.max_amount:
            raise _RuleError("staff_max_amount", "must be ≥ max_amount")
        if self.approval_threshold is not None and not (
            self.min_amount <= self.approval_threshold <= self.max_amount
        ):
            raise _RuleError("approval_threshold", "must be between min_amount and max_amount, or null")
        return self


class _RuleError(ValueError):
    """A cross-field rule broke; carries the key to blame."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_coupon_rules(path: str | Path | None = None) -> CouponRules:
    """Read and validate the rules file; any problem is a `CouponRulesError` naming file, key and reason."""
    file = Path(path) if path is not None else DEFAULT_RULES_PATH
    shown = _display_path(file)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CouponRulesError(f"{shown}: cannot read the file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CouponRulesError(f"{shown}: not valid YAML{where}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CouponRulesError(f"{shown}: the file must be a mapping of rule names to values")
    try:
        return CouponRules.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, _RuleError):
            raise CouponRulesError(f"{shown}: {cause.key}: {cause.reason}") from None
        key = ".".join(str(p) for p in err.get("loc", ())) or "(file)"
        reason = err.get("msg", "invalid value").removeprefix("Value error, ")
        if err.get("type") == "extra_forbidden":
            reason = f"unknown key; valid keys: {', '.join(CouponRules.model_fields)}"
        raise CouponRulesError(f"{shown}: {key}: {reason} (got {err.get('input')!r})") from None


# ---- views and messages ------------------------------------------------------------------------


def status_label(status: str, locale: str = "ko") -> str:
    """`delayed` → `배송 지연 (delayed)`; English adds the Korean label the player sees in the game."""
    ko = ORDER_STATUSES.get(status, status)
    if locale == "ko":
        return f"{ko} ({status})"
    return f"{ORDER_STATUS_EN.get(status, status)} ({status}, {ko})"


def local_date(moment: datetime | None, timezone: str) -> str:
    return "" if moment is None else moment.astimezone(ZoneInfo(timezone)).date().isoformat()


def coupon_view(coupon: Coupon, timezone: str | None = None) -> dict[str, Any]:
    """Plain facts about a coupon for `ToolResult.data` (the claim check and replay read these).

    With `timezone`, `expires_on` is the local expiry date the player was told.
    """
    view = {
        "code": coupon.code,
        "order_id": coupon.order_id,
        "player_id": coupon.player_id,
        "amount": coupon.amount,
        "status": coupon.status,
        "issued_by": coupon.issued_by,
        "created_at": coupon.created_at.isoformat() if coupon.created_at else None,
        "expires_at": coupon.expires_at.isoformat() if coupon.expires_at else None,
    }
    if timezone is not None:
        view["expires_on"] = local_date(coupon.expires_at, timezone) or None
    return view


def describe_coupon(coupon: Coupon, locale: str, timezone: str) -> str:
    """`20,000원 쿠폰 ARCA-7K2P-9XQM (만료 2026-04-01)`; a pending coupon's code is not given out."""
    amount = format_krw(coupon.amount, locale)
    if coupon.status == "pending":
        return _say(
            locale, f"승인 대기 중인 {amount} 쿠폰 요청", f"a {amount} coupon awaiting staff approval"
        )
    expires = local_date(coupon.expires_at, timezone)
    return _say(
        locale,
        f"{amount} 쿠폰 {coupon.code} (만료 {expires})",
        f"a {amount} coupon {coupon.code} (expires {expires})",
    )


def new_coupon_code() -> str:
    """`ARCA-XXXX-XXXX` from a cryptographic source: codes are money and must not be guessable."""
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    return f"ARCA-{chars[:4]}-{chars[4:]}"


def normalize_order_id(order_id: str) -> str:
    return order_id.strip().upper()


# ---- amount validity (pure, property-tested) ----------------------------------------------------


def check_amount(
    rules: CouponRules, amount: int, *, locale: str = "ko", staff: bool = False
) -> tuple[ResultCode, str, dict[str, Any]] | None:
    """None when `amount` is a valid coupon amount; else (code, reason sentence, data) for the model."""
    limit = rules.staff_max_amount if staff else rules.max_amount
    lo, step = rules.min_amount, rules.amount_step
    rng_ko = f"{format_krw(lo, 'ko')} 이상 {format_krw(limit, 'ko')} 이하, {format_krw(step, 'ko')} 단위"
    rng_en = (
        f"between {format_krw(lo, 'en')} and {format_krw(limit, 'en')} in steps of {format_krw(step, 'en')}"
    )
    data = {"min_amount": lo, "limit": limit, "amount_step": step}
    if not isinstance(amount, int) or isinstance(amount, bool):
        return (
            ResultCode.INVALID_AMOUNT,
            _say(
                locale, f"금액은 정수여야 합니다({rng_ko}).", f"The amount must be a whole number ({rng_en})."
            ),
            data,
        )
    if amount <= 0:
        return (
            ResultCode.INVALID_AMOUNT,
            _say(
                locale,
                f"금액은 양수여야 합니다(요청: {amount:,}). 쿠폰 금액은 {rng_ko}입니다.",
                f"The amount must be positive (got {amount:,}). Coupons are {rng_en}.",
            ),
            data,
        )
    if amount < lo:
        return (
            ResultCode.INVALID_AMOUNT,
            _say(
                locale,
                f"최소 발급 금액은 {format_krw(lo, 'ko')}입니다(요청: {format_krw(amount, 'ko')}). "
                f"{rng_ko}로 다시 요청하세요.",
                f"The smallest coupon is {format_krw(lo, 'en')} (got {format_krw(amount, 'en')}). "
                f"Retry with an amount {rng_en}.",
            ),
            data,
        )
    if amount > limit:
        return (
            ResultCode.AMOUNT_OVER_LIMIT,
            _say(
                locale,
                f"1회 최대 {format_krw(limit, 'ko')}까지 발급할 수 있습니다(요청: {format_krw(amount, 'ko')}). "
                f"{format_krw(limit, 'ko')} 이하로 다시 요청하세요.",
                f"At most {format_krw(limit, 'en')} can be issued at once (got {format_krw(amount, 'en')}). "
                f"Retry with {format_krw(limit, 'en')} or less.",
            ),
            data,
        )
    if amount % step:
        lower = amount - amount % step
        hint_ko = f" 예: {format_krw(lower, 'ko')}" if lower >= lo else ""
        hint_en = f" e.g. {format_krw(lower, 'en')}" if lower >= lo else ""
        return (
            ResultCode.INVALID_AMOUNT,
            _say(
                locale,
                f"쿠폰 금액은 {format_krw(step, 'ko')} 단위여야 합니다(요청: {format_krw(amount, 'ko')}).{hint_ko}",
                f"Coupon amounts must be a multiple of {format_krw(step, 'en')} "
                f"(got {format_krw(amount, 'en')}).{hint_en}",
            ),
            data,
        )
    return None


# ---- transactions ------------------------------------------------------------------------------


async def _begin_write(
    session: AsyncSession, player_id: str | None = None, *, order_id: str | None = None
) -> None:
    """Start a serialised write: the read-check-insert must not interleave with another issuance.

    SQLite: `BEGIN IMMEDIATE` takes the database write lock before the first read, so checks and the
    insert see one consistent state. Other databases: lock the player's row (`FOR UPDATE`), which
    serialises issuances per player (the daily caps) while the unique index guards each order.
    PostgreSQL runs READ COMMITTED, so every statement after the lock sees what the previous holder
    committed (tests/scale prove both across two OS processes).
    """
    conn = await session.connection()
    if conn.dialect.name == "sqlite":
        raw = await conn.get_raw_connection()
        if not getattr(raw.driver_connection, "in_transaction", False):
            await conn.exec_driver_sql("BEGIN IMMEDIATE")
        return
    if player_id is not None:
        # NO KEY UPDATE (key_share=True), added for issue 10: it still serialises issuances of one
        # player, but not the foreign-key check (KEY SHARE) of a staff insert for this player's order.
        # A plain FOR UPDATE deadlocked there: the staff insert waited for this lock while this
        # transaction's insert waited on the staff row's unique-index entry.
        await session.execute(select(Player.id).where(Player.id == player_id).with_for_update(key_share=True))
    if order_id is not None:
        # Added for issue 10 (PostgreSQL): revoke and approve of one order take turns, so an approve
        # racing a revoke cannot report "approved" for a coupon the revoke then rejects. NO KEY UPDATE
        # leaves the foreign-key checks of concurrent coupon inserts unblocked.
        await session.execute(select(Order.id).where(Order.id == order_id).with_for_update(key_share=True))


async def live_coupon(session: AsyncSession, order_id: str) -> Coupon | None:
    row = await session.execute(
        select(Coupon)
        .where(Coupon.order_id == order_id, Coupon.status.in_(LIVE_STATUSES))
        .order_by(Coupon.id.desc())
        .limit(1)
    )
    return row.scalar_one_or_none()


async def _coupon_by_key(session: AsyncSession, key: str | None) -> Coupon | None:
    if not key:
        return None
    return (await session.execute(select(Coupon).where(Coupon.idempotency_key == key))).scalar_one_or_none()


def day_bounds(now: datetime, timezone: str) -> tuple[datetime, datetime]:
    """The calendar day containing `now` in `timezone`, as aware datetimes [start, end)."""
    tz = ZoneInfo(timezone)
    day = now.astimezone(tz).date()
    start = datetime.combine(day, time.min, tzinfo=tz)
    end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz)
    return start, end


@dataclass(frozen=True)
class DailyUsage:
    count: int
    amount: int


async def daily_usage(session: AsyncSession, player_id: str, now: datetime, timezone: str) -> DailyUsage:
    """Live coupons the player received on `now`'s calendar day (bot and staff issued alike)."""
    start, end = day_bounds(now, timezone)
    row = (
        await session.execute(
            select(func.count(Coupon.id), func.coalesce(func.sum(Coupon.amount), 0)).where(
                Coupon.player_id == player_id,
                Coupon.status.in_(LIVE_STATUSES),
                Coupon.created_at >= start,
                Coupon.created_at < end,
            )
        )
    ).one()
    return DailyUsage(count=int(row[0]), amount=int(row[1]))


class _RaceLost(Exception):
    """The insert hit a unique constraint: another issuance (or the same key) got there first."""


@dataclass(frozen=True)
class IssueRequest:
    """One issuance attempt, bot or staff."""

    actor: Actor
    order_id: str
    amount: int
    reason: str | None
    idempotency_key: str | None
    thread_id: str | None
    locale: str
    now: datetime
    timezone: str
    staff: bool


def _result(ok: bool, code: ResultCode, message: str, req: IssueRequest, **data: Any) -> ToolResult:
    return ToolResult(
        ok=ok,
        code=code,
        message=message,
        data={"tool": "issue_coupon", "order_id": req.order_id, "amount": req.amount, **data},
    )


async def _audit(
    store: Any, req: IssueRequest, result: ToolResult, session: AsyncSession | None, **extra: Any
):
    detail = {
        "order_id": req.order_id,
        "amount": req.amount,
        "reason": req.reason,
        "idempotency_key": req.idempotency_key,
        "message": result.message,
        **extra,
    }
    coupon = result.data.get("coupon")
    if coupon:
        detail["coupon_code"] = coupon["code"]
    await store.audit(
        actor=req.actor.label,
        action="coupon.staff_issue" if req.staff else "coupon.issue",
        thread_id=req.thread_id,
        target=req.order_id,
        code=str(result.code),
        detail=detail,
        session=session,
    )


def _replayed(req: IssueRequest, coupon: Coupon) -> ToolResult:
    """The same call came again (same idempotency key): answer what the first call answered."""
    if coupon.status == "pending":
        return _pending_result(req, coupon, replayed=True)
    return _issued_result(req, coupon, replayed=True)


def _issued_result(req: IssueRequest, coupon: Coupon, *, replayed: bool = False) -> ToolResult:
    amount_ko, amount_en = format_krw(coupon.amount, "ko"), format_krw(coupon.amount, "en")
    expires = local_date(coupon.expires_at, req.timezone)
    msg = _say(
        req.locale,
        f"주문 {coupon.order_id}에 {amount_ko} 쿠폰을 발급했습니다. 쿠폰 코드: {coupon.code}, "
        f"유효기간: {expires}까지. 플레이어에게 금액, 쿠폰 코드, 유효기간을 그대로 안내하세요.",
        f"Issued a {amount_en} coupon for order {coupon.order_id}. Coupon code: {coupon.code}, "
        f"valid until {expires}. Give the player the amount, the code and the expiry date as written.",
    )
    if coupon.status != "active":
        msg += _say(
            req.locale,
            f" (참고: 이 쿠폰은 현재 {coupon.status} 상태입니다.)",
            f" (Note: this coupon is now {coupon.status}.)",
        )
    return _result(
        True,
        ResultCode.ISSUED,
        msg,
        req,
        amount=coupon.amount,
        coupon=coupon_view(coupon, req.timezone),
        replayed=replayed,
    )


def _pending_result(req: IssueRequest, coupon: Coupon, *, replayed: bool = False) -> ToolResult:
    amount = format_krw(coupon.amount, req.locale)
    msg = _say(
        req.locale,
        f"주문 {coupon.order_id}의 {amount} 쿠폰 요청은 운영진 승인이 필요해 승인 대기 중입니다. 아직 발급된 "
        "것이 아니므로 발급되었다고 말하지 말고, 운영진이 승인하면 사용할 수 있다고 안내하세요.",
        f"The {amount} coupon for order {coupon.order_id} needs staff approval and is pending. It is NOT "
        "issued yet: do not say it was issued; tell the player it becomes usable once staff approve it.",
    )
    return _result(
        False,
        ResultCode.PENDING_APPROVAL,
        msg,
        req,
        amount=coupon.amount,
        coupon=coupon_view(coupon, req.timezone),
        replayed=replayed,
    )


def _already_result(req: IssueRequest, existing: Coupon) -> ToolResult:
    described = describe_coupon(existing, req.locale, req.timezone)
    msg = _say(
        req.locale,
        f"주문 {req.order_id}에는 이미 {described}이(가) 있습니다. 주문당 쿠폰은 하나뿐이니 새로 발급하지 말고 "
        "기존 쿠폰을 안내하세요.",
        f"Order {req.order_id} already has {described}. Only one coupon per order: do not issue another, "
        "point the player to the existing one.",
    )
    return _result(False, ResultCode.ALREADY_ISSUED, msg, req, coupon=coupon_view(existing, req.timezone))


def _not_found_result(req: IssueRequest) -> ToolResult:
    return _result(False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(req.order_id, req.locale), req)


def order_not_found_message(order_id: str, locale: str) -> str:
    """The one sentence for a missing order AND for another player's order: they must look identical."""
    return ORDER_NOT_FOUND(locale, order_id=order_id)


async def _decide(session: AsyncSession, rules: CouponRules, req: IssueRequest) -> tuple[ToolResult, dict]:
    """All checks and the insert, inside the caller's write transaction. Returns the result + audit extras."""
    existing_by_key = await _coupon_by_key(session, req.idempotency_key)
    if existing_by_key is not None:
        return _replayed(req, existing_by_key), {"replayed": True}

    order = await session.get(Order, req.order_id)
    if order is None or (not req.staff and order.player_id != req.actor.player_id):
        # Same answer for "missing" and "someone else's": the audit keeps the true reason.
        return _not_found_result(req), {"why": "missing" if order is None else "other_player"}

    if not req.staff and order.status not in rules.eligible_statuses:
        eligible_ko = ", ".join(status_label(s, "ko") for s in rules.eligible_statuses)
        eligible_en = ", ".join(status_label(s, "en") for s in rules.eligible_statuses)
        msg = _say(
            req.locale,
            f"주문 {order.id}의 현재 상태는 {status_label(order.status, 'ko')}라서 보상 쿠폰 대상이 아닙니다. "
            f"쿠폰은 {eligible_ko} 상태의 주문에만 발급할 수 있습니다.",
            f"Order {order.id} is currently {status_label(order.status, 'en')}, which is not eligible for a "
            f"compensation coupon. Coupons can only be issued for orders that are {eligible_en}.",
        )
        res = _result(
            False,
            ResultCode.NOT_ELIGIBLE_STATUS,
            msg,
            req,
            status=order.status,
            eligible=rules.eligible_statuses,
        )
        return res, {}

    bad = check_amount(rules, req.amount, locale=req.locale, staff=req.staff)
    if bad is not None:
        code, msg, data = bad
        return _result(False, code, msg, req, **data), {}

    existing = await live_coupon(session, order.id)
    if existing is not None:
        return _already_result(req, existing), {}

    if not req.staff:
        used = await daily_usage(session, order.player_id, req.now, req.timezone)
        caps = {"daily_max_count": rules.daily_max_count, "daily_max_amount": rules.daily_max_amount}
        if used.count >= rules.daily_max_count:
            msg = _say(
                req.locale,
                f"이 플레이어는 오늘({req.timezone} 기준) 이미 쿠폰 {used.count}장을 받아 하루 최대 "
                f"{rules.daily_max_count}장 한도에 도달했습니다. 오늘은 더 발급할 수 없으니 내일 다시 요청하거나 "
                "escalate_to_staff로 운영진에게 넘기세요.",
                f"This player already received {used.count} coupon(s) today ({req.timezone}), the daily "
                f"maximum of {rules.daily_max_count}. No more today: try again tomorrow or use "
                "escalate_to_staff.",
            )
            return _result(False, ResultCode.DAILY_LIMIT_REACHED, msg, req, used=used.count, **caps), {}
        if used.amount + req.amount > rules.daily_max_amount:
            left = max(rules.daily_max_amount - used.amount, 0)
            left = left - left % rules.amount_step
            if left >= rules.min_amount:
                retry_ko = f" {format_krw(left, 'ko')} 이하로 다시 요청할 수 있습니다."
                retry_en = f" You may retry with {format_krw(left, 'en')} or less."
            else:
                retry_ko = " 오늘은 더 발급할 수 없으니 내일 다시 요청하거나 escalate_to_staff로 운영진에게 넘기세요."
                retry_en = " Nothing more can be issued today: try tomorrow or use escalate_to_staff."
            msg = _say(
                req.locale,
                f"이 플레이어의 오늘({req.timezone} 기준) 쿠폰 합계가 하루 한도 "
                f"{format_krw(rules.daily_max_amount, 'ko')}를 넘게 됩니다(오늘 발급: "
                f"{format_krw(used.amount, 'ko')}).{retry_ko}",
                f"This would exceed the player's daily total of {format_krw(rules.daily_max_amount, 'en')} "
                f"({req.timezone}; already issued today: {format_krw(used.amount, 'en')}).{retry_en}",
            )
            return (
                _result(
                    False,
                    ResultCode.DAILY_LIMIT_REACHED,
                    msg,
                    req,
                    used_amount=used.amount,
                    remaining=left,
                    **caps,
                ),
                {},
            )

    pending = not req.staff and rules.approval_threshold is not None and req.amount > rules.approval_threshold
    coupon = Coupon(
        code=new_coupon_code(),
        order_id=order.id,
        player_id=order.player_id,
        amount=req.amount,
        status="pending" if pending else "active",
        reason=req.reason,
        issued_by=req.actor.label[:64],
        idempotency_key=req.idempotency_key,
        created_at=req.now,
        expires_at=req.now + timedelta(days=rules.valid_days),
    )
    session.add(coupon)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise _RaceLost() from exc
    if pending:
        return _pending_result(req, coupon), {"threshold": rules.approval_threshold}
    return _issued_result(req, coupon), {}


async def _issue(
    store: Any,
    rules: CouponRules,
    req: IssueRequest,
    notify: StaffNotifier | None,
) -> ToolResult:
    for _attempt in range(3):
        try:
            async with store.session() as session:
                await _begin_write(session, req.actor.player_id)
                result, extra = await _decide(session, rules, req)
                await _audit(store, req, result, session, **extra)
                await session.commit()
        except (_RaceLost, IntegrityError):
            result = await _after_race(store, req)
            if result is None:
                continue  # a coupon-code collision, nothing else holds the slot: draw a new code
            return result
        if result.code == ResultCode.PENDING_APPROVAL and not result.data.get("replayed"):
            await _notify(notify, "approval", _approval_payload(req, result))
        return result
    return _result(
        False,
        ResultCode.ERROR,
        _say(
            req.locale,
            "쿠폰 발급 중 오류가 발생했습니다. 잠시 후 다시 시도하세요.",
            "Issuing failed; retry later.",
        ),
        req,
    )


async def _after_race(store: Any, req: IssueRequest) -> ToolResult | None:
    """After a unique-constraint failure: replay our own key, or report the coupon that won."""
    async with store.session() as session:
        await _begin_write(session, req.actor.player_id)
        mine = await _coupon_by_key(session, req.idempotency_key)
        if mine is not None:
            result, extra = _replayed(req, mine), {"replayed": True, "race": True}
        else:
            winner = await live_coupon(session, req.order_id)
            if winner is None:
                return None
            result, extra = _already_result(req, winner), {"race": True}
        await _audit(store, req, result, session, **extra)
        await session.commit()
    return result


def _approval_payload(req: IssueRequest, result: ToolResult) -> dict[str, Any]:
    coupon = result.data.get("coupon") or {}
    return {
        "order_id": req.order_id,
        "player_id": coupon.get("player_id"),
        "amount": req.amount,
        "reason": req.reason,
        "thread_id": req.thread_id,
        "requested_by": req.actor.label,
        "coupon_code": coupon.get("code"),
    }


async def _notify(notify: StaffNotifier | None, kind: str, payload: dict[str, Any]) -> bool:
    """Tell staff; a failing notifier never undoes what was recorded."""
    if notify is None:
        return False
    try:
        await notify(kind, payload)
    except Exception:  # the staff channel being down must not lose the ledger entry or crash the tool
        log.exception("staff notification (%s) failed", kind)
        return False
    return True


# ---- public API --------------------------------------------------------------------------------


async def issue_for_player(
    store: Any,
    rules: CouponRules,
    *,
    actor: Actor,
    order_id: str,
    amount: int,
    reason: str | None = None,
    idempotency_key: str | None = None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
    notify: StaffNotifier | None = None,
) -> ToolResult:
    """The guarded issuance behind `issue_coupon`: every check of DESIGN.md §5, in order, exactly once."""
    req = _request(
        actor, order_id, amount, reason, idempotency_key, thread_id, locale, now, timezone, staff=False
    )
    if not actor.player_id:
        staff_hint_ko = " 운영진은 /coupon issue 명령을 쓰세요." if actor.is_staff else ""
        staff_hint_en = " Staff should use the /coupon issue command." if actor.is_staff else ""
        result = _result(
            False,
            ResultCode.NOT_LINKED,
            ACCOUNT_NOT_LINKED(
                locale,
                blocked=_say(locale, "쿠폰을 발급할 수 없습니다", "no coupon can be issued"),
                more=_say(
                    locale,
                    f" 또는 escalate_to_staff로 넘기세요.{staff_hint_ko}",
                    f" Or use escalate_to_staff.{staff_hint_en}",
                ),
            ),
            req,
        )
        await _audit(store, req, result, None)
        return result
    return await _issue(store, rules, req, notify)


def _request(
    actor: Actor,
    order_id: str,
    amount: int,
    reason: str | None,
    idempotency_key: str | None,
    thread_id: str | None,
    locale: str,
    now: datetime | None,
    timezone: str,
    *,
    staff: bool,
) -> IssueRequest:
    return IssueRequest(
        actor=actor,
        order_id=normalize_order_id(order_id),
        amount=amount,
        reason=reason,
        idempotency_key=idempotency_key,
        thread_id=thread_id,
        locale=locale,
        now=now or utcnow(),
        timezone=timezone,
        staff=staff,
    )


def _staff_denied(actor: Actor, locale: str) -> ToolResult:
    return ToolResult(
        ok=False,
        code=ResultCode.DENIED,
        message=STAFF_ONLY_COMMAND(locale),
        data={"reason": "not_staff", "actor": actor.label},
    )


async def staff_issue(
    store: Any,
    rules: CouponRules,
    *,
    actor: Actor,
    order_id: str,
    amount: int,
    reason: str | None,
    idempotency_key: str | None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """`/coupon issue`: skips link, ownership, status and daily caps; keeps amount ≤ staff_max and one per order."""
    req = _request(
        actor, order_id, amount, reason, idempotency_key, thread_id, locale, now, timezone, staff=True
    )
    if not actor.is_staff:
        result = _staff_denied(actor, locale)
        await _audit(store, req, result, None)
        return result
    return await _issue(store, rules, req, None)


async def _change_live(
    store: Any,
    *,
    actor: Actor,
    order_id: str,
    action: str,
    wanted: tuple[str, ...],
    apply: Callable[[Coupon, datetime], None],
    done_ko: str,
    done_en: str,
    none_ko: str,
    none_en: str,
    reason: str | None,
    thread_id: str | None,
    locale: str,
    now: datetime,
    timezone: str,
) -> ToolResult:
    oid = normalize_order_id(order_id)
    if not actor.is_staff:
        result = _staff_denied(actor, locale)
        await store.audit(actor=actor.label, action=action, thread_id=thread_id, target=oid, code=result.code)
        return result
    async with store.session() as session:
        await _begin_write(session, order_id=oid)
        order = await session.get(Order, oid)
        coupon = await live_coupon(session, oid) if order is not None else None
        if order is None:
            result = ToolResult(False, ResultCode.ORDER_NOT_FOUND, order_not_found_message(oid, locale), {})
        elif coupon is None or coupon.status not in wanted:
            result = ToolResult(
                False,
                ResultCode.ERROR,
                _say(locale, none_ko.format(order=oid), none_en.format(order=oid)),
                {"coupon": coupon_view(coupon, timezone) if coupon else None},
            )
        else:
            before = coupon.status
            apply(coupon, now)
            view = coupon_view(coupon, timezone)
            described = describe_coupon(coupon, locale, timezone)
            result = ToolResult(
                True,
                ResultCode.OK,
                _say(
                    locale,
                    done_ko.format(order=oid, coupon=described),
                    done_en.format(order=oid, coupon=described),
                ),
                {"coupon": view, "previous_status": before},
            )
        await store.audit(
            actor=actor.label,
            action=action,
            thread_id=thread_id,
            target=oid,
            code=str(result.code),
            detail={"reason": reason, "message": result.message, "coupon": result.data.get("coupon")},
            session=session,
        )
        await session.commit()
    return result


async def revoke(
    store: Any,
    *,
    actor: Actor,
    order_id: str,
    reason: str | None = None,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """`/coupon revoke`: the order's live coupon becomes `revoked` (a pending one `rejected`), freeing the slot."""

    def apply(coupon: Coupon, at: datetime) -> None:
        coupon.status = "rejected" if coupon.status == "pending" else "revoked"
        coupon.revoked_at = at

    return await _change_live(
        store,
        actor=actor,
        order_id=order_id,
        action="coupon.revoke",
        wanted=LIVE_STATUSES,
        apply=apply,
        done_ko="주문 {order}의 쿠폰을 취소했습니다: {coupon}.",
        done_en="Revoked the coupon of order {order}: {coupon}.",
        none_ko="주문 {order}에는 취소할 쿠폰이 없습니다.",
        none_en="Order {order} has no coupon to revoke.",
        reason=reason,
        thread_id=thread_id,
        locale=locale,
        now=now or utcnow(),
        timezone=timezone,
    )


async def approve(
    store: Any,
    *,
    actor: Actor,
    order_id: str,
    thread_id: str | None = None,
    locale: str = "ko",
    now: datetime | None = None,
    timezone: str = "Asia/Seoul",
) -> ToolResult:
    """`/coupon approve`: the order's pending coupon becomes active; its validity starts at approval."""

    def apply(coupon: Coupon, at: datetime) -> None:
        # The pending row carries the validity length (expires_at - created_at); it starts now.
        validity = (coupon.expires_at - coupon.created_at) if coupon.expires_at else timedelta(days=30)
        coupon.status = "active"
        coupon.expires_at = at + validity

    return await _change_live(
        store,
        actor=actor,
        order_id=order_id,
        action="coupon.approve",
        wanted=("pending",),
        apply=apply,
        done_ko="주문 {order}의 쿠폰을 승인했습니다: {coupon}.",
        done_en="Approved the coupon of order {order}: {coupon}.",
        none_ko="주문 {order}에는 승인 대기 중인 쿠폰이 없습니다.",
        none_en="Order {order} has no coupon awaiting approval.",
        reason=None,
        thread_id=thread_id,
        locale=locale,
        now=now or utcnow(),
        timezone=timezone,
    )


async def list_coupons(
    store: Any,
    player_id: str | None = None,
    *,
    locale: str = "ko",
    timezone: str = "Asia/Seoul",
    limit: int = 50,
) -> ToolResult:
    """`/coupon list [player_id]`: newest first, every status. A read: not audited here."""
    async with store.session() as session:
        query = select(Coupon).order_by(Coupon.created_at.desc(), Coupon.id.desc()).limit(limit)
        if player_id:
            query = query.where(Coupon.player_id == player_id.strip())
        coupons = list((await session.execute(query)).scalars())
    views = [coupon_view(c, timezone) for c in coupons]
    if not coupons:
        who_ko = f"플레이어 {player_id}의 " if player_id else ""
        who_en = f" for player {player_id}" if player_id else ""
        return ToolResult(
            True,
            ResultCode.OK,
            _say(locale, f"{who_ko}쿠폰이 없습니다.", f"No coupons{who_en}."),
            {"coupons": []},
        )
    lines = [
        f"{c.order_id} · {c.player_id} · {format_krw(c.amount, locale)} · {c.status} · {c.code} · "
        + _say(
            locale,
            f"만료 {local_date(c.expires_at, timezone)}",
            f"expires {local_date(c.expires_at, timezone)}",
        )
        for c in coupons
    ]
    head = _say(locale, f"쿠폰 {len(coupons)}개 (최신순):", f"{len(coupons)} coupon(s), newest first:")
    return ToolResult(True, ResultCode.OK, "\n".join([head, *lines]), {"coupons": views})


async def active_coupon_for(
    store: Any, order_id: str, *, locale: str = "ko", timezone: str = "Asia/Seoul"
) -> ToolResult:
    """The order's live coupon (active or pending) as `data["coupon"]` (None when there is none). Not audited."""
    oid = normalize_order_id(order_id)
    async with store.session() as session:
        coupon = await live_coupon(session, oid)
    if coupon is None:
        return ToolResult(
            True,
            ResultCode.OK,
            _say(locale, f"주문 {oid}에는 활성 쿠폰이 없습니다.", f"Order {oid} has no active coupon."),
            {"coupon": None},
        )
    return ToolResult(
        True,
        ResultCode.OK,
        _say(
            locale,
            f"주문 {oid}: {describe_coupon(coupon, locale, timezone)}",
            f"Order {oid}: {describe_coupon(coupon, locale, timezone)}",
        ),
        {"coupon": coupon_view(coupon, timezone)},
    )
