"""How a run applies what a model reply asked for (`bot.engine.outcomes`): the one place that changes the
run's messages for a step, sends an answer back, runs the calls and takes in the player's queued
interrupts (`AgentRun.take_interrupts`, the only drain of the queue while the loop runs)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from bot.engine import fallbacks
from bot.engine.events import AnswerEvent, ThinkingEvent
from bot.engine.grounding import (
    RequiredCall,
    answer_needs,
    call_args,
    made_for_model_text,
    send_back_text,
)
from bot.engine.notes import tagged
from bot.engine.outcomes import Answer, CallTools, StepOutcome, Stop, Unreadable
from bot.engine.prompts import language_of, observation_message, reformat_request
from bot.engine.results import StopReason
from bot.llm.base import ToolCall

if TYPE_CHECKING:
    from bot.engine.run import AgentRun


async def apply(run: AgentRun, outcome: StepOutcome, iteration: int) -> Stop | None:
    """Apply one reply's outcome; a `Stop` ends the loop, None asks the model again."""
    await run.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=outcome.reasoning))
    if run.native:
        if isinstance(outcome, CallTools):
            return await _native_calls(run, outcome, iteration)
        assert isinstance(outcome, Answer)
        return await _answer(run, outcome, run.take_interrupts(), iteration)
    # JSON mode: the reply joins the messages first, and interrupts are taken right after it, before the
    # final-answer check.
    run.messages.append(outcome.message)
    injected = run.take_interrupts()
    if isinstance(outcome, Unreadable):
        return await _unreadable(run, outcome, injected)
    run.parse_failures = 0
    if isinstance(outcome, Answer):
        return await _answer(run, outcome, injected, iteration)
    return await _json_call(run, outcome, injected, iteration)


async def _answer(run: AgentRun, answer: Answer, injected: list[str], iteration: int) -> Stop | None:
    if injected:
        # The player added something: this answer is no longer final, keep looping.
        await _keep(run, answer)
        await run.inject(injected)
        return None
    missing = [c for c in run.missing_calls() if answer_needs(c, answer.final)]
    if missing:
        if run.sent_back:
            if answer.in_messages:
                run.messages.pop()  # the unchecked answer stays out of the thread
            if run.made_for_model or not may_make(run, missing):
                return ungrounded(run, missing)
            await make_for_model(run, missing, iteration)
            return None
        await _keep(run, answer)
        await send_back(run, missing)
        return None
    await run.emit(AnswerEvent(channel="step", status="start"))
    if not answer.in_messages and answer.message["content"] == answer.final:  # native, and not blank
        run.messages.append({"role": "assistant", "content": answer.final})
    return Stop(answer.final, StopReason.FINAL_ANSWER)


async def _keep(run: AgentRun, answer: Answer) -> None:
    if answer.in_messages:
        await run.persist([answer.message], kind="step")
    else:
        await run.add(answer.message, kind="step")


async def _native_calls(run: AgentRun, step: CallTools, iteration: int) -> None:
    run.open_calls = {c.id: c.name for c in step.calls}
    run.calls.finished = {}
    await run.add(step.message, kind="step")
    outcomes = await run.calls.run_batch(step.calls, iteration)
    # All results first: the API requires them right after the assistant message.
    results = [{"role": "tool", "tool_call_id": o.call_id, "content": o.observation} for o in outcomes]
    run.messages.extend(results)
    run.open_calls = {}
    await run.persist(results, kind="tool_result")
    await _take_in_after_calls(run)


async def _json_call(run: AgentRun, step: CallTools, injected: list[str], iteration: int) -> None:
    await run.persist([step.message], kind="step")
    if injected:
        await run.inject(injected)
    run.unread_injection = bool(injected)
    try:
        [outcome] = await run.calls.run_batch(step.calls, iteration)
    finally:
        run.unread_injection = False
    await run.add(
        {"role": "user", "content": observation_message(outcome.name, outcome.observation)},
        kind="observation",
    )
    # Also after the observation (safe: JSON mode has no pairing rule), so a message that came in
    # while the tool ran reaches the very next call, as in native mode: one script fits both modes.
    await _take_in_after_calls(run)


