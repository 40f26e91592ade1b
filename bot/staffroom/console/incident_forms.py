"""What the console's incident forms send, read into the values of `bot.incidents`: the declaration
(title, notices, start and planned end, scope: all players / orders by status, item and dates / players of
an uploaded CSV) and the compensation plan (the same plan text `/incident compensate` reads)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.incidents import ScopeError, players_from_csv
from bot.store import ORDER_STATUSES
from bot.store.incident_scope import IncidentScope
from bot.vocabulary.dates import day_time_text

TITLE_MAX, NOTICE_MAX = 200, 2000
SCOPE_KINDS = ("all", "orders", "players")
YEARS = (2000, 2100)
"""Dates outside these years are refused: a typo (0001-01-01) must not reach the time zone arithmetic."""
MAX_KRW = 1_000_000_000_000
"""The largest amount, budget or cap a form may hold (1조 원): far above any real plan, far below the
database's 64-bit integers."""
FIELD_NAMES = {
    "start": ("시작", "Start"),
    "end": ("예상 종료", "Planned end"),
    "since": ("주문일 부터", "Ordered since"),
    "until": ("주문일 까지", "Ordered until"),
    "amount": ("금액", "Amount"),
    "budget": ("예산", "Budget"),
    "cap": ("플레이어당 한도", "Per-player cap"),
}


class FormError(ScopeError):
    """A form field that cannot be used, said in Korean and in English (the page shows the staff member's
    language); `str()` keeps both, as every `ScopeError` does."""

    def __init__(self, ko: str, en: str, field: str = "") -> None:
        super().__init__(f"{ko} / {en}")
        self.ko, self.en, self.field = ko, en, field

    def text(self, lang: str) -> str:
        return self.ko if lang == "ko" else self.en


def _shown(raw: str) -> str:
    """What was typed, short enough for one line of an error."""
    return raw if len(raw) <= 40 else raw[:40] + "…"


@dataclass(frozen=True)
class Declaration:
    title: str
    notice_ko: str
    notice_en: str
    scope: IncidentScope
    start: datetime | None
    end: datetime | None


def _when(raw: str, zone: ZoneInfo, field: str) -> datetime | None:
    """A `datetime-local` or `date` field in the support team's time zone; '' → None."""
    raw = raw.strip()
    if not raw:
        return None
    ko, en = FIELD_NAMES[field]
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise FormError(
            f"{ko}: 날짜 형식이 아닙니다({_shown(raw)}). 예: 2026-03-01 또는 2026-03-01T10:00",
            f"{en}: not a date ({_shown(raw)}); e.g. 2026-03-01 or 2026-03-01T10:00",
            field,
        ) from None
    if not YEARS[0] <= value.year <= YEARS[1]:
        raise FormError(
            f"{ko}: {YEARS[0]}년부터 {YEARS[1]}년 사이의 날짜를 입력하세요({_shown(raw)}).",
            f"{en}: enter a date between {YEARS[0]} and {YEARS[1]} ({_shown(raw)}).",
            field,
        )
    return value.replace(tzinfo=zone).astimezone(UTC) if value.tzinfo is None else value.astimezone(UTC)


def _text(form: dict[str, str], key: str, limit: int) -> str:
    return form.get(key, "").strip()[:limit]


def _players(text: str) -> tuple[str, ...]:
    try:
        return players_from_csv(text)
    except csv.Error:  # a field past the csv module's size limit, a stray quote: not a list of players
        raise FormError(
            "CSV를 읽을 수 없습니다. 한 줄에 플레이어 ID 하나씩(또는 player_id 열) 넣어 주세요.",
            "The CSV cannot be read; put one player id a line (or a player_id column).",
            "players_csv",
        ) from None


def read_declaration(form: dict[str, str], zone: ZoneInfo) -> Declaration:
    """The declare form; `FormError` says (Korean / English) what is missing or wrong."""
    title, notice_ko = _text(form, "title", TITLE_MAX), _text(form, "notice_ko", NOTICE_MAX)
    if not title or not notice_ko:
        raise FormError(
            "제목과 한국어 공지는 필수입니다.", "A title and the Korean notice are required.", "title"
        )
    kind = form.get("scope", "all")
    if kind not in SCOPE_KINDS:
        raise FormError("영향 범위를 고르세요.", "Choose who is affected.", "scope")
    scope = IncidentScope("all")
    if kind == "orders":
        statuses = tuple(s for s in ORDER_STATUSES if form.get(f"status_{s}"))
        item = form.get("item", "").strip()[:100] or None
        since, until = (
            _when(form.get("since", ""), zone, "since"),
            _when(form.get("until", ""), zone, "until"),
        )
        if not (statuses or item or since or until):
            raise FormError(
                "주문 범위에는 상태·상품·기간 중 하나가 필요합니다.",
                "Orders need a status, an item or dates.",
                "scope",
            )
        scope = IncidentScope("orders", statuses, item, since, until)
    elif kind == "players":
        ids = _players(form.get("players_csv", ""))
        if not ids:
            raise FormError(
                "CSV에서 플레이어 ID를 찾지 못했습니다.", "No player ids in the CSV.", "players_csv"
            )
        scope = IncidentScope("players", player_ids=ids)
    start, end = _when(form.get("start", ""), zone, "start"), _when(form.get("end", ""), zone, "end")
    if start and end and end <= start:
        raise FormError(
            "예상 종료는 시작 이후여야 합니다.", "The planned end must be after the start.", "end"
        )
    return Declaration(title, notice_ko, _text(form, "notice_en", NOTICE_MAX), scope, start, end)


def _krw_field(form: dict[str, str], key: str) -> str:
    raw = form.get(key, "").strip().replace(",", "").removesuffix("원").strip()
    if not raw:
        return raw
    ko, en = FIELD_NAMES[key]
    if not (raw.isascii() and raw.isdigit()) or int(raw) <= 0:
        raise FormError(
            f"{ko}: 원 단위의 양의 정수를 입력하세요({_shown(raw)}).",
            f"{en}: enter a positive whole amount in KRW ({_shown(raw)}).",
            key,
        )
    if int(raw) > MAX_KRW:
        raise FormError(
            f"{ko}: 너무 큰 금액입니다(최대 {MAX_KRW:,}원).",
            f"{en}: the amount is too large (at most {MAX_KRW:,} KRW).",
            key,
        )
    return str(int(raw))


def plan_text(form: dict[str, str]) -> str:
    """The compensation form as `/incident compensate`'s plan: `5000 per=order budget=… cap=…`."""
    amount = _krw_field(form, "amount")
    if not amount:
        raise FormError("보상 금액을 입력하세요.", "Enter an amount.", "amount")
    per = form.get("per", "order")
    words = [amount, f"per={per if per in ('order', 'player') else 'order'}"]
    for key in ("budget", "cap"):
        if value := _krw_field(form, key):
            words.append(f"{key}={value}")
    return " ".join(words)


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
            day = day_time_text(value, lang, zone, year=True)
            parts.append(f"{day}{label}" if ko else f"{label} {day}")
    return ("주문: " if ko else "orders: ") + " · ".join(parts)
