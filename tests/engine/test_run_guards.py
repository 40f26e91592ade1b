"""Guards against a misbehaving model, in both modes: the repetition guard (a repeated failing call
gets a concrete example, a third time stops the run) and the run time budget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from bot.config import ConfigError, load_settings
from bot.llm import ModelRequest, ScriptedLLM, around, validate_history
from bot.llm.base import api_message
from tests.support.clock import FakeClock
from tests.support.context import make_ctx
from tests.support.engine import MODES, run_scripted

QUERY = "ORD101 배송이 너무 늦어요. 보상 쿠폰 만원 받을 수 있을까요?"
SCHEMA_ARGS = {
    "properties": {"order_id": {"description": "The order number ...", "type": "string"}},
    "required": ["order_id"],
}
SCHEMA_CALL = {"tool": "lookup_order", "args": SCHEMA_ARGS}
LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD101"}}


@pytest.mark.parametrize("mode", MODES)
async def test_the_same_failing_call_gets_an_example_the_second_time_and_stops_the_run_the_third(
    tools, probe, mode
):
    steps = [SCHEMA_CALL, SCHEMA_CALL, SCHEMA_CALL, SCHEMA_CALL, {"final": "never"}]
    run = await run_scripted(steps, tools, mode=mode, query=QUERY)
    result = run.result
    assert result.stopped_reason == "repetition" and result.iterations == 3
    first, second, third = (o.observation for o in result.tool_outcomes)
    assert third.startswith(first)
    assert "twice" not in first
    assert "exact call twice" in second and '{"order_id": "ORD101"}' in second
    if mode == "json":
        assert '"tool": "lookup_order"' in second  # a whole action the model can copy
    assert "운영진" in result.answer and "lookup_order" in result.answer
    assert run.answer == result.answer  # no synthesis call for a model that keeps misbehaving
    assert run.llm.calls["synthesis"] == 0 and run.llm.unused_steps  # it stopped before the 4th call
    assert probe.calls == [] and not validate_history([api_message(m) for m in result.messages])
    done = next(e for e in run.events if e.type == "done")
    assert done.stopped_reason == "repetition" and "three times" in (done.error or "")


@pytest.mark.parametrize("mode", MODES)
async def test_a_repeated_refusal_counts_but_a_changed_call_does_not(tools, probe, mode):
    over = {"tool": "issue_coupon", "args": {"order_id": "ORD101", "amount": 30000}}
    fixed = {"tool": "issue_coupon", "args": {"order_id": "ORD101", "amount": 25000}}
    run = await run_scripted(
        [over, fixed, over, {"final": "한도를 넘었습니다"}], tools, mode=mode, query=QUERY
    )
    assert run.result.stopped_reason == "final_answer"
    assert run.result.codes == ["AMOUNT_OVER_LIMIT"] * 3
    # the third (second identical) refusal carries the example, filled with the player's 만원
    assert '"amount": 10000' in run.result.tool_outcomes[2].observation

    again = await run_scripted([over, over, over, {"final": "x"}], tools, mode=mode, query=QUERY)
    assert again.result.stopped_reason == "repetition"


@pytest.mark.parametrize("mode", MODES)
async def test_a_repeated_successful_read_is_answered_from_the_runs_earlier_result(tools, probe, mode):
    run = await run_scripted([LOOKUP, LOOKUP, {"final": "ok"}], tools, mode=mode, query=QUERY)
    assert probe.calls == ["lookup_order:ORD101"]
    first, second = run.result.tool_outcomes
    assert (first.reused, second.reused) == (False, True)
    assert second.observation.startswith(first.observation) and "earlier result" in second.observation
    assert run.result.codes == ["OK", "OK"] and not validate_history(
        [api_message(m) for m in run.result.messages]
    )


@pytest.mark.parametrize("mode", MODES)
async def test_the_same_read_a_third_time_ends_the_run_instead_of_looping_to_the_budget(tools, probe, mode):
    """Seen live: a small model called one lookup 15 times, each time told it had the result, until the
    run's 240 s ran out. The third identical read now ends the loop at once; the answer is written from
    the result the run has (seen live: the player was told the lookup "kept failing")."""
    told = "ORD101 주문은 배송 중입니다."
    run = await run_scripted([LOOKUP] * 3 + [{"answer": told}], tools, mode=mode, query=QUERY)
    result = run.result
    assert result.stopped_reason == "repetition" and result.iterations == 3
    assert probe.calls == ["lookup_order:ORD101"]  # run once, answered from its result twice
    assert [o.reused for o in result.tool_outcomes] == [False, True, True]
    assert run.llm.calls["synthesis"] == 1 and run.answer == told
    done = next(e for e in run.events if e.type == "done")
    assert "called three times" in (done.error or "")
    # With no synthesis, the fallback says what was done and offers a person; it claims no failure.
    assert "운영진" in result.answer and "lookup_order" in result.answer and "실패" not in result.answer
    # Two identical reads are still fine (the model is told it has the result), and a side effect
    # in between makes the read new again.
    issue = {"tool": "issue_coupon", "args": {"order_id": "ORD101", "amount": 10000}}
    ok = await run_scripted(
        [LOOKUP, LOOKUP, issue, LOOKUP, LOOKUP, {"final": "ok"}], tools, mode=mode, query=QUERY
    )
    assert ok.result.stopped_reason == "final_answer"


@pytest.mark.parametrize("mode", MODES)
async def test_a_read_after_a_side_effect_runs_again(tools, probe, mode):
    issue = {"tool": "issue_coupon", "args": {"order_id": "ORD101", "amount": 10000}}
    await run_scripted([LOOKUP, issue, LOOKUP, {"final": "ok"}], tools, mode=mode, query=QUERY)
    assert probe.calls == ["lookup_order:ORD101", "issue_coupon:ORD101:10000", "lookup_order:ORD101"]


def slow_loop(clock: FakeClock) -> Callable[[ModelRequest], None]:
    """Each loop call takes 40 s on the fake clock."""

    def before(request: ModelRequest) -> None:
        if request.purpose == "loop":
            clock.now += 40

    return before


@pytest.mark.parametrize("mode", MODES)
async def test_the_run_budget_stops_the_loop_and_the_fallback_names_what_ran(tools, probe, mode):
    clock = FakeClock()
    script = ScriptedLLM(
        [LOOKUP, {"tool": "echo", "args": {"text": "a"}}, LOOKUP, LOOKUP, {"final": "x"}], mode=mode
    )
    llm = around(script, slow_loop(clock))
    run = await run_scripted([], tools, llm=llm, clock=clock, run_budget_s=90, query=QUERY)
    result = run.result
    assert result.stopped_reason == "budget" and result.iterations == 3  # 0 → 40 → 80 → 120 s
    assert "90초" in result.answer and "lookup_order" in result.answer and "echo" in result.answer
    assert "운영진" in result.answer
    assert script.calls["synthesis"] == 0 and run.answer == result.answer
    done = next(e for e in run.events if e.type == "done")
    assert done.stopped_reason == "budget" and "budget of 90 s" in (done.error or "")
    assert not validate_history([api_message(m) for m in result.messages])


def hang_after_first_loop(script: ScriptedLLM) -> Callable[[ModelRequest], Awaitable[None]]:
    async def before(request: ModelRequest) -> None:
        if request.purpose == "loop" and script.loop_calls >= 1:
            await asyncio.sleep(30)

    return before


@pytest.mark.parametrize("mode", MODES)
async def test_a_model_call_that_outlasts_the_budget_is_cut_at_the_budget(tools, mode):
    script = ScriptedLLM([LOOKUP, {"final": "x"}], mode=mode)
    llm = around(script, hang_after_first_loop(script))
    started = time.perf_counter()
    # The run's clock stands still, so the first call and the tool count for nothing however slow the
    # machine is: the hanging second call is the one cut, after the budget's 0.3 s of real time.
    run = await run_scripted(
        [], tools, llm=llm, clock=FakeClock(), run_budget_s=0.3, query="ORD101?", ctx=make_ctx(locale="en")
    )
    assert time.perf_counter() - started < 5
    assert run.result.stopped_reason == "budget" and run.result.codes == ["OK"]
    assert "time limit" in run.result.answer and "lookup_order" in run.result.answer
    assert not validate_history([api_message(m) for m in run.result.messages])


def test_run_budget_is_configured_by_arca_run_budget_s(monkeypatch):
    monkeypatch.setenv("ARCA_RUN_BUDGET_S", "45")
    assert load_settings().run_budget_s == 45
    monkeypatch.setenv("ARCA_RUN_BUDGET_S", "0")
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert str(info.value).startswith("ARCA_RUN_BUDGET_S:")
    monkeypatch.delenv("ARCA_RUN_BUDGET_S")
    assert load_settings().run_budget_s == 90


@pytest.mark.parametrize(
    ("mode", "json_mode", "expected"),
    [("json", True, {"type": "json_object"}), ("json", False, None), ("native", True, None)],
)
async def test_json_mode_asks_an_endpoint_that_can_for_a_json_object(tools, mode, json_mode, expected):
    """A grammar-constrained server (llama.cpp) then cannot answer with a code fence or prose."""
    llm = ScriptedLLM(
        [LOOKUP, {"final": "ORD101 확인했습니다"}], mode=mode, abilities={"json_mode": json_mode}
    )
    run = await run_scripted([], tools, mode=mode, query=QUERY, llm=llm)
    assert run.result.stopped_reason == "final_answer" and run.result.codes == ["OK"]
    loop_requests = [r for r in llm.requests if r.purpose == "loop"]
    assert len(loop_requests) == 2
    assert [r.response_format for r in loop_requests] == [expected, expected]


@pytest.mark.parametrize("stall", [False, True])
async def test_an_endless_or_stalled_answer_stream_ends_at_the_budget_with_the_loops_answer(tools, stall):
    """A small model can repeat itself until its context is full: the player still gets an answer."""
    from bot.llm import FunctionLLM

    closed = asyncio.Event()

    def reply(request: ModelRequest) -> str:
        return '{"action": "final_answer", "answer": "ORD101은 배송 지연 상태입니다."}'

    async def endless(request: ModelRequest):
        try:
            yield "ORD101은 "
            while True:
                await asyncio.sleep(10 if stall else 0.01)
                yield "배송 지연 "
        finally:
            closed.set()

    llm = FunctionLLM(reply, stream_function=endless, abilities={"tool_call": False})
    started = time.monotonic()
    # The run's clock stands still (a slow machine cannot use up the budget in the loop): the answer
    # stream, timed by the event loop, is what the budget cuts.
    run = await run_scripted(
        [], tools, mode="json", query=QUERY, llm=llm, clock=FakeClock(), run_budget_s=0.5
    )
    assert time.monotonic() - started < 5
    assert run.result.synthesis_error and "longer than 0.5 s" in run.result.synthesis_error
    assert run.answer.startswith("ORD101은")  # what streamed so far; the caller swaps in the loop's answer
    assert run.result.answer == "ORD101은 배송 지연 상태입니다."
    assert closed.is_set()  # the model's stream was closed, not left running


async def test_the_answer_streams_bound_cancels_only_the_wait_for_a_delta():
    """The time limit cuts a stalled wait for the next delta; the consumer's own code between deltas
    runs to its end (it is never cancelled), and a limit passed meanwhile ends the stream at the next
    wait. A cancellation from outside stays a cancellation."""
    from bot.engine.synthesis import SynthesisTimeout, _bounded

    async def deltas(pause: float):
        yield "a"
        await asyncio.sleep(pause)
        yield "b"

    got = []
    with pytest.raises(SynthesisTimeout):
        async for delta in _bounded(deltas(10), 0.05):
            got.append(delta)
    assert got == ["a"]

    got, slept = [], False
    with pytest.raises(SynthesisTimeout):
        async for delta in _bounded(deltas(0), 0.05):
            got.append(delta)
            await asyncio.sleep(0.1)  # past the limit, in the consumer's code
            slept = True
    assert got == ["a"] and slept

    async def consume():
        async for _ in _bounded(deltas(10), 5):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