async def _take_in_after_calls(run: AgentRun) -> None:
    """After a step's results, unless the calls repeat (the run is about to stop): inject what came in."""
    if run.calls.repeated is None:
        injected = run.take_interrupts()
        if injected:
            await run.inject(injected)


async def send_back(run: AgentRun, missing: list[RequiredCall]) -> None:
    """The answer came before a required call: ask for exactly that call, once per run."""
    run.sent_back += 1
    text = send_back_text(missing, run.query, json_mode=not run.native)
    await run.add(tagged({"role": "user", "content": text}), kind="reformat")


def may_make(run: AgentRun, missing: list[RequiredCall]) -> bool:
    """Whether the engine may make the missing calls itself: reads the actor may run (never a side
    effect: what the player did not ask the model to do is not done for it)."""
    registry = run.registry
    return all(
        registry.get(c.tool) is not None
        and not registry.is_side_effect(c.tool)
        and registry.allowed(c.tool, run.ctx.actor)
        for c in missing
    )


async def make_for_model(run: AgentRun, missing: list[RequiredCall], iteration: int) -> None:
    """A second answer without the required reads: the engine makes them itself, with the arguments it
    had asked for, and asks once more for an answer from their results (a small model that ignores the
    instruction twice still gets the player an answer from the policy or the order, not a refusal).
    The calls run as the model's would (same checks, events and trace); native mode sees them as an
    assistant tool call with its results, JSON mode as observations."""
    run.made_for_model += 1
    calls = [
        run.ids.unique(
            ToolCall(id="", name=c.tool, arguments=json.dumps(call_args(c, run.query), ensure_ascii=False))
        )
        for c in missing
    ]
    if run.native:
        message = {"role": "assistant", "content": None, "tool_calls": [c.to_message() for c in calls]}
        await _native_calls(run, CallTools(calls=calls, message=message), iteration)
    else:
        outcomes = await run.calls.run_batch(calls, iteration)
        for outcome in outcomes:
            await run.add(
                {"role": "user", "content": observation_message(outcome.name, outcome.observation)},
                kind="observation",
            )
    await run.add(
        tagged({"role": "user", "content": made_for_model_text(json_mode=not run.native)}), kind="reformat"
    )


def ungrounded(run: AgentRun, missing: list[RequiredCall]) -> Stop:
    """An answer without the required call that the engine could not make itself, or an answer still
    without it after that: the honest fallback, not the answer."""
    ids = [c.order_id for c in missing if c.order_id]
    policy = any(not c.order_id for c in missing)
    why = "the model answered without " + ", ".join(
        f"{c.tool} {json.dumps(c.args, ensure_ascii=False)}" for c in missing
    )
    return Stop(fallbacks.ungrounded_text(run.ctx, ids, policy), StopReason.UNGROUNDED, why)


async def _unreadable(run: AgentRun, step: Unreadable, injected: list[str]) -> Stop | None:
    run.parse_failures += 1
    if run.parse_failures >= 2 and not injected:
        # Second failure in a row: an unparseable reply is never the answer (issue 28: the player was
        # told a made-up limit that way); the run ends in an honest text that offers a person.
        run.messages.pop()
        return Stop(
            fallbacks.parse_failure_text(run.ctx, run.calls.outcomes),
            StopReason.PARSE_FAILURE,
            f"the model's reply could not be parsed as a JSON action twice in a row ({step.error})",
        )
    await run.persist([step.message], kind="step")
    if injected:
        await run.inject(injected)
    missing = run.missing_calls()
    example = (
        json.dumps(
            {"action": "tool_call", "tool": missing[0].tool, "args": call_args(missing[0], run.query)},
            ensure_ascii=False,
        )
        if missing
        else None
    )
    request = reformat_request(step.hint, step.error, example, language_of(run.query))
    await run.add(tagged({"role": "user", "content": request}), kind="reformat")
    return None
