"""A player's plain request for a person ("상담원 연결", "talk to a person"): recognised by a fixed,
conservative matcher and sent straight to `escalate_to_staff`, so the model never decides it.

Hand-written patterns rather than a classifier: the request must be deterministic and auditable, and a
false positive costs a staff ticket, so only phrasings that name a person *and* ask to reach one match.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.analytics.staff_response import RESOLUTION_ACTIONS
from bot.desk.auto_close import CLOSE_ACTION
from bot.store.escalations import escalation_state
from bot.vocabulary.catalogue import say
from bot.vocabulary.language import detect_language
from tools.base import Actor, ToolContext, ToolRegistry, ToolServices

ASKED_AGAIN_ACTION = "escalation.asked_again"
"""Audited when a player asks for a person again while their escalation is open."""
MAX_REQUEST_CHARS = 200
"""Longer messages carry a real question: the model reads those (and may still escalate)."""

_PERSON_KO = r"(?:상담원|상담사|상담\s*직원|직원|운영진|운영자|지엠|GM|담당자|사람|인간)"
_KO_REQUEST = re.compile(
    _PERSON_KO
    + r"\s*(?:분)?\s*(?:이랑|랑|과|와|하고|한테|에게|께|을|를|으로|로|이|가)?\s*(?:좀|빨리|직접)?\s*"
    r"(?:연결|대화|통화|얘기|이야기|상담|불러|바꿔|연락|요청|부탁)",
    re.IGNORECASE,
)
_KO_ALONE = re.compile(r"^\s*(?:상담원|상담사|운영진|사람)\s*(?:요|님|이요|좀)?\s*[.!?~]*\s*$")
_PERSON_EN = (
    r"(?:person|human|agent|staff|representative|rep|someone|somebody|operator|gm|game master|"
    r"real person|live agent|customer service|support team)"
)
_EN_REQUEST = re.compile(
    r"\b(?:(?:talk|speak|chat)\s+(?:to|with)|connect\s+me\s+(?:to|with)|get\s+me|transfer\s+me\s+to|"
    r"(?:want|need|request)(?:\s+to\s+(?:talk|speak)\s+(?:to|with))?)\s+"
    r"(?:a|an|the|some|your|real|actual|live|human|\s)*" + _PERSON_EN + r"\b",
    re.IGNORECASE,
)
_EN_ALONE = re.compile(
    r"^\s*(?:human|agent|live agent|representative|real person)\s*(?:please)?[.!?]*\s*$", re.I
)
_NEGATED = re.compile(
    r"(?:필요\s*없|안\s*해도|하지\s*마|원하지\s*않|싫어|\bdon'?t\b|\bdo not\b|\bno need\b|\bnot\b|\bnever\b)",
    re.IGNORECASE,
)


def wants_person(text: str) -> bool:
    """True when `text` is a plain request to reach a person, in Korean or English."""
    if not text or len(text) > MAX_REQUEST_CHARS or _NEGATED.search(text):
        return False
    return bool(
        _KO_ALONE.match(text) or _EN_ALONE.match(text) or _KO_REQUEST.search(text) or _EN_REQUEST.search(text)
    )


@dataclass(frozen=True)
class PersonRequest:
    """What the desk did with a request for a person."""

    reply: str
    """The player's notice, in their language."""
    escalation_id: int | None
    """The escalation it opened; None when recording it failed (the reply then says so)."""


async def connect_to_person(
    *,
    tools: ToolRegistry,
    store: Any,
    services: ToolServices,
    actor: Actor,
    thread_id: str,
    text: str,
    run_id: str,
    clock: Callable[[], datetime],
) -> PersonRequest:
    """Escalate through `escalate_to_staff` (its record, audit and staff notice), with no model call.

    One open escalation per conversation: while the thread's latest one is open (not handed back, not
    auto-closed), asking again is answered with that ticket, and no second ticket or SLA timer starts.
    Parallel requests race for one idempotency key (named after the latest escalation), so exactly one
    of them escalates and the others answer with its ticket."""
    locale = detect_language(text)
    state = await escalation_state(
        store, thread_id, ending_actions=RESOLUTION_ACTIONS, closed_action=CLOSE_ACTION
    )
    if state.open and state.latest is not None:
        return await _already_asked(store, services, actor, thread_id, state.latest, locale, clock)
    ctx = ToolContext(
        actor=actor,
        thread_id=thread_id,
        run_id=f"person-after-{state.latest or 0}",
        store=store,
        locale=locale,
        clock=clock,
        services=services,
        tool_call_id="person-request",
    )
    summary = say(locale, "플레이어가 상담원 연결을 직접 요청했습니다: ", "The player asked for a person: ")
    result = await tools.execute("escalate_to_staff", {"summary": summary + text.strip()[:300]}, ctx)
    escalation_id = result.data.get("escalation_id") if result.ok and result.data else None
    if escalation_id is not None and result.data.get("replayed"):  # a parallel request won the race
        return await _already_asked(store, services, actor, thread_id, int(escalation_id), locale, clock)
    if escalation_id is None:
        reply = say(
            locale,
            "지금 상담원 연결 요청을 접수하지 못했습니다. 잠시 후 다시 '상담원 연결'이라고 말씀해 주세요.",
            "I could not pass your request to staff just now. Please say 'talk to a person' again in a moment.",
        )
        return PersonRequest(reply, None)
    reply = say(
        locale,
        f"상담원 연결을 요청했습니다(접수 번호 #{escalation_id}). 운영진이 확인 후 이 대화에서 답변드리겠습니다.",
        f"I've asked for a staff member (ticket #{escalation_id}). A person will reply in this conversation.",
    )
    notice = result.data.get("away_notice")
    return PersonRequest(f"{reply}\n{notice}" if notice else reply, int(escalation_id))


async def _already_asked(
    store: Any,
    services: ToolServices,
    actor: Actor,
    thread_id: str,
    escalation_id: int,
    locale: str,
    clock: Callable[[], datetime],
) -> PersonRequest:
    """The answer to a repeated request while escalation #`escalation_id` is open; audited, so staff see
    the player asked again."""
    await store.audit(
        actor=actor.label,
        action=ASKED_AGAIN_ACTION,
        thread_id=thread_id,
        target=f"escalation:{escalation_id}",
        code="OK",
    )
    reply = say(
        locale,
        f"이미 상담원 연결을 요청하셨습니다(접수 번호 #{escalation_id}). 운영진이 확인하는 대로 이 대화에서 "
        "답변드릴 테니 조금만 기다려 주세요.",
        f"You have already asked for a staff member (ticket #{escalation_id}). A person will reply in this "
        "conversation as soon as they can.",
    )
    notice = services.away_notice(clock(), locale) if services.away_notice else None
    return PersonRequest(f"{reply}\n{notice}" if notice else reply, escalation_id)
