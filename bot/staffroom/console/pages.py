"""What every staff console route shares: the session and CSRF checks, page rendering with the console's
headers, the language and time zone of the page, and small responses (assets, CSV, redirects)."""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import Request
from fastapi.responses import (
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from jinja2 import Environment, FileSystemLoader, select_autoescape

from bot.guard_rules import action_words, rule_of, rule_words
from bot.staffroom.console import auth
from bot.staffroom.console.auth import SESSION_COOKIE, StaffUser
from bot.staffroom.console.flashes import KEY_PATTERN, FlashBox, owner_of
from bot.vocabulary import ThreadId
from bot.vocabulary.dates import day_time_text
from bot.vocabulary.language import HANGUL_RANGE
from bot.vocabulary.rule_names import coupon_rule_words

CONSOLE_CHANNEL = "web:staff-console"
"""The `channel` of commands typed in the console that concern no conversation (approvals, ledger)."""
ORDER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
THREAD_ID = re.compile(r"^[A-Za-z0-9_:.\-]{1,100}$")
LANGS = ("ko", "en")
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)
STATE_LABELS = {
    "answering": ("봇 응답 중", "bot answering"),
    "waiting": ("대기", "waiting"),
    "handed_off": ("운영진 응대", "handed off"),
    "escalated": ("에스컬레이션", "escalated"),
}
NAV = (
    ("conversations", "대화", "Conversations"),
    ("approvals", "승인 대기", "Approvals"),
    ("incidents", "장애", "Incidents"),
    ("ledger", "쿠폰 원장", "Ledger"),
    ("grants", "게임 지급", "Game grants"),
    ("audit", "감사 기록", "Audit"),
    ("dashboard", "대시보드", "Dashboard"),
    ("policies", "정책", "Policies"),
    ("gaps", "미답변 질문", "Unanswered"),
    ("replies", "저장 답변", "Saved replies"),
    ("sessions", "세션", "Sessions"),
)


class Refused(Exception):
    """No staff session (401) or a bad CSRF token (403)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _here() -> Path:
    return Path(str(resources.files("bot.staffroom.console")))


_env = Environment(
    loader=FileSystemLoader(str(_here() / "templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def lang_of(request: Request) -> str:
    lang = request.query_params.get("lang") or request.cookies.get("arca_staff_lang") or "ko"
    return lang if lang in LANGS else "ko"


def conversations_of(request: Request) -> Any:
    return request.app.state.web.conversations


def is_secure(request: Request) -> bool:
    return request.url.scheme == "https" or bool(getattr(request.app.state.web, "secure_cookies", False))


def with_console_headers(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


THREAD_PLACES = {
    "web": ("웹 위젯", "Web widget"),
    "discord": ("Discord 채널", "Discord channel"),
    "dm": ("Discord DM", "Discord DM"),
    "console": ("터미널", "Terminal"),
    "replay": ("재생", "Replay"),
}
"""Where a conversation happens, in words, by its thread id's kind."""


def thread_words(thread_id: str, lang: str) -> str:
    """`웹 위젯 · 플레이어 P100` (`Web widget · player P100`): a conversation's id as staff read it."""
    tid = ThreadId(thread_id)
    ko = lang == "ko"
    place = THREAD_PLACES.get(tid.kind)
    if place is None:
        return ""
    words = place[0] if ko else place[1]
    parts = tid.web_parts
    if parts is not None:
        identity = parts[0]
        if identity.startswith("anon-"):
            return f"{words} · {'비회원 방문자' if ko else 'anonymous visitor'}"
        return f"{words} · {'플레이어' if ko else 'player'} {identity}"
    return words


