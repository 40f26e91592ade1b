"""The console's saved replies (issue 26): `/staff/replies` lists, creates, edits and deletes them, and a
conversation page's reply box sends one (`…/saved-reply`). Every change goes through the staff commands
(`/replies save|delete`, `/reply`), so the checks, the audit rows and the delivery are Discord's."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from bot.desk.saved_replies import VARIABLES
from bot.staff.registry import StaffReply
from bot.staffroom.console.auth import StaffUser
from bot.staffroom.console.pages import (
    THREAD_ID,
    back,
    claim_form,
    conversations_of,
    flash_of,
    lang_of,
    render,
    require_post,
    require_user,
)
from bot.staffroom.console.queries import is_handed_off
from bot.store.saved_replies import list_replies


async def _run(
    request: Request,
    user: StaffUser,
    name: str,
    values: dict[str, str],
    channel: str,
    *,
    shows_delivery: bool = False,
) -> StaffReply:
    conv = conversations_of(request)
    return await conv.staff.dispatch_values(
        conv.staff.commands[name],
        values,
        actor=user.actor(conv.staff_role),
        channel=channel,
        conversations=conv,
        shows_delivery=shows_delivery,
    )


def _take_over_first(request: Request) -> str:
    if lang_of(request) == "ko":
        return "저장된 답변을 보내지 않았습니다. 먼저 '운영진이 이어받기'를 눌러 대화를 맡아 주세요."
    return "The saved reply was not sent: press 'Take over' first."


def add_reply_routes(router: APIRouter) -> None:
    """Register before the conversation pages: `…/{thread_id}/saved-reply` would match their actions."""

    @router.get("/replies")
    async def replies_page(request: Request) -> Response:
        user = await require_user(request)
        records = await list_replies(conversations_of(request).store)
        return render(
            request, "replies.html", user, replies=records, variables=VARIABLES, **flash_of(request)
        )

    @router.post("/replies")
    async def save(request: Request) -> Response:
        user, form = await require_post(request)
        ko, en = form.get("text_ko", "").strip(), form.get("text_en", "").strip()
        if "||" in ko or "||" in en:
            reply = StaffReply("⚠ '||' 는 쓸 수 없습니다. / '||' cannot be used in a reply.", ok=False)
        else:
            text = f"{ko} || {en}" if ko or en else ""
            reply = await _run(
                request, user, "replies save", {"name": form.get("name", ""), "text": text}, "console:staff"
            )
        # A refused reply (an unknown variable, a stray brace) comes back in its form, as typed.
        return back(request, "/staff/replies", reply, kept=None if reply.ok else form)

    @router.post("/replies/delete")
    async def delete(request: Request) -> Response:
        user, form = await require_post(request)
        reply = await _run(request, user, "replies delete", {"name": form.get("name", "")}, "console:staff")
        return back(request, "/staff/replies", reply)

    @router.post("/conversations/{thread_id}/saved-reply")
    async def send(thread_id: str, request: Request) -> Response:
        user, form = await require_post(request)
        if not THREAD_ID.match(thread_id):
            return render(request, "message.html", user, status=400, text="bad request")
        here = f"/staff/conversations/{quote(thread_id, safe=':')}"
        values = {"name": form.get("name", ""), "values": form.get("values", "")}
        if not await is_handed_off(conversations_of(request).store, thread_id):
            refused = StaffReply(_take_over_first(request), ok=False)
            return back(
                request, here, refused, kept={"saved_name": values["name"], "values": values["values"]}
            )
        same = (user.staff_id, thread_id, "saved", values["name"], values["values"])
        if not claim_form(request, form.get("reply_key", ""), same=same):
            return back(request, here)  # this form (or this reply just now) was already sent
        # Queued for every thread kind, as the page's reply box does (a `dm:` reply is then shown here as
        # not delivered after `REPLY_TTL`): the page's two ways of replying behave the same.
        reply = await _run(request, user, "reply", values, thread_id, shows_delivery=True)
        return back(request, here, reply)
