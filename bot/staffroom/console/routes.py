"""The staff console under `/staff`: server-rendered pages on the web channel's server.

Nothing here answers without a staff session (401 for GET and POST alike, unknown paths included);
every POST also needs the session's CSRF token. Actions go through the same staff command handlers as
Discord (`StaffRegistry.dispatch`), so the ledger transitions and the audit rows are the same ones,
with the staff member's `staff:<id>` label.
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import Response

from bot.desk.hours import SupportHours
from bot.desk.staff_reply import send_staff_reply
from bot.staff.registry import StaffReply
from bot.staffroom.console import auth, charts, dashboard, queries
from bot.staffroom.console.attachments import add_attachment_routes, attachment_cards
from bot.staffroom.console.auth import SESSION_COOKIE
from bot.staffroom.console.flashes import FlashBox
from bot.staffroom.console.gaps import add_gap_routes
from bot.staffroom.console.grants import add_grant_routes
from bot.staffroom.console.incidents import add_incident_routes
from bot.staffroom.console.live import add_live_routes
from bot.staffroom.console.pages import (
    ORDER_ID,
    THREAD_ID,
    Refused,
    asset_response,
    back,
    claim_form,
    conversations_of,
    csv_response,
    csv_stream,
    dispatch,
    flash_of,
    form_of,
    is_secure,
    lang_of,
    ledger_row,
    list_position,
    policy_documents,
    render,
    require_post,
    require_user,
    with_console_headers,
    zone_of,
)
from bot.staffroom.console.replies import add_reply_routes
from bot.staffroom.console.sla import recent_reminders
from bot.store import COUPON_STATUSES, ORDER_STATUSES, utcnow
from bot.store.outbox import reply_statuses
from bot.store.saved_replies import list_replies
from tools.coupon_staff import approval_reason
from tools.policy_search import DEFAULT_TOP_K

log = logging.getLogger(__name__)

TAKE_OVER_FIRST = (
    "답장을 보내지 않았습니다. 먼저 '운영진이 이어받기'를 눌러 대화를 맡아 주세요. 그동안 봇이 답하고 있을 수 "
    "있습니다. 쓴 내용은 그대로 있습니다.",
    "The reply was not sent: press 'Take over' first (until then the bot may be answering). What you "
    "wrote is kept.",
)
POLICY_SEARCH_ERROR = (
    "정책 검색을 하지 못했습니다. 색인을 다시 만들거나 잠시 후 다시 시도해 주세요.",
    "The policy search failed; rebuild the index or try again shortly.",
)
LEDGER_DAY_ERROR = (
    "날짜는 2000년 1월 1일부터 2100년 12월 31일 사이로 입력하세요. 날짜 조건 없이 보여 드립니다.",
    "Enter a day between Jan 1, 2000 and Dec 31, 2100; shown without the day filter.",
)


def _t(request: Request, text: tuple[str, str]) -> str:
    return text[0] if lang_of(request) == "ko" else text[1]


def staff_router() -> APIRouter:
    router = APIRouter(prefix="/staff", include_in_schema=False)

    # ---- sign-in (the only pages that answer without a session) -----------------------------------

    @router.get("/login")
    async def login_page(request: Request) -> Response:
        # The link only shows a button: chat apps fetch links to preview them, and a GET must not
        # spend the one-time token.
        token = request.query_params.get("token", "")
        # The page's own token, as a cookie and a hidden field: a sign-in form another site submits
        # has neither, so nobody is signed in as someone else's link (login CSRF).
        page_token = secrets.token_urlsafe(24)
        response = render(request, "login.html", None, token=token, failed=False, login_csrf=page_token)
        response.set_cookie(
            auth.LOGIN_COOKIE,
            page_token,
            max_age=3600,
            httponly=True,
            secure=is_secure(request),
            samesite="strict",
            path="/staff/login",
        )
        return response

    @router.post("/login")
    async def login(request: Request) -> Response:
        form = await form_of(request)
        if not auth.login_form_ok(request.cookies.get(auth.LOGIN_COOKIE), form.get("login_csrf")):
            text = "로그인 링크를 다시 열어 주세요. / Open the sign-in link again."
            return render(request, "message.html", None, status=403, text=text)
        conv = conversations_of(request)
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
            secure=is_secure(request),
            samesite="strict",
            path="/staff",
        )
        return response

    @router.get("/login/staff.css")
    async def css() -> Response:
        return asset_response("staff.css", "text/css; charset=utf-8")

    @router.get("/login/staff.js")
    async def js() -> Response:
        return asset_response("staff.js", "text/javascript; charset=utf-8")

    # ---- live updates (SSE), before the pages whose paths they would otherwise match -----------------

    add_live_routes(router)
    add_reply_routes(router)

    # ---- pages -----------------------------------------------------------------------------------

    @router.api_route("", methods=["GET", "POST"])
    async def home(request: Request) -> Response:
        await require_user(request)
        return back(request, "/staff/conversations")

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        user, _ = await require_post(request)
        await auth.revoke_session(conversations_of(request).store, user.session_id, by=user)
        response = back(request, "/staff/login")
        response.delete_cookie(SESSION_COOKIE, path="/staff")
        return response

    @router.get("/conversations")
    async def conversations_page(request: Request) -> Response:
        user = await require_user(request)
        page, search = list_position(request)
        # One row more than a page: whether a next page exists.
        rows = await queries.conversation_rows(
            conversations_of(request), queries.PAGE_LIMIT + 1, page=page, search=search
        )
        return render(
            request,
            "conversations.html",
            user,
            rows=rows[: queries.PAGE_LIMIT],
            page=page,
            search=search,
            more=len(rows) > queries.PAGE_LIMIT,
            live_query=urlencode({"page": page, "q": search}),
            sla_reminders=await recent_reminders(
                conversations_of(request).store, utcnow(), request.app.state.web.sla_targets
            ),
            **flash_of(request),
        )

    @router.get("/conversations/{thread_id}")
    async def conversation_page(thread_id: str, request: Request) -> Response:
        user = await require_user(request)
        conv = conversations_of(request)
        messages = await queries.history(conv.store, thread_id)
        return render(
            request,
            "conversation.html",
            user,
            thread_id=thread_id,
            messages=messages,
            earlier=await queries.earlier_messages(conv.store, thread_id, len(messages)),
            facts=await queries.withheld_facts(conv.store, thread_id),
            running=conv.is_running(thread_id),
            reply_key=secrets.token_urlsafe(18),  # one per form shown: a second press sends nothing
            handed_off=await queries.is_handed_off(conv.store, thread_id),
            replies=await reply_statuses(conv.store, thread_id),
            saved_replies=await list_replies(conv.store),
            attachments=await attachment_cards(conv, thread_id),
            **flash_of(request),
        )

    @router.post("/conversations/{thread_id}/{action}")
    async def conversation_action(thread_id: str, action: str, request: Request) -> Response:
        user, form = await require_post(request)
        conv = conversations_of(request)
        here = f"/staff/conversations/{quote(thread_id, safe=':')}"
        if not THREAD_ID.match(thread_id) or action not in ("handoff", "resume", "reply"):
            return render(request, "message.html", user, status=400, text="bad request")
        if action in ("handoff", "resume"):
            reply = await dispatch(request, user, f"/{action}", channel=thread_id)
            # A reply refused for want of a takeover rides along, back into the reply box.
            carried = {k: form[k] for k in ("text", "saved_name", "values") if form.get(k)}
            carried = carried if action == "handoff" else {}
            return back(request, here, reply, kept=carried)
        text = form.get("text", "").strip()
        if not text:
            return back(request, here)
        if not await queries.is_handed_off(conv.store, thread_id):
            return back(
                request, here, StaffReply(_t(request, TAKE_OVER_FIRST), ok=False), kept={"text": text}
            )
        if not claim_form(request, form.get("reply_key", ""), same=(user.staff_id, thread_id, text)):
            return back(request, here)  # this form (or these words just now) was already sent
        # Queued for every thread kind, on purpose: the process that owns the thread's channel posts it
        # (Discord or the web widget), and one nobody posts (a `dm:` or terminal thread) is given up after
        # `REPLY_TTL` and shown on this page as not delivered (tests/web/staff/test_console_outbox_expiry.py)
        # — the staff member typed it here and sees each reply's delivery. A saved reply sent from this page
        # is queued the same way (`shows_delivery`, bot/staffroom/console/replies.py); `/reply` typed in a
        # terminal or a transcript differs for its reason (bot/staff/replies.py).
        await send_staff_reply(
            conv.memory, conv.store, thread_id, text, author=user.staff_id, signed=user.name, queue=True
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
        conv = conversations_of(request)
        rows = await queries.pending_coupons(conv.store)
        orders, unreadable = await queries.orders_shown(
            conv.store, conv.services.orders, [r[0] for r in rows]
        )
        return render(
            request,
            "approvals.html",
            user,
            rows=[(c, shown, thread, why) for (c, _o, thread, why), shown in zip(rows, orders, strict=True)],
            unreadable=unreadable,
            statuses=ORDER_STATUSES,
            why_text=approval_reason,
            **flash_of(request),
        )

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
        conv = conversations_of(request)
        q = request.query_params
        f = queries.CouponFilter(
            player=q.get("player", "").strip(),
            order=q.get("order", "").strip(),
            status=q.get("status", "").strip(),
            day=q.get("day", "").strip(),
        )
        csv = q.get("format") == "csv"  # the download has every row, the page the latest ones
        page, _ = list_position(request)
        limit = queries.PAGE_LIMIT
        # One row more than a page: whether a next page exists (the page says so, no silent cut).
        rows = await queries.coupons(
            conv.store,
            f,
            conv.services.timezone,
            None if csv else limit + 1,
            offset=0 if csv else (page - 1) * limit,
        )
        if csv:
            header = ["id", "code", "order_id", "player_id", "amount", "status", "issued_by", "reason"]
            header += ["created_at", "revoked_at"]
            body = queries.to_csv(header, [ledger_row(c) for c, _ in rows])
            return csv_response(body, "ledger.csv")
        shown = flash_of(request)
        if f.day and queries.day_start(f.day, conv.services.timezone) is None:
            # A day that is no date (or 0001-01-01) filters nothing; the page says so, the filter kept.
            shown |= {"flash": _t(request, LEDGER_DAY_ERROR), "flash_ok": False}
        return render(
            request,
            "ledger.html",
            user,
            rows=rows[:limit],
            more=len(rows) > limit,
            page=page,
            per_page=limit,
            f=f,
            statuses=COUPON_STATUSES,
            **shown,
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
        store = conversations_of(request).store
        if q.get("format") == "csv":  # every row, read and sent in batches
            return csv_stream(queries.audit_csv(store, f), "audit.csv")
        page, _ = list_position(request)
        limit = queries.PAGE_LIMIT
        rows = await queries.audit_rows(store, f, limit + 1, offset=(page - 1) * limit)
        return render(
            request,
            "audit.html",
            user,
            rows=rows[:limit],
            more=len(rows) > limit,
            page=page,
            per_page=limit,
            f=f,
        )

    @router.get("/dashboard")
    async def dashboard_page(request: Request) -> Response:
        user = await require_user(request)
        days = dashboard.window_of(request.query_params.get("days"))
        web = request.app.state.web
        context = await dashboard.dashboard_context(
            conversations_of(request),
            days,
            zone_of(request),
            idle_minutes=web.conversation_idle_minutes,
            resolution_window_minutes=web.resolution_window_minutes,
        )
        hours = web.support_hours or SupportHours.parse("", zone_of(request))
        return render(
            request,
            "dashboard.html",
            user,
            charts=charts,
            hours=hours,
            opens=hours.next_opening(conversations_of(request).clock()),
            **context,
        )

    @router.get("/policies")
    async def policies_page(request: Request) -> Response:
        user = await require_user(request)
        conv = conversations_of(request)
        index = conv.services.policy_search
        query = request.query_params.get("q", "").strip()[:300]
        hits: list[Any] = []
        error = None
        if query and index is not None:
            try:
                hits = await index.search(query, DEFAULT_TOP_K)  # what the bot's search is given
            except Exception:  # an empty query, an unbuilt index: said, not a 500 (details in the log)
                log.exception("the console's policy search failed")
                error = _t(request, POLICY_SEARCH_ERROR)
        return render(
            request,
            "policies.html",
            user,
            documents=policy_documents(index),
            query=query,
            hits=hits,
            error=error,
            available=index is not None,
            **flash_of(request),
        )

    @router.post("/policies/reindex")
    async def reindex(request: Request) -> Response:
        user, _ = await require_post(request)
        return back(request, "/staff/policies", await dispatch(request, user, "/policy reindex"))

    @router.get("/sessions")
    async def sessions_page(request: Request) -> Response:
        user = await require_user(request)
        rows = await auth.list_sessions(conversations_of(request).store)
        return render(request, "sessions.html", user, rows=rows, **flash_of(request))

    @router.post("/sessions/{session_id}/revoke")
    async def sessions_revoke(session_id: str, request: Request) -> Response:
        user, _ = await require_post(request)  # the session first: a stranger learns nothing from a 400
        if not re.fullmatch(r"[0-9]{1,18}", session_id):
            return render(request, "message.html", user, status=400, text="bad request")
        await auth.revoke_session(conversations_of(request).store, int(session_id), by=user)
        return back(request, "/staff/sessions")

    add_gap_routes(router)
    add_grant_routes(router)
    add_incident_routes(router)
    add_attachment_routes(router)

    # Anything else under /staff: 401 without a session (never a 404 that tells what exists).
    @router.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def other(rest: str, request: Request) -> Response:
        user = await require_user(request)
        return render(request, "message.html", user, status=404, text="not found")

    return router


def install(app: Any) -> None:
    """Add the console to the web channel's app (`create_app`)."""
    from fastapi.responses import JSONResponse

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        if "text/html" in request.headers.get("accept", ""):
            return render(request, "refused.html", None, status=exc.status, reason=exc.reason)
        return with_console_headers(JSONResponse({"error": exc.reason}, status_code=exc.status))

    app.state.staff_flashes = FlashBox()  # what a form post did, shown after its redirect (`pages.back`)
    app.include_router(staff_router())
