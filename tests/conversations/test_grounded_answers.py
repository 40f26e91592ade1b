"""What a stopped run says passes the same fact check as any answer (both engine modes), while the notice
the bot writes itself when it stops keeps its own numbers; withheld sentences are counted and audited."""

from __future__ import annotations

from dataclasses import replace

from bot.conversations import Incoming
from tests.support.conversations import Harness
from tests.support.surface import RecordingSurface

THREAD = "console:facts"
INVENTED = "보상 쿠폰은 하루에 최대 5 장까지 받을 수 있습니다."


async def _ask(h: Harness, text: str):
    actor = await h.conv.resolve_actor("9001", set())
    outcome = await h.conv.handle(Incoming(THREAD, actor, text, ref=text), RecordingSurface())
    await h.conv.wait_idle(THREAD)
    return outcome


async def test_an_unparseable_runs_invented_number_is_not_delivered(harness: Harness) -> None:
    # JSON mode: two unparseable replies end in the engine's honest fallback, which offers a person.
    # Native mode: the same text is an answer without the required search, twice, so the engine makes the
    # search, and the third answer, which invents the cap again, is corrected from the policy it found.
    harness.script({"raw": INVENTED}, {"raw": INVENTED}, {"raw": INVENTED})
    outcome = await _ask(harness, "보상 쿠폰은 하루에 최대 몇 장까지 받을 수 있나요?")
    run = outcome.runs[0]
    delivered = run.delivered_answer
    assert "5 장" not in delivered and "5장" not in delivered
    if run.stopped_reason == "parse_failure":
        assert run.mode == "json" and "운영진" in delivered  # offers a person
    else:
        assert run.mode == "native" and run.made_for_model == 1 and "최대 3장" in delivered


async def test_the_bots_own_stop_notice_keeps_its_numbers(harness: Harness) -> None:
    harness.conv.deps = replace(harness.conv.deps, max_iterations=2)
    harness.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"tool": "lookup_order", "args": {"order_id": "ORD002"}},
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
        {"tool": "lookup_order", "args": {"order_id": "ORD002"}},
    )
    outcome = await _ask(harness, "ORD001이랑 ORD002 확인해 주세요")
    delivered = outcome.runs[0].delivered_answer
    assert outcome.runs[0].stopped_reason == "max_iterations", delivered
    assert "최대 2회" in delivered and "확인한 후 안내" not in delivered


async def test_an_answer_withheld_whole_is_never_replaced_by_the_models_raw_text(harness: Harness) -> None:
    """Every sentence of this answer is a note to the model, so the guard withholds all of it: the player
    gets the failure line, and the conversation's outcome carries what was delivered, not the raw text
    (it used to fall back to the model's answer when the delivered one was empty)."""
    note = "플레이어에게 금액, 쿠폰 코드, 유효기간을 그대로 안내하세요."
    harness.script({"final": note})
    outcome = await _ask(harness, "안녕하세요")
    delivered = outcome.runs[0].delivered_answer
    assert delivered and note not in delivered, delivered
    assert outcome.answer == delivered


async def test_the_running_turns_own_results_are_no_earlier_turns_evidence(store) -> None:
    """Seen live (2026-12-02): on a slow model the run's own search result was already committed to the
    thread when the fact check read the history, so it counted as an earlier turn's result (whose numbers
    need no related policy sentence) and "30 days" from the coupon sections passed as the refund window.
    A fast scripted run read the history before the commit: the check depended on timing."""
    from bot.conversations.grounding import thread_evidence
    from bot.memory import ThreadMemory

    memory = ThreadMemory(store)
    thread = "t:evidence"
    for run, (kind, content) in (
        ("r1", ("query", "주문 확인")),
        ("r1", ("observation", "Observation from lookup_order: 주문 ORD101")),
        ("r2", ("query", "환불 기간?")),
        ("r2", ("observation", "Observation from search_policy: 30일")),
    ):
        await memory.append(thread, {"role": "user", "content": content}, run_id=run, kind=kind)
    players, observations = await thread_evidence(store, thread, run_id="r2")
    assert players == ["주문 확인", "환불 기간?"]
    assert observations == ["Observation from lookup_order: 주문 ORD101"]
    _players, everything = await thread_evidence(store, thread)
    assert everything[-1] == "Observation from search_policy: 30일"
