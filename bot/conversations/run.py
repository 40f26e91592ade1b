"""One run of a thread: the engine's tool loop, then the answer streamed through the output guard and
the `Renderer` onto the channel's surface, and stored in the thread's memory."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from bot.analytics.record import record_run
from bot.attachments.vision import with_vision
from bot.conversations.grounding import fact_context
from bot.conversations.hooks import EventHook, FanOut, RunHooks, RunInfo
from bot.conversations.messages import STOPPED_TEXT, Incoming, failure_text
from bot.conversations.renderer import Renderer
from bot.conversations.run_deps import RunDeps
from bot.conversations.run_events import LiveFeed
from bot.conversations.surface import Surface
from bot.engine.agent import ReActAgent
from bot.engine.interrupts import InterruptQueue
from bot.engine.notes import engine_notes
from bot.engine.results import AgentResult
from bot.guards.notice_use import relays_notice
from bot.guards.output import OutputGuard, StreamingOutputGuard
from bot.incidents.notice import open_incidents, pinned_notice
from bot.loop_share import give_way
from bot.observability import log_context
from bot.vocabulary.language import detect_language
from tools.base import Actor, RequestTrust, ToolContext

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
    images: list[Any] = field(default_factory=list)
    """Screenshots of the message the next run answers (sent as image parts to a `vision` model)."""

    def leftovers(self, result: AgentResult | None = None) -> list[str]:
        """What the player sent that no run took in: the ended run's leftovers (`result`, None when it
        failed or was stopped), then what queued after the engine's last drain. The conversation side's
        one drain of the queue (the engine's is `AgentRun.take_interrupts`)."""
        return [*(result.leftover_interrupts if result is not None else ()), *self.queue.drain()]


async def answer(
    deps: RunDeps, state: RunState, thread_id: str, query: str, surface: Surface, untrusted: bool
) -> AgentResult:
    """One run: the engine's tool loop, then the answer streamed through the output guard onto `surface`.

    Its hooks (the live feed on `deps.run_events`, the surface's, `deps.hooks_for(thread_id)`) always see it end with one
    `on_run_end`: the delivered answer, or, when the run raised or was stopped, the apology or stop notice
    the channel shows instead. `untrusted` is the
    input guard's verdict on the message(s) in `query`, judged once when they arrived (`Conversations.handle`)."""
    watching = deps.hooks_for(thread_id)  # who watches the thread as the run starts watches it to its end
    with log_context(thread_id=thread_id, run_id=state.run_id):
        try:
            await deps.run_starts.wait_turn()
            return await _answer(deps, state, thread_id, query, surface, untrusted, watching)
        except BaseException as exc:
            if state.ended != state.run_id:
                state.ended = state.run_id
                locale = detect_language(query)
                text = STOPPED_TEXT if isinstance(exc, asyncio.CancelledError) else failure_text(locale)
                info = RunInfo(state.run_id, thread_id, state.actor, locale)
                await FanOut([LiveFeed(deps.run_events), *watching]).on_run_end(info, text)
            raise


async def _answer(
    deps: RunDeps,
    state: RunState,
    thread_id: str,
    query: str,
    surface: Surface,
    untrusted: bool,
    watching: tuple[RunHooks, ...],
) -> AgentResult:
    actor = state.actor
    started_at = deps.clock()
    # A channel may declare its own edit pace (the web streams every delta).
    declared = surface.traits.edit_interval
    edit_interval = deps.edit_interval if declared is None else declared
    locale = detect_language(query)
    renderer = Renderer(surface, edit_interval=edit_interval, locale=locale, tools=deps.tools)

    run_id = state.run_id
    info = RunInfo(run_id, thread_id, actor, locale, started_at)
    await surface.start_run(run_id)  # what the channel shows from here on is this run's reply
    # The live feed first, then what this run's surface shows, then the process's watchers.
    own = [EventHook(renderer.on_event), EventHook(surface.on_event)]
    hooks = FanOut([LiveFeed(deps.run_events), *own, *watching])
    renderer.on_call = hooks.surface_calls(info)

    async def on_event(event: Any) -> None:
        await hooks.on_event(info, event)

    await hooks.on_run_start(info)

    # Open incidents' notices are read afresh each run (an update takes effect at once) and ride in the
    # system prompt, which compaction never touches.
    incidents = await open_incidents(deps.store, actor.player_id)
    notice = pinned_notice(incidents, locale)
    system_prompt = deps.system_prompt if notice is None else f"{deps.system_prompt}\n\n{notice}"
    async with deps.llm_slots:
        vision = await with_vision(deps.llm_factory(), deps.attachments, query, state.images)
        state.images = []  # a follow-up run answers other messages
        llm = hooks.model_for(info, vision)
        agent = ReActAgent(
            llm,
            deps.tools_for(actor),
            use_native_tools=deps.use_native_tools,
            max_iterations=deps.max_iterations,
            run_budget_s=deps.run_budget_s,
            system_prompt=system_prompt,
            pace=deps.engine_steps.wait_turn,
            quirks=deps.quirks,
        )
        state.trust = RequestTrust(untrusted=untrusted)
        ctx = ToolContext(
            actor=actor,
            thread_id=thread_id,
            run_id=state.run_id,
            store=deps.store,
            locale=locale,
            clock=deps.clock,
            services=deps.services,
            trust=state.trust,
            question=query,
        )
        result = await agent.run(query, ctx, memory=deps.memory, interrupts=state.queue, on_event=on_event)

        async def prepare_guard() -> tuple[OutputGuard, StreamingOutputGuard]:
            facts = await fact_context(
                deps,
                thread_id,
                run_id=run_id,
                query=query,
                result=result,
                notices=[i.notice(lang) for i in incidents for lang in ("ko", "en")],
            )
            facts = replace(facts, model_notes=tuple(engine_notes(result)))
            output_guard = await OutputGuard.for_actor(
                deps.store,
                actor,
                thread_id=thread_id,
                locale=locale,
                protected_texts=[deps.system_prompt],
                tools=deps.tools,
                facts=facts,
                quirks=deps.quirks,
            )
            # The answer's checks run in the loop's turns like the tool loop's slices (`loop_share`): the
            # evidence, each streamed delta and the final check each wait while the turn is spent (the
            # contacts read above gives way in the store).
            await give_way()
            return output_guard, output_guard.stream(outcomes=result.tool_outcomes)  # the run's evidence

        # The guard is made ready (the thread's history read, the evidence built: 3–5 ms of the loop's
        # work) while the model starts on the answer, not before the request is sent: its first words
        # take a model's latency to come, and nothing the guard reads changes meanwhile (the tool loop's
        # messages are stored; the synthesis writes nothing). No delta reaches the player before the
        # guard has it. A lone conversation waited for both, one after the other.
        preparing = asyncio.create_task(prepare_guard())
        ready: tuple[OutputGuard, StreamingOutputGuard] | None = None
        try:
            try:
                async for delta in agent.stream_answer(result, query=query, on_event=on_event):
                    if ready is None:
                        ready = await preparing
                    await give_way()
                    safe = await ready[1].feed(delta)
                    if safe:
                        await hooks.on_answer_text(info, safe)
                        await renderer.append(safe)
            except Exception:  # synthesis broke mid-stream: what was checked so far stands
                if ready is None and preparing.done() and not preparing.cancelled() and preparing.exception():
                    raise  # the guard could not be made: not the synthesis' failure
                log.exception("synthesis failed on %s", thread_id)
            if ready is None:
                ready = await preparing
        finally:
            if not preparing.done():
                preparing.cancel()  # the run was stopped or failed first
            elif not preparing.cancelled():
                preparing.exception()  # raised above, or superseded by what is raised
        output_guard, guard = ready
        await give_way()
        final = await guard.finish()
        if result.synthesis_error and result.answer.strip():
            # The stream broke mid-answer: the loop's complete answer replaces the fragment.
            final = (await output_guard.check(result.answer, outcomes=result.tool_outcomes)).text
        if not final.strip():
            final = (
                await output_guard.check(result.answer or failure_text(locale), outcomes=result.tool_outcomes)
            ).text
        if not final.strip():  # the guard withheld every sentence: the player still gets an answer
            final = failure_text(locale)
    state.ended = run_id
    await give_way()
    await hooks.on_run_end(info, final)
    await renderer.finish(final)
    result.delivered_answer = final
    # The delivered answer and the run's analytics rows are committed together (one commit per run
    # less). When that write fails the answer is stored alone, as it was before analytics: losing the
    # analytics of a run is logged, losing the answer raises.
    recorded = await record_run(
        deps.store,
        run_id=state.run_id,
        thread_id=thread_id,
        player=actor.label,
        started_at=started_at,
        answered_at=deps.clock(),
        locale=locale,
        outcomes=result.tool_outcomes,
        # An answer that relayed a pinned notice counts as asking about its incident (told its compensation).
        relayed_incidents=[i.id for i in incidents if relays_notice(final, (i.notice("ko"), i.notice("en")))],
        alongside=[deps.memory.answer_rows(thread_id, final, run_id=state.run_id)],
    )
    if not recorded:
        await deps.memory.append_assistant(thread_id, final, run_id=state.run_id)
    return result
