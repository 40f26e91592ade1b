"""What staff type for an incident's scope and compensation plan, read into typed values.

Scope: `all` · `status=delayed,shipping item=굿즈 since=2026-03-01 until=2026-03-03` ·
`players=P100,P200` (or the player ids of an uploaded CSV, `players_from_csv`).
Plan: `5000 per=order budget=1000000 cap=10000` (per defaults to `order`).
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.store.incident_grant import Plan
from bot.store.incident_scope import IncidentScope
from bot.store.models import ORDER_STATUSES


class ScopeError(ValueError):
    """What was typed is not a scope or a plan; the message says what is accepted."""


SCOPE_HELP = (
    "scope: all | status=delayed,shipping item=굿즈 since=2026-03-01 until=2026-03-03 | players=P100,P200"
)
PLAN_HELP = "plan: <amount> [per=order|player] [budget=KRW] [cap=KRW], e.g. 5000 per=order budget=1000000"


def _words(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise ScopeError(f"{word!r} is not key=value. {SCOPE_HELP}")
        out[key.lower()] = value
    return out


def _when(text: str, zone: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise ScopeError(f"{text!r} is not a date (2026-03-01 or 2026-03-01T10:00)") from None
    if not 2000 <= value.year <= 2100:  # 0001-01-01 would overflow the time zone arithmetic
        raise ScopeError(f"{text!r}: enter a date between 2000 and 2100")
    return value.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC) if value.tzinfo is None else value


def parse_scope(text: str, *, zone: str = "Asia/Seoul") -> IncidentScope:
    """The scope staff typed; dates without a zone are in `zone` (ARCA_TIMEZONE)."""
    text = text.strip()
    if text.lower() in ("", "all", "전체"):
        return IncidentScope("all")
    words = _words(text)
    unknown = set(words) - {"status", "item", "since", "until", "players"}
    if unknown:
        raise ScopeError(f"unknown scope key(s) {sorted(unknown)}. {SCOPE_HELP}")
    statuses = tuple(s for s in words.get("status", "").split(",") if s)
    bad = [s for s in statuses if s not in ORDER_STATUSES]
    if bad:
        raise ScopeError(f"unknown order status {bad}; one of {', '.join(ORDER_STATUSES)}")
    players = tuple(p for p in words.get("players", "").split(",") if p)
    return IncidentScope(
        kind="players" if players else "orders",
        statuses=statuses,
        item=words.get("item"),
        since=_when(words["since"], zone) if "since" in words else None,
        until=_when(words["until"], zone) if "until" in words else None,
        player_ids=players,
    )


_PLAYER_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def players_from_csv(text: str) -> tuple[str, ...]:
    """The player ids of an uploaded CSV: the `player_id` column if there is a header, else the first
    column; blank lines and repeats dropped, order kept."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r and r[0].strip()]
    if not rows:
        return ()
    head = [c.strip().lower() for c in rows[0]]
    col = head.index("player_id") if "player_id" in head else 0
    if "player_id" in head or not _PLAYER_ID.fullmatch(rows[0][0].strip()):
        rows = rows[1:]
    ids = [r[col].strip() for r in rows if len(r) > col and _PLAYER_ID.fullmatch(r[col].strip())]
    return tuple(dict.fromkeys(ids))


MAX_PLAN_KRW = 1_000_000_000_000
"""The largest amount, budget or cap of a plan (1조 원)."""


def _krw(raw: str) -> int:
    digits = raw.strip().removesuffix("원").removesuffix("KRW").replace(",", "")
    if not digits.isascii() or not digits.isdigit() or int(digits) <= 0:
        raise ScopeError(f"{raw!r} is not a positive amount in KRW. {PLAN_HELP}")
    if int(digits) > MAX_PLAN_KRW:  # the database keeps 64-bit integers
        raise ScopeError(f"{raw!r} is too large (at most {MAX_PLAN_KRW:,} KRW). {PLAN_HELP}")
    return int(digits)


def parse_plan(incident_id: int, text: str, *, valid_days: int = 30) -> Plan:
    """`5000 per=order budget=1000000 cap=10000` → a `Plan`."""
    head, _, rest = text.strip().partition(" ")
    if not head:
        raise ScopeError(f"missing amount. {PLAN_HELP}")
    amount = _krw(head)
    words = {}
    for word in rest.split():
        key, sep, value = word.partition("=")
        if not sep or key.lower() not in ("per", "budget", "cap"):
            raise ScopeError(f"{word!r}? {PLAN_HELP}")
        words[key.lower()] = value
    per = words.get("per", "order").lower()
    if per not in ("order", "player"):
        raise ScopeError(f"per= must be order or player. {PLAN_HELP}")
    budget = _krw(words["budget"]) if "budget" in words else None
    cap = _krw(words["cap"]) if "cap" in words else None
    return Plan(incident_id, per, amount, budget, cap, valid_days)
