"""What the console's incident forms send, read into the values of `bot.incidents`: the declaration
(title, notices, start and planned end, scope: all players / orders by status, item and dates / players of
an uploaded CSV) and the compensation plan (the same plan text `/incident compensate` reads)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.incidents import Limits, ScopeError, players_from_csv
from bot.store import ORDER_STATUSES
from bot.store.incidents import IncidentScope

TITLE_MAX, NOTICE_MAX = 200, 2000
SCOPE_KINDS = ("all", "orders", "players")


@dataclass(frozen=True)
class Declaration:
    title: str
    notice_ko: str
    notice_en: str
    scope: IncidentScope
    start: datetime | None
    end: datetime | None


def _when(raw: str, zone: ZoneInfo, what: str) -> datetime | None:
    """A `datetime-local` or `date` field in the support team's time zone; '' → None."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ScopeError(f"{what}: {raw!r} is not a date (2026-03-01 or 2026-03-01T10:00)") from None
    return value.replace(tzinfo=zone).astimezone(UTC) if value.tzinfo is None else value


def _text(form: dict[str, str], key: str, limit: int) -> str:
    return form.get(key, "").strip()[:limit]


def read_declaration(form: dict[str, str], zone: ZoneInfo) -> Declaration:
    """The declare form; `ScopeError` says (Korean / English) what is missing or wrong."""
    title, notice_ko = _text(form, "title", TITLE_MAX), _text(form, "notice_ko", NOTICE_MAX)
    if not title or not notice_ko:
        raise ScopeError("제목과 한국어 공지는 필수입니다. / A title and the Korean notice are required.")
    kind = form.get("scope", "all")
    if kind not in SCOPE_KINDS:
        raise ScopeError(f"scope: {kind!r}?")
    scope = IncidentScope("all")
    if kind == "orders":
        statuses = tuple(s for s in ORDER_STATUSES if form.get(f"status_{s}"))
        item = form.get("item", "").strip()[:100] or None
        since, until = (
            _when(form.get("since", ""), zone, "since"),
            _when(form.get("until", ""), zone, "until"),
        )
        if not (statuses or item or since or until):
            raise ScopeError(
                "주문 범위에는 상태·상품·기간 중 하나가 필요합니다. / Orders need a status, an item or dates."
            )
        scope = IncidentScope("orders", statuses, item, since, until)
    elif kind == "players":
        ids = players_from_csv(form.get("players_csv", ""))
        if not ids:
            raise ScopeError("CSV에서 플레이어 ID를 찾지 못했습니다. / No player ids in the CSV.")
        scope = IncidentScope("players", player_ids=ids)
    start, end = _when(form.get("start", ""), zone, "start"), _when(form.get("end", ""), zone, "end")
    if start and end and end <= start:
        raise ScopeError("종료는 시작 이후여야 합니다. / The end must be after the start.")
    return Declaration(title, notice_ko, _text(form, "notice_en", NOTICE_MAX), scope, start, end)


def _krw_field(form: dict[str, str], key: str) -> str:
    raw = form.get(key, "").strip().replace(",", "")
    if raw and not (raw.isascii() and raw.isdigit()):
        raise ScopeError(f"{key}: {raw!r} is not an amount in KRW")
    return raw


def plan_text(form: dict[str, str]) -> str:
    """The compensation form as `/incident compensate`'s plan: `5000 per=order budget=… cap=…`."""
    amount = _krw_field(form, "amount")
    if not amount:
        raise ScopeError("보상 금액을 입력하세요. / Enter an amount.")
    per = form.get("per", "order")
    words = [amount, f"per={per if per in ('order', 'player') else 'order'}"]
    for key in ("budget", "cap"):
        if value := _krw_field(form, key):
            words.append(f"{key}={value}")
    return " ".join(words)


def limits_of(rules: Any) -> Limits:
    """The coupon rules a preview is measured against (as `/incident compensate` builds them)."""
    return Limits(
        eligible_statuses=tuple(rules.eligible_statuses),
        max_amount=rules.max_amount,
        staff_max_amount=rules.staff_max_amount,
        daily_max_count=rules.daily_max_count,
        daily_max_amount=rules.daily_max_amount,
    )


def scope_words(scope: IncidentScope, zone: ZoneInfo, lang: str) -> str:
    """The scope as staff read it on the page."""
    ko = lang == "ko"
    if scope.kind == "all":
        return "모든 플레이어" if ko else "all players"
    if scope.kind == "players":
        head = ", ".join(scope.player_ids[:5]) + (" …" if len(scope.player_ids) > 5 else "")
        n = len(scope.player_ids)
        return f"CSV 플레이어 {n:,}명 ({head})" if ko else f"{n:,} players from a CSV ({head})"
    parts = []
    if scope.statuses:
        names = [ORDER_STATUSES[s] if ko else s for s in scope.statuses]
        parts.append(("상태 " if ko else "status ") + ", ".join(names))
    if scope.item:
        parts.append(("상품 " if ko else "item ") + scope.item)
    for word, value in (("since", scope.since), ("until", scope.until)):
        if value is not None:
            label = {"since": "부터", "until": "까지"}[word] if ko else word
            day = value.astimezone(zone).strftime("%Y-%m-%d %H:%M")
            parts.append(f"{day} {label}" if ko else f"{label} {day}")
    return ("주문: " if ko else "orders: ") + " · ".join(parts)
