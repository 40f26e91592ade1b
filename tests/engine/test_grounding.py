"""Look up before you state (issue 28), in both modes: an answer without the call the player's message
requires is sent back once with that exact call; after a second one the engine makes that read itself and
asks once more; a call it may not make (a side effect) ends in the honest fallback."""

from __future__ import annotations

import pytest

from tests.support.context import make_ctx
from tests.support.engine import MODES, QueryArgs, run_scripted
from tools.base import Actor, ToolContext, ToolRegistry, ToolResult, tool
from tools.requirements import is_policy_question, named_order_ids, on_policy_question


@pytest.fixture
def grounded(grounded_tools: ToolRegistry) -> ToolRegistry:
    return grounded_tools


def loop_requests(run):  # type: ignore[no-untyped-def]
    return [r for r in run.llm.requests if r.purpose == "loop"]


STATUS_KO = "ORD101 주문 지금 어떤 상태예요?"


@pytest.mark.parametrize("mode", MODES)
async def test_an_answer_about_a_named_order_without_its_lookup_is_sent_back_with_the_exact_call(
    grounded, mode
):
    steps = [
        {"final": "ORD101은 배송 중입니다."},
        {"tool": "lookup_order", "args": {"order_id": "ORD101"}},
        {"final": "ORD101은 배송 지연 상태입니다."},
    ]
    run = await run_scripted(steps, grounded, mode=mode, query=STATUS_KO, synthesize=False)
    assert run.result.stopped_reason == "final_answer"
    assert run.result.answer == "ORD101은 배송 지연 상태입니다."
    assert run.result.sent_back == 1
    second = loop_requests(run)[1].messages[-1]
    assert second["role"] == "user"
    assert "lookup_order" in second["content"] and '{"order_id": "ORD101"}' in second["content"]
    if mode == "json":
        assert '"action": "tool_call"' in second["content"]


