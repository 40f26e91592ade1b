"""The console's incidents (issue 25): the list, the declaration, the notice kept current, the close, and
the bulk compensation (plan → preview → Approve / Cancel → live progress → report with a CSV).

Every change goes through what `/incident …` and the CLI use: the registry's `incident update | close |
compensate` handlers (`dispatch_values`, so the same audit rows and checks), `bot.incidents.declare` for a
declaration (a CSV scope and a start time do not fit a command line) and `bot.incidents.preview` for the
page's preview. The issuing runs in the background; the progress is read from the store, so a run of
another process (the CLI, a restart resuming) shows the same way."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sse_starlette import ServerSentEvent

from bot.incidents import Limits, ScopeError, preview
from bot.incidents.declare import declare
from bot.incidents.notice import NOTICE_SEPARATOR, join_notice
from bot.incidents.progress import RunProgress, progress
from bot.incidents.report import build_report, report_csv
from bot.staff.registry import StaffReply
from bot.staffroom.console import auth, queries
from bot.staffroom.console.auth import SESSION_COOKIE, StaffUser
from bot.staffroom.console.incident_forms import (
    FormError,
    plan_text,
    read_declaration,
    scope_words,
)
from bot.staffroom.console.incident_runs import run_name, running_here, track
from bot.staffroom.console.pages import (
    CONSOLE_CHANNEL,
    asset_response,
    back,
    conversations_of,
    csv_response,
    flash_of,
    lang_of,
    render,
    require_post,
    require_user,
    with_console_headers,
    zone_of,
)
from bot.store import ORDER_STATUSES
from bot.store.incident_grant import EXCLUSION_REASONS
from bot.store.incidents import IncidentRecord
from bot.vocabulary.particles import particle
from bot.web_kit.body_limits import INCIDENT_FORM_CAP
from bot.web_kit.sse.response import sse_response

log = logging.getLogger(__name__)

INCIDENT_ID = re.compile(r"^[0-9]{1,9}$")
PROGRESS_INTERVAL = 0.5
"""Seconds between two reads of a run's progress while someone watches it."""
SESSION_EVERY = 20
"""A progress stream checks its session every this many reads (and ends once it no longer stands)."""
APPROVE_WAIT = 5.0
"""Seconds an approval waits for the run to take the plan before the page is shown again."""
EXCLUDED_SHOWN = 200
ACTIONS = ("update", "close", "compensate", "approve", "cancel")


async def _command(request: Request, user: StaffUser, name: str, values: dict[str, Any]) -> StaffReply:
    """An `/incident …` command with typed values, exactly as Discord's slash options run it."""
    conv = conversations_of(request)
    return await conv.staff.dispatch_values(
        conv.staff.commands[name],
        values,
        actor=user.actor(conv.staff_role),
        channel=CONSOLE_CHANNEL,
        conversations=conv,
    )


FINISHED = ("done", "cancelled", None)


def _refusal(request: Request, exc: ScopeError) -> StaffReply:
    """A form's refusal in the staff member's language (a console field's `FormError`), else as worded."""
    return StaffReply(exc.text(lang_of(request)) if isinstance(exc, FormError) else str(exc), ok=False)


def plan_seal(incident: IncidentRecord) -> str:
    """The plan an Approve button was drawn for: an approval of a plan changed since is refused."""
    return f"{incident.comp_per}:{incident.comp_amount}:{incident.comp_budget}:{incident.comp_player_cap}"


def _progress_data(got: RunProgress) -> dict[str, Any]:
    return {
        "done": got.done,
        "total": got.total,
        "issued": got.issued,
        "excluded": got.excluded,
        "spent": got.spent,
        "percent": int(got.fraction * 100),
        "state": got.state,
        "finished": got.state in FINISHED,
    }


async def _approve(request: Request, user: StaffUser, incident_id: int) -> StaffReply | None:
    """Start the approved run in the background; wait until it has taken the plan (or refused it)."""
    conv = conversations_of(request)
    task = asyncio.create_task(
        _command(request, user, "incident compensate", {"id": incident_id, "plan": "approve"}),
        name=run_name(incident_id),
    )
    track(request.app, task, incident_id)
    deadline = asyncio.get_running_loop().time() + APPROVE_WAIT
    while not task.done() and asyncio.get_running_loop().time() < deadline:
        incident = await conv.store.incidents.get(incident_id)
        if incident is not None and incident.comp_state != "previewed":
            return None
        await asyncio.sleep(0.05)
    if task.done() and not task.cancelled() and task.exception() is None:
        reply: StaffReply = task.result()
        return reply
    return None


