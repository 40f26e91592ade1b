"""One run of a thread: the engine's tool loop, then the answer streamed through the output guard and
the `Renderer` onto the channel's surface, and stored in the thread's memory."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bot.analytics.record import record_run
from bot.conversations.grounding import fact_context
from bot.conversations.messages import STOPPED_TEXT, Incoming, detect_locale, failure_text
from bot.conversations.renderer import Renderer
from bot.conversations.run_events import AnswerText, RunEnd, RunEvent
from bot.conversations.surface import Surface
from bot.engine.agent import ReActAgent
from bot.engine.interrupts import InterruptQueue
from bot.engine.results import AgentResult
from bot.guards.output import OutputGuard
from bot.incidents.notice import open_incidents, pinned_notice
from bot.observability import log_context
from tools.base import Actor, RequestTrust, ToolContext

if TYPE_CHECKING:
    from bot.conversations.routing import Conversations

log = logging.getLogger(__name__)


@dataclass
class RunState:
    """One thread's running answer: who it is for, its interrupt queue, and what waits after it."""

    actor: Actor
    queue: InterruptQueue
    task: asyncio.Task[Any] | None = None
    run_id: str = ""
    later: list[tuple[Incoming, Surface]] = field(default_factory=list)
    """Messages from other people in the channel: they get their own run, with their own identity."""
    stopped: bool = False
    trust: RequestTrust = field(default_factory=RequestTrust)
    """The running answer's trust: set from its query, tainted by an untrusted interrupt."""
    ended: str = ""
    """The last run whose `RunEnd` its watchers got."""
    untrusted_texts: set[str] = field(default_factory=set)
    """Follow-ups the input guard flagged: a run started from leftovers is untrusted if one of them was."""


async def answer(
    conv: Conversations, state: RunState, thread_id: str, query: str, surface: Surface, untrusted: bool
) -> AgentResult:
    """One run: the engine's tool loop, then the answer streamed through the output guard onto `surface`.

    Its watchers (`conv.run_events`) always see it end with one `RunEnd`: the delivered answer, or, when
    the run raised or was stopped, the apology or stop notice the channel shows instead. `untrusted` is the
    input guard's verdict on the message(s) in `query`, judged once when they arrived (`Conversations.handle`)."""
    with log_context(thread_id=thread_id, run_id=state.run_id):
        try:
            await conv.run_starts.wait_turn()
            return await _answer(conv, state, thread_id, query, surface, untrusted)
        except BaseException as exc:
            if state.ended != state.run_id:
                state.ended = state.run_id
                locale = detect_locale(query)
                text = STOPPED_TEXT if isinstance(exc, asyncio.CancelledError) else failure_text(locale)
                end = RunEvent(state.run_id, RunEnd(text), state.actor, locale)
                conv.run_events.publish(thread_id, end)
            raise


async def _answer(
    conv: Conversations, state: RunState, thread_id: str, query: str, surface: Surface, untrusted: bool
) -> AgentResult:
    actor = state.actor
    started_at = conv.clock()
    # A channel may declare its own edit pace (the web streams every delta).
    declared = surface.traits.edit_interval
    edit_interval = conv.edit_interval if declared is None else declared
    locale = detect_locale(query)
    renderer = Renderer(
        surface, edit_interval=edit_interval, locale=locale, tools=conv.tools, observer=conv.metrics
    )

    hub = conv.run_events
    run_id = state.run_id
    await surface.start_run(run_id)  # what the channel shows from here on is this run's reply

    async def on_event(event: Any) -> None:
        hub.publish(thread_id, RunEvent(run_id, event, actor, locale))
        await renderer.on_event(event)
        await surface.on_event(event)
        for observer in conv.observers:
            observer(event)
        if conv.event_hook is not None:
            res = conv.event_hook(event)
            if asyncio.iscoroutine(res):
                await res

    # Open incidents' notices are read afresh each run (an update takes effect at once) and ride in the
    # system prompt, which compaction never touches.
    notice = pinned_notice(await open_incidents(conv.store, actor.player_id), locale)
    system_prompt = conv.system_prompt if notice is None else f"{conv.system_prompt}\n\n{notice}"
    async with conv.llm_slots:
        llm = conv.llm_factory()
        agent = ReActAgent(
            llm,
            conv.tools_for(actor),
            use_native_tools=conv.use_native_tools,
            max_iterations=conv.max_iterations,
            run_budget_s=conv.run_budget_s,
            system_prompt=system_prompt,
            pace=conv.engine_steps.wait_turn,
        )
        state.trust = RequestTrust(untrusted=untrusted)
        ctx = ToolContext(
            actor=actor,
            thread_id=thread_id,
            run_id=state.run_id,
            store=conv.store,
            locale=locale,
            clock=conv.clock,
            services=conv.services,
            trust=state.trust,
        )
        result = await agent.run(query, ctx, memory=conv.memory, interrupts=state.queue, on_event=on_event)
        facts = await fact_context(conv, thread_id, run_id=run_id, query=query, result=result)
        output_guard = await OutputGuard.for_actor(
            conv.store,
            actor,
            thread_id=thread_id,
            locale=locale,
            protected_texts=[conv.system_prompt],
            tools=conv.tools,
            facts=facts,
        )
        guard = output_guard.stream(outcomes=result.tool_outcomes)
        try:
            async for delta in agent.stream_answer(result, query=query, on_event=on_event):
                safe = await guard.feed(delta)
                if safe:
                    hub.publish(thread_id, RunEvent(run_id, AnswerText(safe), actor, locale))
                    await renderer.append(safe)
        except Exception:  # synthesis broke mid-stream: what was checked so far stands
            log.exception("synthesis failed on %s", thread_id)
        final = await guard.finish()
        if result.synthesis_error and result.answer.strip():
            # The stream broke mid-answer: the loop's complete answer replaces the fragment.
            final = (await output_guard.check(result.answer, outcomes=result.tool_outcomes)).text
        if not final.strip():
            final = (
                await output_guard.check(result.answer or failure_text(locale), outcomes=result.tool_outcomes)
            ).text
    state.ended = run_id
    hub.publish(thread_id, RunEvent(run_id, RunEnd(final), actor, locale))
    await renderer.finish(final)
    await conv.memory.append_assistant(thread_id, final, run_id=state.run_id)
    result.delivered_answer = final
    await record_run(
        conv.store,
        run_id=state.run_id,
        thread_id=thread_id,
        player=actor.label,
        started_at=started_at,
        answered_at=conv.clock(),
        locale=locale,
        outcomes=result.tool_outcomes,
    )
    return result