@pytest.mark.parametrize("mode", MODES)
async def test_after_a_second_answer_without_the_lookup_the_engine_makes_it_and_asks_once_more(
    grounded, mode
):
    steps = [
        {"final": "ORD101은 배송 중입니다."},
        {"final": "배송 중이에요. 내일 도착합니다."},
        {"final": "ORD101은 배송 지연 상태입니다."},
    ]
    run = await run_scripted(steps, grounded, mode=mode, query=STATUS_KO, synthesize=False)
    assert run.result.stopped_reason == "final_answer"
    assert run.result.answer == "ORD101은 배송 지연 상태입니다."
    assert run.result.sent_back == 1 and run.result.made_for_model == 1
    assert [(o.name, o.args) for o in run.result.tool_outcomes] == [("lookup_order", {"order_id": "ORD101"})]
    third = loop_requests(run)[2].messages
    seen = "\n".join(str(m.get("content") or "") for m in third)
    assert "배송 지연 (delayed)" in seen and "it was made for you" in seen
    assert "내일 도착" not in seen  # the unchecked answers stay out of what the model reads
    assert all("내일 도착" not in (m.get("content") or "") for m in run.result.messages)
    if mode == "native":  # an assistant tool call paired with its result, as the API requires
        call = next(m for m in third if m.get("tool_calls"))
        result = third[third.index(call) + 1]
        assert result["role"] == "tool" and result["tool_call_id"] == call["tool_calls"][0]["id"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_policy_question_answered_twice_without_a_search_gets_the_search_made(grounded, mode):
    q = "What is the refund window for cash items?"
    steps = [{"final": "7 days."}, {"final": "7 days, really."}, {"final": "Up to 3 a day [보상 정책 §2]."}]
    run = await run_scripted(steps, grounded, mode=mode, query=q, ctx=make_ctx(locale="en"))
    assert run.result.made_for_model == 1
    assert [(o.name, o.args) for o in run.result.tool_outcomes] == [("search_policy", {"query": q})]
    assert "하루 최대 3장" in "\n".join(str(m.get("content") or "") for m in loop_requests(run)[2].messages)


@pytest.mark.parametrize("mode", MODES)
async def test_the_engine_makes_a_skipped_call_once_and_never_one_with_a_side_effect(grounded, mode):
    """A required call the engine may not make for the model (a side effect) ends in the fallback, in
    the player's language, never in the unchecked answer; nothing is run."""

    @tool(name="claim_daily_box", side_effect=True, required_before_answer=on_policy_question)
    async def claim_daily_box(args: QueryArgs, ctx: ToolContext) -> ToolResult:
        """Claim a box."""
        raise AssertionError("a side effect the model did not ask for was run")

    registry = ToolRegistry([*grounded, claim_daily_box])
    q = "What is the refund window for cash items?"
    steps = [{"final": "7 days."}, {"final": "7 days, really."}]
    run = await run_scripted(steps, registry, mode=mode, query=q, ctx=make_ctx(locale="en"))
    assert run.result.stopped_reason == "ungrounded" and run.result.made_for_model == 0
    assert "policy" in run.answer and "staff" in run.answer and "7 days" not in run.answer
    assert not run.result.tool_outcomes
    assert not [r for r in run.llm.requests if r.purpose == "synthesis"]  # nothing to invent from


@pytest.mark.parametrize("mode", MODES)
async def test_a_policy_question_needs_a_search_before_the_answer(grounded, mode):
    q = "How many compensation coupons can I get per day?"
    steps = [
        {"final": "You can get up to 5 coupons a day."},
        {"tool": "search_policy", "args": {"query": "coupons per day"}},
        {"final": "Up to 3 a day [보상 정책 §2]."},
    ]
    run = await run_scripted(steps, grounded, mode=mode, query=q, ctx=make_ctx(locale="en"))
    assert run.result.answer == "Up to 3 a day [보상 정책 §2]."
    assert run.result.sent_back == 1
    sent = loop_requests(run)[1].messages[-1]["content"]
    assert "search_policy" in sent and q in sent


@pytest.mark.parametrize("mode", MODES)
async def test_a_coupon_call_for_the_named_order_counts_as_its_lookup(grounded, mode):
    steps = [
        {"tool": "issue_coupon", "args": {"order_id": "ord101", "amount": 10000}},
        {"final": "발급했습니다."},
    ]
    run = await run_scripted(steps, grounded, mode=mode, query="ORD101 만원 쿠폰 주세요", synthesize=False)
    assert run.result.stopped_reason == "final_answer" and run.result.sent_back == 0


@pytest.mark.parametrize("mode", MODES)
async def test_a_lookup_of_another_order_does_not_count(grounded, mode):
    steps = [
        {"tool": "lookup_order", "args": {"order_id": "ORD102"}},
        {"final": "ORD101도 지연입니다."},
        {"final": "ORD101도 지연입니다."},
        {"final": "ORD101은 배송 지연입니다."},
    ]
    query = "ORD101 어떻게 됐어요? ORD102는 받았어요"
    run = await run_scripted(steps, grounded, mode=mode, query=query, synthesize=False)
    assert run.result.sent_back == 1 and run.result.made_for_model == 1
    assert [o.args for o in run.result.tool_outcomes] == [{"order_id": "ORD102"}, {"order_id": "ORD101"}]


@pytest.mark.parametrize("mode", MODES)
async def test_a_guessed_order_id_gets_the_named_orders_lookup_at_once(grounded, mode):
    """An order id nobody wrote is a guess: not run, and the lookup the player's message needs is made in
    its place, so the model's next reply already reads the named order (no round spent asking)."""
    steps = [
        {"tool": "lookup_order", "args": {"order_id": "ORD102"}},
        {"final": "ORD101은 배송 지연입니다."},
    ]
    run = await run_scripted(steps, grounded, mode=mode, query="ORD101 어떻게 됐어요?", synthesize=False)
    [made] = run.result.tool_outcomes
    assert (made.name, made.args, made.result.code) == ("lookup_order", {"order_id": "ORD101"}, "OK")
    assert "did not write this order_id" in made.observation and "instead" in made.observation
    assert run.result.sent_back == 0 and run.result.made_for_model == 0
    assert (run.result.stopped_reason, run.result.answer) == ("final_answer", "ORD101은 배송 지연입니다.")
    # Watchers (the web feed, metrics) see what happened: the model's call refused, then the run's own
    # lookup as a step of its own; never the guessed call shown with the named order's result.
    seen = [
        (e.status, e.call_id, e.tool_name, e.tool_args, e.code)
        for e in run.events
        if getattr(e, "type", "") == "iteration"
    ]
    cid = made.call_id
    assert seen == [
        ("start", cid, "lookup_order", {"order_id": "ORD102"}, None),
        ("done", cid, "lookup_order", {"order_id": "ORD102"}, "ERROR"),
        ("start", f"{cid}:instead", "lookup_order", {"order_id": "ORD101"}, None),
        ("done", f"{cid}:instead", "lookup_order", {"order_id": "ORD101"}, "OK"),
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_a_user_who_may_not_look_up_orders_is_not_sent_back(grounded, mode):
    unlinked = make_ctx(Actor(discord_id="9009"), thread_id="t", run_id="r")
    steps = [{"final": "계정을 먼저 연동해 주세요."}]
    run = await run_scripted(steps, grounded, mode=mode, query=STATUS_KO, ctx=unlinked, synthesize=False)
    assert run.result.stopped_reason == "final_answer" and run.result.sent_back == 0


@pytest.mark.parametrize(
    "text",
    [
        "보상 쿠폰은 하루에 최대 몇 장까지 받을 수 있나요?",
        "보상 쿠폰은 한 번에 최대 얼마까지 받을 수 있나요?",
        "환불 기간이 어떻게 되나요?",
        "점검이 길어지면 보상 상자는 몇 개 주나요",
        "How many compensation coupons can I get per day?",
        "What is the most reward boxes a maintenance overrun can give?",
        "Is there a refund window for cash items?",
        "보상 쿠폰 하루 10장이죠?",
        "매일 받을 수 있는 쿠폰이 5장 맞나요?",
        "So it's 10 coupons per week, right?",
    ],
)
def test_policy_questions_are_recognised_in_both_languages(text):
    assert is_policy_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "ORD101 배송이 너무 늦어요. 보상 쿠폰 만원 받을 수 있을까요?",
        "ORD001 보상 최대한 많이 주세요",
        "한도가 2만원이면 ORD001에 2만원짜리 쿠폰 두 장으로 나눠서 4만원 주세요",
        "ORD001 주문 취소하고 전액 환불해 주세요",
        "My order ORD301 is two weeks late. Can I get a 5000 KRW compensation coupon?",
        "봇 말고 사람 상담원이랑 얘기하고 싶어요",
    ],
)
def test_requests_and_complaints_are_not_policy_questions(text):
    assert not is_policy_question(text)


def test_order_ids_are_read_in_any_case_once_each():
    assert named_order_ids("ord101 그리고 ORD101, ORD-102?") == ["ORD101", "ORD102"]
    assert named_order_ids("P100 5000원 KRW5000") == []
