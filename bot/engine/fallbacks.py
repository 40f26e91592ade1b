"""What the player reads when the loop cannot finish on its own: each text names what ran, in the
conversation's language; the repetition and budget texts offer a human (the escalation path)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.engine.results import ToolOutcome
from bot.vocabulary.catalogue import say
from tools.base import ToolContext


def tools_summary(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    """One line per kind of call and how it ended, in the order first made; a kind made more than once says
    so (seen live: a small model's refused lookups filled a stop notice with nine lines). In words, not a
    count: the fact check reads a number in this text as a fact to back (seen live: "3회" withheld)."""
    if not outcomes:
        return ctx.say("실행된 작업이 없습니다.", "No actions were run.")
    made = Counter((o.name, o.result.ok, str(o.result.code)) for o in outcomes)
    lines = []
    for (name, ok, code), times in made.items():
        line = f"- {name}: {ctx.say('성공' if ok else '실패', 'ok' if ok else 'failed')} ({code})"
        if times > 1:
            line += ctx.say(", 여러 번", ", more than once")
        lines.append(line)
    return "\n".join(lines)


def _done_so_far(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    return ctx.say("지금까지 실행한 작업:", "What was done so far:") + "\n" + tools_summary(ctx, outcomes)


def _offer_human(ctx: ToolContext) -> str:
    return ctx.say(
        "원하시면 운영진(사람 상담원)에게 연결해 드릴게요. '운영진 연결'이라고 말씀해 주세요.",
        "If you like, I can pass this to a staff member (a person): just say 'talk to staff'.",
    )


def _stopped(ctx: ToolContext, head: str, outcomes: Sequence[ToolOutcome]) -> str:
    """A stop's text: why it stopped, what was done so far, and a person offered."""
    return f"{head}\n{_done_so_far(ctx, outcomes)}\n{_offer_human(ctx)}"


def max_iterations_text(ctx: ToolContext, limit: int, outcomes: Sequence[ToolOutcome]) -> str:
    head = ctx.say(
        f"요청을 끝까지 처리하지 못했습니다(최대 {limit}회 반복에 도달). 지금까지 실행한 작업:",
        f"I could not finish this request (reached the limit of {limit} steps). What was done so far:",
    )
    return f"{head}\n{tools_summary(ctx, outcomes)}"


def llm_error_text(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    head = ctx.say(
        "죄송합니다. 지금은 AI 모델에 연결할 수 없어 답변을 마치지 못했습니다. 잠시 후 다시 시도해 주세요.",
        "Sorry, the AI model is unreachable right now, so I could not finish the answer. Please try again shortly.",
    )
    return head if not outcomes else f"{head}\n{_done_so_far(ctx, outcomes)}"


def repetition_text(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    head = ctx.say(
        "죄송합니다. 같은 작업이 같은 이유로 계속 실패해 처리를 멈췄습니다.",
        "Sorry, the same step kept failing for the same reason, so I stopped.",
    )
    return _stopped(ctx, head, outcomes)


def repeated_read_text(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    """The loop kept repeating a read whose result it had: what it found stands, no failure is claimed."""
    head = ctx.say(
        "확인은 마쳤지만 답변을 정리하지 못했습니다.",
        "I checked, but could not put the answer together.",
    )
    return _stopped(ctx, head, outcomes)


def budget_text(ctx: ToolContext, budget_s: float, outcomes: Sequence[ToolOutcome]) -> str:
    head = ctx.say(
        f"죄송합니다. 처리 시간이 제한({budget_s:g}초)을 넘어 여기서 멈췄습니다.",
        f"Sorry, this took longer than the time limit ({budget_s:g} s), so I stopped here.",
    )
    return _stopped(ctx, head, outcomes)


def stopped_text(ctx: ToolContext) -> str:
    return ctx.say("요청에 따라 처리를 중단했습니다.", "Stopped as requested.")


def empty_text(ctx: ToolContext) -> str:
    return ctx.say(
        "답변을 만들지 못했습니다. 질문을 조금 바꿔서 다시 말씀해 주세요.",
        "I could not produce an answer. Please rephrase your question.",
    )


def parse_failure_text(ctx: ToolContext, outcomes: Sequence[ToolOutcome]) -> str:
    """The model's replies could not be read twice in a row: nothing of them reaches the player."""
    head = ctx.say(
        "죄송합니다. 답변을 만드는 중 문제가 생겨 정확한 답을 드리지 못했습니다. 다시 한 번 말씀해 주세요.",
        "Sorry, something went wrong while preparing the answer, so I cannot give you an exact one. "
        "Please ask again.",
    )
    done = f"\n{_done_so_far(ctx, outcomes)}" if outcomes else ""
    return f"{head}{done}\n{_offer_human(ctx)}"


def ungrounded_text(ctx: ToolContext, order_ids: Sequence[str], policy: bool) -> str:
    """The model would not look up what the player asked about: say so, state nothing, offer a person."""
    ko_parts = [f"주문 {', '.join(order_ids)} 정보"] if order_ids else []
    en_parts = [f"order {', '.join(order_ids)}"] if order_ids else []
    if policy or not order_ids:
        ko_parts.append("관련 정책")
        en_parts.append("the policy that applies")
    head = ctx.say(
        f"죄송합니다. {'와 '.join(ko_parts)}를 확인하지 못해 지금은 정확한 답을 드릴 수 없습니다.",
        f"Sorry, I could not check {' and '.join(en_parts)}, so I cannot give you an exact answer right now.",
    )
    return f"{head}\n{_offer_human(ctx)}"


def wrong_language_text(locale: str) -> str:
    """The model answered twice in the wrong language: a fixed text in the player's own language."""
    return say(
        locale,
        "죄송합니다. 답변을 제대로 준비하지 못했습니다. 질문을 한 번 더 보내 주시거나, 원하시면 운영진(사람 상담원)에게 "
        "연결해 드릴게요. '운영진 연결'이라고 말씀해 주세요.",
        "Sorry, I could not prepare a proper answer. Please send your question again, or say 'talk to staff' "
        "and I will pass this to a staff member (a person).",
    )
