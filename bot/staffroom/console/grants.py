"""The console's "game grants" page (`/staff/grants`): the outbox of grants and revokes posted to the
game (DESIGN.md §11.2) — pending, delivered, dead letters with the backend's reason (escaped like every
text here) — and a Retry button per dead letter (staff session and CSRF, audited as `delivery.retry`)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import Response

from bot.staffroom.console.pages import (
    back,
    conversations_of,
    flash_of,
    lang_of,
    render,
    require_post,
    require_user,
)
from bot.store.game_deliveries import STATES

GRANT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
SHOWN = 200


class _Said:
    """What `back` shows after an action (the shape of a staff command's reply)."""

    def __init__(self, ok: bool, text: str) -> None:
        self.ok, self.text = ok, text


def add_grant_routes(router: APIRouter) -> None:
    @router.get("/grants")
    async def grants_page(request: Request) -> Response:
        user = await require_user(request)
        store = conversations_of(request).store
        state = request.query_params.get("state", "")
        state = state if state in STATES else ""
        jobs = await store.game_deliveries.list(state=state or None, limit=SHOWN)
        counts = await store.game_deliveries.counts()
        return render(
            request,
            "game_deliveries.html",
            user,
            jobs=jobs,
            counts=counts,
            state=state,
            states=STATES,
            **flash_of(request),
        )

    @router.post("/grants/{grant_id}/retry")
    async def grant_retry(grant_id: str, request: Request) -> Response:
        user, _form = await require_post(request)
        if not GRANT_ID.fullmatch(grant_id):
            return render(request, "message.html", user, status=400, text="bad request")
        store = conversations_of(request).store
        changed = await store.game_deliveries.retry(grant_id)
        await store.audit(
            actor=user.actor(conversations_of(request).staff_role).label,
            action="delivery.retry",
            target=grant_id,
            code="OK" if changed else "NOT_FOUND",
        )
        lang_ko = lang_of(request) == "ko"
        if changed:
            text = f"{grant_id}: 다시 보냅니다" if lang_ko else f"{grant_id}: sending it again"
        else:
            text = f"{grant_id}: 실패한 지급이 아닙니다" if lang_ko else f"{grant_id}: not a dead letter"
        return back(request, "/staff/grants", _Said(bool(changed), text))