def render_html(
    template: str, *, lang: str, zone: ZoneInfo, user: StaffUser | None, path: str, **ctx: Any
) -> str:
    """A console template as HTML (pages and the fragments the live streams push)."""

    def t(ko: str, en: str) -> str:
        return ko if lang == "ko" else en

    def at(when: datetime | None, fmt: str) -> str:
        return when.astimezone(zone).strftime(fmt) if when is not None else ""

    def day_time(when: datetime | None, *, year: bool = False) -> str:
        """`3월 3일(화) 14:05` for Korean staff, `Tue Mar 3 14:05` for English (never a US date)."""
        return "" if when is None else day_time_text(when, lang, zone, year=year)

    return _env.get_template(template).render(
        t=t,
        at=at,
        day_time=day_time,
        rule_words=lambda rule: rule_words(rule, lang),
        action_words=lambda action: action_words(action, lang),
        rule_of=rule_of,
        thread_words=lambda thread_id: thread_words(thread_id, lang),
        coupon_rule_words=lambda key: coupon_rule_words(key, lang),
        lang=lang,
        user=user,
        nav=NAV,
        state_labels=STATE_LABELS,
        path=path,
        **ctx,
    )


def render(
    request: Request, template: str, user: StaffUser | None, status: int = 200, **ctx: Any
) -> Response:
    lang = lang_of(request)
    html = render_html(template, lang=lang, zone=zone_of(request), user=user, path=request.url.path, **ctx)
    response = HTMLResponse(html, status_code=status)
    if request.query_params.get("lang") in LANGS:
        response.set_cookie(
            "arca_staff_lang", lang, max_age=31_536_000, samesite="strict", path="/staff", httponly=True
        )
    return with_console_headers(response)