def add_incident_routes(router: APIRouter) -> None:
    """`/staff/incidents…` (added before the console's catch-all)."""

    @router.get("/incidents.js")
    async def script(request: Request) -> Response:
        await require_user(request)
        return asset_response("incidents.js", "text/javascript; charset=utf-8")

    @router.get("/incidents")
    async def list_page(request: Request) -> Response:
        user = await require_user(request)
        conv, zone = conversations_of(request), zone_of(request)
        rows = await conv.store.incidents.list()
        return render(
            request,
            "incidents.html",
            user,
            rows=rows,
            statuses=ORDER_STATUSES,
            scope_text=lambda i: scope_words(i.scope, zone, lang_of(request)),
            now_local=conv.clock().astimezone(zone).strftime("%Y-%m-%dT%H:%M"),
            form_cap=INCIDENT_FORM_CAP,
            **flash_of(request),
        )

    @router.post("/incidents")
    async def declare_incident(request: Request) -> Response:
        user, form = await require_post(request)
        conv = conversations_of(request)
        try:
            d = read_declaration(form, zone_of(request))
        except ScopeError as exc:
            return back(request, "/staff/incidents", _refusal(request, exc), kept=form)
        incident = await declare(
            conv.store,
            title=d.title,
            notice_ko=d.notice_ko,
            notice_en=d.notice_en,
            scope=d.scope,
            start=d.start or conv.clock(),
            end=d.end,
            actor=user.actor(conv.staff_role).label,
        )
        done = StaffReply(
            f"장애 {particle(f'#{incident.id}', '을/를')} 등록했습니다. / Incident #{incident.id} opened."
        )
        return back(request, f"/staff/incidents/{incident.id}", done)

    @router.get("/incidents/{incident_id}")
    async def incident_page(incident_id: str, request: Request) -> Response:
        user = await require_user(request)
        if not INCIDENT_ID.match(incident_id):
            return render(request, "message.html", user, status=400, text="bad request")
        conv, zone = conversations_of(request), zone_of(request)
        incident = await conv.store.incidents.get(int(incident_id))
        if incident is None:
            return render(request, "message.html", user, status=404, text="not found")
        rules = conv.services.coupon_rules
        plan = incident.plan(rules.valid_days)
        shown = None
        if plan is not None and incident.comp_state == "previewed":
            shown = await preview(conv.store, incident, plan, Limits.of(rules), now=conv.clock())
        shown_progress = None
        if incident.comp_state in ("approved", "done"):
            got = await progress(conv.store, incident.id)
            shown_progress = _progress_data(got) if got is not None else None
        return render(
            request,
            "incident.html",
            user,
            i=incident,
            scope=scope_words(incident.scope, zone, lang_of(request)),
            shown=shown,
            reasons=EXCLUSION_REASONS,
            progress=shown_progress,
            seal=plan_seal(incident),
            running=running_here(request.app, incident.id),
            **flash_of(request),
        )

    @router.get("/incidents/{incident_id}/live")
    async def progress_live(incident_id: str, request: Request) -> Response:
        user = await require_user(request)
        if not INCIDENT_ID.match(incident_id):
            return render(request, "message.html", user, status=400, text="bad request")
        store = conversations_of(request).store
        cookie = request.cookies.get(SESSION_COOKIE)

        async def events() -> AsyncIterator[ServerSentEvent]:
            last: dict[str, Any] | None = None
            reads = 0
            while True:
                got = await progress(store, int(incident_id))
                if got is None:
                    return
                data = _progress_data(got)
                if data != last:
                    last = data
                    yield ServerSentEvent(data=json.dumps(data), event="progress")
                if data["finished"]:
                    return
                reads += 1
                if reads % SESSION_EVERY == 0 and not await auth.session_active(store, cookie):
                    return
                await asyncio.sleep(PROGRESS_INTERVAL)

        return with_console_headers(sse_response(events()))

    @router.get("/incidents/{incident_id}/report")
    async def report_page(incident_id: str, request: Request) -> Response:
        user = await require_user(request)
        if not INCIDENT_ID.match(incident_id):
            return render(request, "message.html", user, status=400, text="bad request")
        conv = conversations_of(request)
        incident = await conv.store.incidents.get(int(incident_id))
        if incident is None:
            return render(request, "message.html", user, status=404, text="not found")
        report = await build_report(conv.store, incident, now=conv.clock())
        if request.query_params.get("format") == "csv":
            # The report's own CSV, each cell made formula-safe as every console export is.
            rows = list(csv.reader(io.StringIO(report_csv(report))))
            return csv_response(queries.to_csv(None, rows), f"incident-{incident.id}.csv")
        return render(
            request,
            "incident_report.html",
            user,
            i=incident,
            r=report,
            reasons=EXCLUSION_REASONS,
            excluded_shown=EXCLUDED_SHOWN,
        )

    @router.post("/incidents/{incident_id}/{action}")
    async def incident_action(incident_id: str, action: str, request: Request) -> Response:
        user, form = await require_post(request)
        if not INCIDENT_ID.match(incident_id) or action not in ACTIONS:
            return render(request, "message.html", user, status=400, text="bad request")
        number, here = int(incident_id), f"/staff/incidents/{incident_id}"
        reply: StaffReply | None
        if action == "update":
            ko, en = form.get("notice_ko", "").strip(), form.get("notice_en", "").strip()
            if not ko:
                refused = FormError("한국어 공지는 필수입니다.", "The Korean notice is required.")
                return back(request, here, _refusal(request, refused), kept=form)
            if NOTICE_SEPARATOR in en:
                refused = FormError(
                    "영문 공지에는 '||'를 쓸 수 없습니다.", "The English notice may not contain '||'."
                )
                return back(request, here, _refusal(request, refused), kept=form)
            notice = join_notice(ko, en)  # a `||` inside the Korean notice stays in it
            reply = await _command(request, user, "incident update", {"id": number, "notice": notice})
        elif action == "close":
            reply = await _command(request, user, "incident close", {"id": number})
            reply = StaffReply(reply.text.splitlines()[0], ok=reply.ok)
        elif action == "compensate":
            try:
                plan = plan_text(form)
            except ScopeError as exc:
                return back(request, here, _refusal(request, exc), kept=form)
            reply = await _command(request, user, "incident compensate", {"id": number, "plan": plan})
            reply = None if reply.ok else StaffReply(reply.text.splitlines()[-1], ok=False)
        elif action == "cancel":
            reply = await _command(request, user, "incident compensate", {"id": number, "plan": "cancel"})
        else:
            incident = await conversations_of(request).store.incidents.get(number)
            if incident is not None and form.get("plan") and form["plan"] != plan_seal(incident):
                text = "보상 계획이 바뀌었습니다. 새 미리보기를 확인하세요. / The plan changed; check the new preview."
                return back(request, here, StaffReply(text, ok=False))
            reply = await _approve(request, user, number)
        return back(request, here, reply)
