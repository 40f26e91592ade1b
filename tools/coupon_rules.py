"""`CouponRules`: every limit the coupon guards enforce, read from policies/coupon_rules.yaml.

The rules are loaded once (by the app, or `default_coupon_rules()` for the checkout's own file) and
handed to the tools through `ToolServices`; `check_amount` applies the amount rules.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.store import ORDER_STATUSES
from bot.yaml_files import first_error, load_yaml, yaml_error_at
from tools import coupon_messages as say
from tools.money import format_krw
from tools.results import ResultCode

DEFAULT_RULES_PATH = Path(__file__).resolve().parent.parent / "policies" / "coupon_rules.yaml"
"""policies/coupon_rules.yaml of this checkout: the source of truth for coupon limits."""


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
        text = file.read_text(encoding="utf-8")
        raw = load_yaml(text)
    except OSError as exc:
        raise CouponRulesError(f"{shown}: cannot read the file ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        line = yaml_error_at(exc, text)[0]
        where = f" at line {line}" if line else ""
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
        loc, reason = first_error(exc)
        key = ".".join(str(p) for p in loc) or "(file)"
        if err.get("type") == "extra_forbidden":
            reason = f"unknown key; valid keys: {', '.join(CouponRules.model_fields)}"
        raise CouponRulesError(f"{shown}: {key}: {reason} (got {err.get('input')!r})") from None


@functools.cache
def default_coupon_rules() -> CouponRules:
    """The checkout's policies/coupon_rules.yaml, read once per process (the rules are immutable)."""
    return load_coupon_rules(DEFAULT_RULES_PATH)


def check_amount(
    rules: CouponRules, amount: int, *, locale: str = "ko", staff: bool = False
) -> tuple[ResultCode, str, dict[str, Any]] | None:
    """None when `amount` is a valid coupon amount; else (code, reason sentence, data) for the model."""
    limit = rules.staff_max_amount if staff else rules.max_amount
    lo, step = rules.min_amount, rules.amount_step
    data = {"min_amount": lo, "limit": limit, "amount_step": step}

    def krw(value: int) -> str:
        return format_krw(value, locale)

    rng = say.AMOUNT_RANGE(locale, lo=krw(lo), limit=krw(limit), step=krw(step))
    if not isinstance(amount, int) or isinstance(amount, bool):
        return ResultCode.INVALID_AMOUNT, say.AMOUNT_NOT_WHOLE(locale, range=rng), data
    if amount <= 0:
        return (
            ResultCode.INVALID_AMOUNT,
            say.AMOUNT_NOT_POSITIVE(locale, amount=f"{amount:,}", range=rng),
            data,
        )
    if amount < lo:
        msg = say.AMOUNT_BELOW_MIN(locale, lo=krw(lo), amount=krw(amount), range=rng)
        return ResultCode.INVALID_AMOUNT, msg, data
    if amount > limit:
        return (
            ResultCode.AMOUNT_OVER_LIMIT,
            say.AMOUNT_OVER_LIMIT(locale, limit=krw(limit), amount=krw(amount)),
            data,
        )
    if amount % step:
        lower = amount - amount % step
        hint = say.AMOUNT_STEP_HINT(locale, lower=krw(lower)) if lower >= lo else ""
        return (
            ResultCode.INVALID_AMOUNT,
            say.AMOUNT_OFF_STEP(locale, step=krw(step), amount=krw(amount), hint=hint),
            data,
        )
    return None