def zone_of(request: Request) -> ZoneInfo:
    """Times are shown in the support team's time zone (`ARCA_TIMEZONE`, the daily caps' calendar)."""
    try:
        return ZoneInfo(conversations_of(request).services.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


async def require_user(request: Request) -> StaffUser:
    """The signed-in staff member; a player's bearer token or visitor cookie is no staff session."""
    user = await auth.session_user(conversations_of(request).store, request.cookies.get(SESSION_COOKIE))
    if user is None:
        raise Refused(401, "no_session")
    return user


async def form_of(request: Request) -> dict[str, str]:
    """The urlencoded form body (no multipart: the console only posts small forms)."""
    body = (await request.body()).decode("utf-8", "replace")
    # No NUL in what is stored: PostgreSQL refuses it in text.
    return {k: v[0].replace("\x00", "") for k, v in parse_qs(body, keep_blank_values=True).items()}


async def require_post(request: Request) -> tuple[StaffUser, dict[str, str]]:
    user = await require_user(request)
    form = await form_of(request)
    if not auth.csrf_ok(user, request.headers.get("x-csrf-token") or form.get("csrf")):
        raise Refused(403, "csrf")
    return user, form


async def dispatch(request: Request, user: StaffUser, text: str, channel: str = CONSOLE_CHANNEL) -> Any:
    """Run a staff command exactly as Discord does (same handler, same audit row)."""
    conv = conversations_of(request)
    return await conv.staff.dispatch(
        text, actor=user.actor(conv.staff_role), channel=channel, conversations=conv
    )


def back(
    request: Request, path: str, reply: Any | None = None, *, kept: dict[str, str] | None = None
) -> Response:
    """A redirect to `path` (post/redirect/get) that shows `reply` there, with the form's values `kept`
    (everything but its CSRF token) put back into the form when the reply refused them."""
    url = path
    if reply is not None:
        box: FlashBox = request.app.state.staff_flashes
        values = {k: v for k, v in (kept or {}).items() if k != "csrf"}
        key = box.put(
            reply.text[:1000], bool(reply.ok), owner_of(request.cookies.get(SESSION_COOKIE)), values
        )
        sep = "&" if "?" in url else "?"
        # `ok` is a hint for scripts and tests; the page shows only the flash the server kept.
        url = f"{url}{sep}ok={int(bool(reply.ok))}&flash={key}"
    return with_console_headers(RedirectResponse(url, status_code=303))


FORM_KEYS_KEPT = 10_000
"""Sent reply forms remembered (per process) to refuse a second press; the oldest are forgotten first."""


REPEAT_SECONDS = 30.0
"""A form sent without its key (a script, a replayed request) counts as a repeat of the same words from the
same staff member to the same conversation within this many seconds."""


def claim_form(request: Request, key: str, *, same: tuple[str, ...] = ()) -> bool:
    """True the first time a form's key is sent. A form without a key is named by what it says (`same`:
    who, where, what) and passes once per `REPEAT_SECONDS`. No await between the check and the claim:
    two parallel posts of one form cannot both pass."""
    sent: OrderedDict[str, float | None] = request.app.state.staff_forms_sent
    if not key:
        if not same:
            return True
        key = "same:" + hashlib.sha256("\x1f".join(same).encode()).hexdigest()
        now, at = time.monotonic(), sent.get(key)
        if at is not None and now - at < REPEAT_SECONDS:
            return False
        sent[key] = now
        sent.move_to_end(key)
    elif key in sent:
        return False
    else:
        sent[key] = None
    while len(sent) > FORM_KEYS_KEPT:
        sent.popitem(last=False)
    return True


def ledger_row(c: Any) -> list[Any]:
    return [
        c.id,
        c.code,
        c.order_id,
        c.player_id,
        c.amount,
        c.status,
        c.issued_by,
        c.reason,
        c.created_at,
        c.revoked_at,
    ]


def list_position(request: Request) -> tuple[int, str]:
    """The conversation list's `?page=` (from 1) and `?q=` search text."""
    page = request.query_params.get("page", "1")
    search = request.query_params.get("q", "").strip()[:100]
    return (max(1, int(page)) if re.fullmatch(r"[0-9]{1,5}", page) else 1), search


def flash_of(request: Request) -> dict[str, Any]:
    """The page's flash (`?flash=KEY` of this session's redirect) and the form values it kept; nothing
    for a key that is unknown, expired or another session's, and never text from the query string."""
    key = request.query_params.get("flash", "")
    flash = None
    if re.fullmatch(KEY_PATTERN, key):
        flash = request.app.state.staff_flashes.get(key, owner_of(request.cookies.get(SESSION_COOKIE)))
    if flash is None:
        return {"flash": None, "kept": {}}
    return {"flash": in_one_language(flash.text, lang_of(request)), "flash_ok": flash.ok, "kept": flash.kept}


_HALVES = re.compile(
    rf"^(?P<mark>[^\w\s'\"#/(\[]*\s*)(?P<ko>.*?[{HANGUL_RANGE}].*?)\s+/\s+(?P<en>[^{HANGUL_RANGE}]+)$"
)
"""A staff command's one-line reply written "한국어 … / English …" (the Discord form): both halves."""


def in_one_language(text: str, lang: str) -> str:
    """The staff member's half of a two-language staff reply ("플레이어 P9를 찾을 수 없습니다. / No player P9."
    → the Korean or the English sentence, with its leading ⚠/✅ kept); anything else unchanged."""
    if "\n" in text:
        return text
    halves = _HALVES.match(text)
    if halves is None:
        return text
    return halves["mark"] + (halves["ko"] if lang == "ko" else halves["en"]).strip()


def asset_response(name: str, media_type: str) -> Response:
    response = Response((_here() / "static" / name).read_bytes(), media_type=media_type)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def csv_response(body: str, filename: str) -> Response:
    response = PlainTextResponse(
        "\ufeff" + body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
    return with_console_headers(response)


def csv_stream(chunks: AsyncIterator[str], filename: str) -> Response:
    """A CSV download written as it is read (the audit log has no size limit)."""

    async def body() -> AsyncIterator[str]:
        yield "\ufeff"
        async for chunk in chunks:
            yield chunk

    response = StreamingResponse(
        body(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
    return with_console_headers(response)


def policy_documents(index: Any) -> list[tuple[str, list[str]]]:
    """The policy documents of the index's folder and their section headings."""
    folder = getattr(index, "policies_dir", None)
    if folder is None or not Path(folder).is_dir():
        return []
    out = []
    for path in sorted(Path(folder).glob("*.md")):
        heads = [
            line.lstrip("#").strip()
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.startswith("#")
        ]
        out.append((path.name, heads))
    return out
