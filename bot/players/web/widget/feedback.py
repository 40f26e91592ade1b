"""`POST /api/threads/{thread}/feedback`: the web widget's 👍 / 👎 on an answer, stored through
the same table and rules as the Discord buttons (`bot.analytics.feedback`): one vote per answer per
player, changeable, only by the identity that asked in that thread.

Body: `{"vote": "up" | "down", "comment": "…" (optional), "run": "<run id>" (optional)}`; without `run`
the vote is for the thread's latest answer to this caller. Answers `{"run", "vote", "changed"}`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from bot.analytics.feedback import MAX_COMMENT_CHARS, FeedbackError, record_vote
from bot.players.web.widget.callers import resolve_caller, set_visitor_cookie
from bot.players.web.widget.chat import check_thread_name
from bot.store import conversation_views
from bot.web_kit.deps import WebError, deps_of
from bot.web_kit.json_body import read_json_object

VOTES = {"up": 1, "down": -1}


def feedback_router() -> APIRouter:
    router = APIRouter(prefix="/api")

    @router.post("/threads/{thread}/feedback")
    async def feedback(thread: str, request: Request) -> JSONResponse:
        deps = deps_of(request)
        caller = resolve_caller(request)
        check_thread_name(thread)
        usage = '{"vote": "up" | "down", "comment": "..."}'
        body: Any = await read_json_object(request, usage)
        if body.get("vote") not in VOTES:
            raise WebError(
                400, "invalid_request", 'Send {"vote": "up" | "down"} (and an optional "comment").'
            )
        comment = body.get("comment")
        if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_CHARS):
            raise WebError(
                400, "invalid_request", f"comment: text of at most {MAX_COMMENT_CHARS} characters."
            )
        thread_id = caller.identity.thread_id(thread)
        player = caller.actor.label
        store = deps.conversations.store
        run_id = body.get("run")
        if not isinstance(run_id, str) or not run_id:
            run_id = await conversation_views.latest_answer_of(store, thread_id, player)
            if run_id is None:
                raise WebError(404, "answer_not_found", "No answer to rate in this conversation.")
        try:
            result = await record_vote(
                store,
                run_id=run_id,
                player=player,
                vote=VOTES[body["vote"]],
                comment=comment,
                thread_id=thread_id,
            )
        except FeedbackError:
            raise WebError(404, "answer_not_found", "No such answer in this conversation.") from None
        response = JSONResponse({"run": result.run_id, "vote": body["vote"], "changed": result.changed})
        set_visitor_cookie(response, caller, deps)
        return response

    return router
