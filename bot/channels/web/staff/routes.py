"""The staff console under `/staff` (issue 16): server-rendered pages on the web channel's server.

Nothing here answers without a staff session (401 for GET and POST alike, unknown paths included);
every POST also needs the session's CSRF token. Actions go through the same staff command handlers as
Discord (`StaffRegistry.dispatch`), so the ledger transitions and the audit rows are the same ones,
with the staff member's `staff:<id>` label.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from bot.channels.web.staff import auth, charts, queries
from bot.channels.web.staff.auth import SESSION_COOKIE, StaffUser
from bot.store import COUPON_STATUSES

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
    "handed_off": ("상담원 전환", "handed off"),
    "escalated": ("에스컬레이션", "escalated"),
}
NAV = (
    ("conversations", "대화", "Conversations"),
    ("approvals", "승인 대기", "Approvals"),
    ("ledger", "쿠폰 원장", "Ledger"),
    ("audit", "감사 기록", "Audit"),
    ("dashboard", "대시보드", "Dashboard"),
    ("policies", "정책", "Policies"),
    ("sessions", "세션", "Sessions"),
)


class Refused(Exception):
    """No staff session (401) or a bad CSRF token (403)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _here() -> Path:
    return Path(str(resources.files("bot.channels.web.staff")))


_env = Environment(
    loader=FileSystemLoader(str(_here() / "templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _lang(request: Request) -> str:
    lang = request.query_params.get("lang") or request.cookies.get("arca_staff_lang") or "ko"
    return lang if lang in LANGS else "ko"


def _conversations(request: Request) -> Any:
    return request.app.state.web.conversations


def _secure(request: Request) -> bool:
    return request.url.scheme == "https" or bool(getattr(request.app.state.web, "secure_cookies", False))


def _headers(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def render(
    request: Request, template: str, user: StaffUser | None, status: int = 200, **ctx: Any
) -> Response:
    lang = _lang(request)

    def t(ko: str, en: str) -> str:
        return ko if lang == "ko" else en

    zone = _zone(request)

    def at(when: datetime | None, fmt: str) -> str:
        return when.astimezone(zone).strftime(fmt) if when is not None else ""

    html = _env.get_template(template).render(
        t=t,
        at=at,
        lang=lang,
        user=user,
        nav=NAV,
        state_labels=STATE_LABELS,
        path=request.url.path,
        **ctx,
    )
    response = HTMLResponse(html, status_code=status)
    if request.query_params.get("lang") in LANGS:
        response.set_cookie(
            "arca_staff_lang", lang, max_age=31_536_000, samesite="strict", path="/staff", httponly=True
        )
    return _headers(response)


def _zone(request: Request) -> ZoneInfo:
    """Times are shown in the support team's time zone (`ARCA_TIMEZONE`, the daily caps' calendar)."""
    try:
        return ZoneInfo(_conversations(request).services.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


async def require_user(request: Request) -> StaffUser:
    """The signed-in staff member; a player's bearer token or visitor cookie is no staff session."""
    user = await auth.session_user(_conversations(request).store, request.cookies.get(SESSION_COOKIE))
    if user is None:
        raise Refused(401, "no_session")
    return user


async def form_of(request: Request) -> dict[str, str]:
    """The urlencoded form body (no multipart: the console only posts small forms)."""
    body = (await request.body()).decode("utf-8", "replace")
    return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}


async def require_post(request: Request) -> tuple[StaffUser, dict[str, str]]:
    user = await require_user(request)
    form = await form_of(request)
    if not auth.csrf_ok(user, request.headers.get("x-csrf-token") or form.get("csrf")):
        raise Refused(403, "csrf")
    return user, form


async def dispatch(request: Request, user: StaffUser, text: str, channel: str = CONSOLE_CHANNEL) -> Any:
    """Run a staff command exactly as Discord does (same handler, same audit row)."""
    conv = _conversations(request)
    return await conv.staff.dispatch(
        text, actor=user.actor(conv.staff_role), channel=channel, conversations=conv
    )


def back(request: Request, path: str, reply: Any | None = None) -> Response:
    url = path
    if reply is not None:
        sep = "&" if "?" in url else "?"
        url = f"{url}{sep}ok={int(bool(reply.ok))}&msg={quote(reply.text[:300])}"
    return _headers(RedirectResponse(url, status_code=303))


def staff_router() -> APIRouter:
    router = APIRouter(prefix="/staff", include_in_schema=False)

    # ---- sign-in (the only pages that answer without a session) -----------------------------------

    @router.get("/login")
    async def login_page(request: Request) -> Response:
        # The link only shows a button: chat apps fetch links to preview them, and a GET must not
        # spend the one-time token.
        token = request.query_params.get("token", "")
        return render(request, "login.html", None, token=token, failed=False)

    @router.post("/login")
    async def login(request: Request) -> Response:
        form = await form_of(request)
        conv = _conversations(request)
        got = await auth.redeem_link(
            conv.store, form.get("token", ""), user_agent=request.headers.get("user-agent")
        )
        if got is None:
            return render(request, "login.html", None, status=401, token="", failed=True)
        cookie, _user = got
        response = back(request, "/staff/conversations")
        response.set_cookie(
            SESSION_COOKIE,
            cookie,
            max_age=int(auth.MAX_AGE.total_seconds()),
            httponly=True,
            secure=_secure(request),
            samesite="strict",
            path="/staff",
        )
        return response

    @router.get("/login/staff.css")
    async def css() -> Response:
        return _asset("staff.css", "text/css; charset=utf-8")

    @router.get("/login/staff.js")
    async def js() -> Response:
        return _asset("staff.js", "text/javascript; charset=utf-8")

    # ---- pages -----------------------------------------------------------------------------------

    @router.api_route("", methods=["GET", "POST"])
    async def home(request: Request) -> Response:
        await require_user(request)
        return back(request, "/staff/conversations")

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        user, _ = await require_post(request)
        await auth.revoke_session(_conversations(request).store, user.session_id, by=user)
        response = back(request, "/staff/login")
        response.delete_cookie(SESSION_COOKIE, path="/staff")
        return response

    @router.get("/conversations")
    async def conversations_page(request: Request) -> Response:
        user = await require_user(request)
        rows = await queries.conversation_rows(_conversations(request))
        template = "conversation_rows.html" if request.query_params.get("fragment") else "conversations.html"
        return render(request, template, user, rows=rows, **_flash(request))

    @router.get("/conversations/{thread_id}")
    async def conversation_page(thread_id: str, request: Request) -> Response:
        user = await require_user(request)
        conv = _conversations(request)
        messages = await queries.history(conv.store, thread_id)
        template = "history.html" if request.query_params.get("fragment") else "conversation.html"
        return render(
            request,
            template,
            user,
            thread_id=thread_id,
            messages=messages,
            running=conv.is_running(thread_id),
            handed_off=await queries.is_handed_off(conv.store, thread_id),
            **_flash(request),
        )

    @router.post("/conversations/{thread_id}/{action}")
    async def conversation_action(thread_id: str, action: str, request: Request) -> Response:
        user, form = await require_post(request)
        conv = _conversations(request)
        here = f"/staff/conversations/{quote(thread_id, safe=':')}"
        if not THREAD_ID.match(thread_id) or action not in ("handoff", "resume", "reply"):
            return render(request, "message.html", user, status=400, text="bad request")
        if action in ("handoff", "resume"):
            return back(request, here, await dispatch(request, user, f"/{action}", channel=thread_id))
        text = form.get("text", "").strip()
        if not text:
            return back(request, here)
        await conv.memory.append(
            thread_id,
            {"role": "assistant", "content": text, "name": f"staff:{user.staff_id}"},
            kind="answer",  # shown to the player and kept in the history the bot reads
        )
        await conv.store.audit(
            actor=user.actor(conv.staff_role).label,
            action="console.reply",
            thread_id=thread_id,
            target=thread_id,
            code="OK",
            detail={"chars": len(text)},
        )
        return back(request, here)

    @router.get("/approvals")
    async def approvals_page(request: Request) -> Response:
        user = await require_user(request)
        rows = await queries.pending_coupons(_conversations(request).store)
        return render(request, "approvals.html", user, rows=rows, **_flash(request))

    @router.post("/approvals/{order_id}/{action}")
    async def approval_action(order_id: str, action: str, request: Request) -> Response:
        user, _ = await require_post(request)
        if not ORDER_ID.match(order_id) or action not in ("approve", "reject"):
            return render(request, "message.html", user, status=400, text="bad request")
        # Reject is `/coupon revoke` on a pending coupon (it becomes `rejected`), as the Discord button.
        command = "approve" if action == "approve" else "revoke"
        reply = await dispatch(request, user, f"/coupon {command} {order_id}")
        return back(request, "/staff/approvals", reply)

    @router.get("/ledger")
    async def ledger_page(request: Request) -> Response:
        user = await require_user(request)
        conv = _conversations(request)
        q = request.query_params
        f = queries.CouponFilter(
            player=q.get("player", "").strip(),
            order=q.get("order", "").strip(),
            status=q.get("status", "").strip(),
            day=q.get("day", "").strip(),
        )
        rows = await queries.coupons(conv.store, f, conv.services.timezone)
        if q.get("format") == "csv":
            header = ["id", "code", "order_id", "player_id", "amount", "status", "issued_by", "reason"]
            header += ["created_at", "revoked_at"]
            body = queries.to_csv(header, [_ledger_row(c) for c, _ in rows])
            return _csv(body, "ledger.csv")
        return render(
            request, "ledger.html", user, rows=rows, f=f, statuses=COUPON_STATUSES, **_flash(request)
        )

    @router.post("/ledger/{order_id}/revoke")
    async def ledger_revoke(order_id: str, request: Request) -> Response:
        user, form = await require_post(request)
        if not ORDER_ID.match(order_id):
            return render(request, "message.html", user, status=400, text="bad request")
        reason = " ".join(form.get("reason", "").split())[:300]
        reply = await dispatch(request, user, f"/coupon revoke {order_id} {reason}".rstrip())
        return back(request, "/staff/ledger", reply)

    @router.get("/audit")
    async def audit_page(request: Request) -> Response:
        user = await require_user(request)
        q = request.query_params
        f = queries.AuditFilter(
            actor=q.get("actor", "").strip(),
            action=q.get("action", "").strip(),
            code=q.get("code", "").strip(),
        )
        rows = await queries.audit_rows(_conversations(request).store, f)
        if q.get("format") == "csv":
            body = queries.to_csv(
                ["id", "at", "actor", "action", "thread_id", "target", "code", "detail"],
                [[r.id, r.at, r.actor, r.action, r.thread_id, r.target, r.code, r.detail] for r in rows],
            )
            return _csv(body, "audit.csv")
        return render(request, "audit.html", user, rows=rows, f=f)

    @router.get("/dashboard")
    async def dashboard_page(request: Request) -> Response:
        from bot.analytics.stats import compute_stats, conversations

        user = await require_user(request)
        conv = _conversations(request)
        try:
            days = max(1, min(int(request.query_params.get("days", "7")), 90))
        except ValueError:
            days = 7
        now = conv.clock()
        stats = await compute_stats(conv.store, days=days, now=now)
        top = {row["section"]: row["count"] for row in stats["top_policy_sections"]}
        # Per day (in the support time zone): conversations and the share the bot resolved alone.
        zone = _zone(request)
        per_day: dict[str, list[int]] = {}
        for c in await conversations(conv.store, since=now - timedelta(days=days), now=now):
            day = per_day.setdefault(c.started_at.astimezone(zone).date().isoformat(), [0, 0])
            day[0] += 1
            day[1] += c.resolution == "bot_resolved"
        days_sorted = sorted(per_day.items())
        return render(
            request,
            "dashboard.html",
            user,
            stats=stats,
            days=days,
            charts=charts,
            top_sections=top,
            per_day={d: n for d, (n, _) in days_sorted},
            resolved_per_day={d: round(100 * r / n) for d, (n, r) in days_sorted},
        )

    @router.get("/policies")
    async def policies_page(request: Request) -> Response:
        user = await require_user(request)
        conv = _conversations(request)
        index = conv.services.policy_search
        query = request.query_params.get("q", "").strip()[:300]
        hits: list[Any] = []
        error = None
        if query and index is not None:
            try:
                hits = await index.search(query, 5)
            except Exception as exc:  # an empty query, an unbuilt index: shown, not a 500
                error = f"{type(exc).__name__}: {exc}"
        return render(
            request,
            "policies.html",
            user,
            documents=_documents(index),
            query=query,
            hits=hits,
            error=error,
            available=index is not None,
            **_flash(request),
        )

    @router.post("/policies/reindex")
    async def reindex(request: Request) -> Response:
        user, _ = await require_post(request)
        return back(request, "/staff/policies", await dispatch(request, user, "/policy reindex"))

    @router.get("/sessions")
    async def sessions_page(request: Request) -> Response:
        user = await require_user(request)
        rows = await auth.list_sessions(_conversations(request).store)
        return render(request, "sessions.html", user, rows=rows, **_flash(request))

    @router.post("/sessions/{session_id}/revoke")
    async def sessions_revoke(session_id: int, request: Request) -> Response:
        user, _ = await require_post(request)
        await auth.revoke_session(_conversations(request).store, session_id, by=user)
        return back(request, "/staff/sessions")

    # Anything else under /staff: 401 without a session (never a 404 that tells what exists).
    @router.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def other(rest: str, request: Request) -> Response:
        user = await require_user(request)
        return render(request, "message.html", user, status=404, text="not found")

    return router


def _ledger_row(c: Any) -> list[Any]:
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


def _flash(request: Request) -> dict[str, Any]:
    msg = request.query_params.get("msg")
    return {"flash": msg, "flash_ok": request.query_params.get("ok") == "1"} if msg else {"flash": None}


def _asset(name: str, media_type: str) -> Response:
    response = Response((_here() / "static" / name).read_bytes(), media_type=media_type)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def _csv(body: str, filename: str) -> Response:
    response = PlainTextResponse(
        "\ufeff" + body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
    return _headers(response)


def _documents(index: Any) -> list[tuple[str, list[str]]]:
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


def install(app: Any) -> None:
    """Add the console to the web channel's app (`create_app`)."""
    from fastapi.responses import JSONResponse

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return render(request, "refused.html", None, status=exc.status, reason=exc.reason)
        return _headers(JSONResponse({"error": exc.reason}, status_code=exc.status))

    app.include_router(staff_router())
