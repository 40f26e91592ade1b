"""What one model reply does to a run, in each mode: native tool calls run as a batch whose results
follow the assistant message; a JSON-mode reply is read as one action (repaired where unambiguous),
and a tool result comes back as an observation message."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bot.engine import fallbacks
from bot.engine.events import AnswerEvent, ThinkingEvent
from bot.engine.grounding import RequiredCall, call_args, send_back_text
from bot.engine.parsing import FINAL_ANSWER, read_action
from bot.engine.prompts import language_of, observation_message, reformat_request
from bot.engine.results import StopReason
from bot.llm.base import LLMResult, ToolCall

if TYPE_CHECKING:
    from bot.engine.run import AgentRun, Stop


async def native_step(run: AgentRun, response: LLMResult, iteration: int) -> Stop | None:
    calls = response.tool_calls
    reasoning = response.reasoning_content or (response.content if calls else None)
    await run.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=reasoning))
    if not calls:
        text = response.content or ""
        injected = run.drain()
        if injected:
            # The player added something: this answer is no longer final, keep looping.
            await run.add({"role": "assistant", "content": text or "(draft answer withheld)"}, kind="step")
            await run.inject(injected)
            return None
        missing = run.missing_calls()
        if missing:
            if run.sent_back:
                return ungrounded(run, missing)
            await run.add({"role": "assistant", "content": text or "(draft answer withheld)"}, kind="step")
            return await send_back(run, missing)
        await run.emit(AnswerEvent(channel="step", status="start"))
        if text:
            run.messages.append({"role": "assistant", "content": text})
        return text or fallbacks.empty_text(run.ctx), StopReason.FINAL_ANSWER, None
    calls = [run.ids.unique(c) for c in calls]
    assistant = {
        "role": "assistant",
        "content": response.content or None,
        "tool_calls": [c.to_message() for c in calls],
    }
    run.open_calls = {c.id: c.name for c in calls}
    run.calls.finished = {}
    await run.add(assistant, kind="step")
    outcomes = await run.calls.run_batch(calls, iteration)
    # All results first: the API requires them right after the assistant message.
    results = [{"role": "tool", "tool_call_id": o.call_id, "content": o.observation} for o in outcomes]
    run.messages.extend(results)
    run.open_calls = {}
    await run.persist(results, kind="tool_result")
    if run.calls.repeated is None:
        injected = run.drain()
        if injected:
            await run.inject(injected)
    return None


async def json_step(run: AgentRun, response: LLMResult, iteration: int) -> Stop | None:
    content = response.content or ""
    reading = read_action(content)
    action = reading.action
    reasoning = (action.reasoning if action else "") or response.reasoning_content
    await run.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=reasoning or None))
    assistant = {"role": "assistant", "content": content or "(empty reply)"}
    run.messages.append(assistant)
    injected = run.drain()  # right after the assistant message, before the final-answer check
    if action is None:
        return await json_parse_failure(run, assistant, injected, reading.hint, reading.error)
    run.parse_failures = 0
    if action.kind == FINAL_ANSWER:
        if injected:
            await run.persist([assistant], kind="step")
            await run.inject(injected)
            return None
        missing = run.missing_calls()
        if missing:
            if run.sent_back:
                run.messages.pop()  # the unchecked answer stays out of the thread
                return ungrounded(run, missing)
            await run.persist([assistant], kind="step")
            return await send_back(run, missing)
        await run.emit(AnswerEvent(channel="step", status="start"))
        return action.answer, StopReason.FINAL_ANSWER, None
    await run.persist([assistant], kind="step")
    if injected:
        await run.inject(injected)
    arguments = action.args if isinstance(action.args, str) else json.dumps(action.args, ensure_ascii=False)
    call = ToolCall(id=run.ids.new(), name=action.tool, arguments=arguments)
    run.unread_injection = bool(injected)
    try:
        [outcome] = await run.calls.run_batch([call], iteration)
    finally:
        run.unread_injection = False
    await run.add(
        {"role": "user", "content": observation_message(outcome.name, outcome.observation)},
        kind="observation",
    )
    # Also after the observation (safe: JSON mode has no pairing rule), so a message that came in
    # while the tool ran reaches the very next call, as in native mode: one script fits both modes.
    if run.calls.repeated is None:
        injected = run.drain()
        if injected:
            await run.inject(injected)
    return None


async def send_back(run: AgentRun, missing: list[RequiredCall]) -> None:
    """The answer came before a required call: ask for exactly that call, once per run."""
    run.sent_back += 1
    text = send_back_text(missing, run.query, json_mode=not run.native)
    await run.add({"role": "user", "content": text}, kind="reformat")


def ungrounded(run: AgentRun, missing: list[RequiredCall]) -> Stop:
    """A second answer without the required call: the honest fallback, not the answer."""
    ids = [c.order_id for c in missing if c.order_id]
    policy = any(not c.order_id for c in missing)
    why = "the model answered twice without " + ", ".join(
        f"{c.tool} {json.dumps(c.args, ensure_ascii=False)}" for c in missing
    )
    return fallbacks.ungrounded_text(run.ctx, ids, policy), StopReason.UNGROUNDED, why


async def json_parse_failure(
    run: AgentRun,
    assistant: dict[str, Any],
    injected: list[str],
    hint: str | None,
    error: str | None,
) -> Stop | None:
    run.parse_failures += 1
    if run.parse_failures >= 2 and not injected:
        # Second failure in a row: an unparseable reply is never the answer (issue 28: the player was
        # told a made-up limit that way); the run ends in an honest text that offers a person.
        run.messages.pop()
        return (
            fallbacks.parse_failure_text(run.ctx, run.calls.outcomes),
            StopReason.PARSE_FAILURE,
            f"the model's reply could not be parsed as a JSON action twice in a row ({error})",
        )
    await run.persist([assistant], kind="step")
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
    request = reformat_request(hint, error, example, language_of(run.query))
    await run.add({"role": "user", "content": request}, kind="reformat")
    return None
