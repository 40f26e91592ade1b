"""The ReAct agent and its run. `ReActAgent` is the configured agent: the two-phase run of seed 000 — a
tool loop on non-streaming `chat()` (native function calling or JSON mode), then a separate streaming
`stream_answer()` over the whole trace (`bot.engine.synthesis`). `AgentRun` is one run of the tool loop:
load the thread, pick tools, then call the model until it answers — or until the iteration limit, the
time budget or the repetition guard stops it — applying each reply's outcome (`bot.engine.steps`) in one
place.

The loop never crashes on a model or tool failure: tool problems become observations, model failures
end the run with a clear answer, and the history (in memory and persisted) stays API-valid throughout,
also when the task is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.engine import fallbacks
from bot.engine.calls import CallIds, ToolCalls
from bot.engine.context import ContextGuard, offered_schemas, request_share, summary_note
from bot.engine.events import (
    AnswerEvent,
    CompactEvent,
    DoneEvent,
    Emitter,
    EventCallback,
    InjectEvent,
    PhaseEvent,
    ThinkingEvent,
)
from bot.engine.grounding import (
    RequiredCall,
    answer_needs,
    call_args,
    made_for_model_text,
    missing_calls,
    send_back_text,
)
from bot.engine.interrupts import InterruptQueue, interrupt_message
from bot.engine.notes import tagged
from bot.engine.prompts import language_of, loop_system_prompt, observation_message, reformat_request
from bot.engine.results import AgentResult, StopReason
from bot.engine.selection import select_tools
from bot.engine.steps import Answer, CallTools, StepOutcome, Unreadable, read_json, read_native
from bot.engine.synthesis import stream_answer
from bot.engine.tool_prompt import describe_tools, player_values
from bot.engine.trace import format_trace
from bot.guard_rules import Quirks
from bot.llm.base import LLM, LLMError, ToolCall, Usage
from bot.loop_share import give_way
from bot.memory import ThreadMemory
from tools.base import ToolContext, ToolRegistry

log = logging.getLogger(__name__)
JSON_OBJECT: dict[str, Any] = {"type": "json_object"}


@dataclass(frozen=True)
class Stop:
    """How the loop ended: the answer, why, and an error text for the logs."""

    answer: str
    reason: StopReason
    error: str | None = None
    answer_from_trace: bool = False
    """The trace holds what the answer needs although the loop stopped (a read repeated with its result
    in hand): the synthesis writes the answer, `answer` is its fallback."""


class ReActAgent:
    """One model, one tool registry. `run()` is the loop; `stream_answer()` the synthesis."""

    def __init__(
        self,
        llm: LLM,
        tools: ToolRegistry,
        *,
        use_native_tools: bool = True,
        max_iterations: int = 50,
        run_budget_s: float | None = 90.0,
        tool_selection_threshold: int = 12,
        tool_selection_max: int = 6,
        context_window: int | None = None,
        synthesis_result_chars: int = 2_000,
        system_prompt: str | None = None,
        clock: Callable[[], float] | None = None,
        pace: Callable[[], Awaitable[None]] | None = None,
        quirks: Quirks | None = None,
    ) -> None:
        self._llm = llm
        self.quirks = quirks or Quirks()
        """The model's quirk modes for the call checks (`bot.engine.call_checks`)."""
        self.tools = tools
        self.use_native_tools = use_native_tools
        self.max_iterations = max_iterations
        self.run_budget_s = run_budget_s
        """Seconds the tool loop may take (None: no limit); then the run stops with `budget`."""
        self.tool_selection_threshold = tool_selection_threshold
        self.tool_selection_max = tool_selection_max
        self.context_window = int(context_window or llm.abilities.get("context_window") or 32_000)
        self.synthesis_result_chars = synthesis_result_chars
        self.system_prompt = system_prompt
        self.clock = clock or time.perf_counter
        self.pace = pace
        """Awaited when a model reply arrives, before the engine acts on it: a host running many runs
        spreads replies that land together over loop turns (`bot.conversations.pacing`)."""

    @property
    def llm(self) -> LLM:
        """The one model every call of every run of this agent uses."""
        return self._llm

    @property
    def native_mode(self) -> bool:
        """Native function calling iff asked for and the model declares `tool_call`; else JSON mode."""
        return bool(self.use_native_tools and self._llm.abilities.get("tool_call"))

    async def run(
        self,
        query: str,
        ctx: ToolContext,
        *,
        history: list[dict[str, Any]] | None = None,
        memory: ThreadMemory | None = None,
        interrupts: InterruptQueue | None = None,
        on_event: EventCallback | None = None,
    ) -> AgentResult:
        """Run the tool loop for `query` on `ctx.thread_id`. With `memory`, loads and persists the thread
        (every loop message as it is appended; the final answer is left to the caller)."""
        return await AgentRun(self, query, ctx, history, memory, interrupts, on_event).execute()

    def stream_answer(
        self, result: AgentResult, *, query: str | None = None, on_event: EventCallback | None = None
    ) -> AsyncIterator[str]:
        """Stream the player-facing answer; falls back to `result.answer` if synthesis yields nothing."""
        return stream_answer(
            self._llm,
            result,
            question=query if query is not None else result.query,
            result_chars=self.synthesis_result_chars,
            emit=Emitter(on_event),
            time_limit=self.run_budget_s,
        )

    def format_trace(self, messages: list[dict[str, Any]]) -> str:
        """The run as text for synthesis; every tool result cut to `synthesis_result_chars`."""
        return format_trace(messages, self.synthesis_result_chars)


class AgentRun:
    """State of one `ReActAgent.run` call."""

    def __init__(
        self,
        agent: ReActAgent,
        query: str,
        ctx: ToolContext,
        history: list[dict[str, Any]] | None,
        memory: ThreadMemory | None,
        interrupts: InterruptQueue | None,
        on_event: EventCallback | None,
    ) -> None:
        self.agent = agent
        self.llm = agent.llm
        self.clock = agent.clock
        self.query = query
        self.ctx = ctx
        self.history = history
        self.memory = memory
        self.writer = memory.writer(ctx.thread_id, run_id=ctx.run_id) if memory is not None else None
        self.queue = interrupts
        self.emit = Emitter(on_event)
        self.native = agent.native_mode
        self.registry = agent.tools
        self.schemas: list[dict[str, Any]] | None = None
        self.schemas_estimate = 0.0
        self.response_format = (
            JSON_OBJECT if not self.native and self.llm.abilities.get("json_mode") else None
        )
        """JSON mode asks an endpoint that declares `json_mode` for a JSON object: a grammar-constrained
        server (llama.cpp, vLLM, Ollama) can then not answer with a code fence or prose at all."""
        self.guard = ContextGuard(agent.context_window)
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.injected: list[str] = []
        self.unread_injection = False
        """JSON mode: a message was injected after the reply whose tool call is about to run."""
        self.iterations = 0
        self.parse_failures = 0
        self.sent_back = 0
        """Answers sent back for a missing required call (one is allowed; after the next the engine makes
        the calls itself, `made_for_model`)."""
        self.made_for_model = 0
        """Times the engine made the required reads the model skipped (once a run at most)."""
        self.selected: list[str] | None = None
        self.open_calls: dict[str, str] = {}
        """Calls whose assistant message is in the history but whose result is not yet appended."""
        self.calls = self._tool_calls()
        self.held_step: dict[str, Any] | None = None
        """A native step whose calls are all reads: stored with its results, in one transaction (the
        lone conversation's thread commits went from 7 to 5). A read that ends without a result loses
        nothing: the step is handed over when the run is cancelled or fails (`ThreadMemory.load` closes
        its calls as interrupted), and a step with a side effect is stored before it runs, as before."""
        self.deadline: float | None = None
        self.ids = CallIds(ctx.run_id)
        self.raw_estimate = 0
        self._known: tuple[list[dict[str, Any]], int, list[str]] = ([], 0, [])
        """`known_texts`' scan so far: the messages list it read, how many of its messages, their texts."""
        self._known_last: dict[str, Any] | None = None
        # The previous request, message by message: what was sent, its API form and its token share.
        self._sent: list[dict[str, Any]] = []
        self._apis: list[dict[str, Any]] = []
        self._shares: list[float] = []
        self._prepared: dict[int, tuple[dict[str, Any], tuple[dict[str, Any], float]]] = {}
        """`request_share` of the loaded history, kept by `ThreadMemory` between runs (by `id()`)."""
        """The last request's messages: (message of `messages`, its API copy, its token share). The run
        only appends to `messages` (and sets a stored message's private `_id`), so a request reuses the
        copies of the messages the previous one sent and builds only the new ones: a thread's history
        was copied and estimated in full at every model call (engine bench, 10-run threads: ~1/7 of the
        engine's profile)."""

    def _tool_calls(self) -> ToolCalls:
        # The callbacks reach this run through a weak proxy: closing over `self` would make every run a
        # reference cycle (run → calls → callback → run) that only the cyclic collector frees, and a
        # burst of finished runs would then cost full collections with the event loop stopped.
        run = weakref.proxy(self)
        return ToolCalls(
            self.registry,
            self.ctx,
            self.emit,
            self.clock,
            lambda: [run.query, *run.injected],
            json_mode=not self.native,
            unread=lambda: bool(run.queue) or run.unread_injection,
            known_texts=lambda: run.known_texts(),
            required=lambda: run.missing_calls(),
            quirks=self.agent.quirks,
        )

    # ---- persistence -----------------------------------------------------------------------

    async def add(self, message: dict[str, Any], kind: str) -> None:
        self.messages.append(message)
        await self.persist([message], kind)

    async def persist(self, messages: list[dict[str, Any]], kind: str) -> None:
        """Hand messages to the thread writer in order; the commit overlaps what the loop does next. A
        held step goes first (`held_step`)."""
        if self.writer is not None:
            self.release_held()
            self.writer.submit(messages, kind=kind)

    def release_held(self) -> None:
        """Hand the held step to the writer now (its results follow, or the run ends without them)."""
        if self.held_step is not None and self.writer is not None:
            self.writer.submit([self.held_step], kind="step")
        self.held_step = None

    async def finish_writes(self, *, quiet: bool = False) -> None:
        if self.writer is None:
            return
        try:
            await self.writer.close()
        except Exception:
            if not quiet:
                raise
            log.exception("could not persist the end of an interrupted run")

    # ---- the run ---------------------------------------------------------------------------

    async def execute(self) -> AgentResult:
        started = self.clock()
        if self.agent.run_budget_s:
            self.deadline = started + self.agent.run_budget_s
        stop = Stop("", StopReason.FINAL_ANSWER)
        try:
            if self.memory:
                prior, self._prepared = await self.memory.load_with(self.ctx.thread_id, request_share)
            else:
                prior = [dict(m) for m in self.history or []]
            for m in prior:
                m.pop("pinned", None)  # only this run's query and interrupts are pinned
                for tc in m.get("tool_calls") or []:
                    self.ids.seen.add(tc.get("id", ""))
            await self.choose_tools()
            json_tools = None if self.native else describe_tools(self.registry)
            system = loop_system_prompt(
                self.agent.system_prompt,
                json_tools=json_tools,
                now=_now(self.ctx),
                locale=self.ctx.locale,
                values=None if self.native else player_values(self.query),
            )
            self.messages = [{"role": "system", "content": system}, *prior]
            await self.add({"role": "user", "content": self.query, "pinned": True}, kind="query")
            stop = await self.loop()
        except asyncio.CancelledError:
            await self.close_open_calls()
            await self.finish_writes(quiet=True)
            raise
        except BaseException:
            self.release_held()
            await self.finish_writes(quiet=True)
            raise
        await self.finish_writes()
        leftovers = self.take_interrupts()
        answer, reason, error = stop.answer, stop.reason, stop.error
        elapsed = self.clock() - started
        if error:
            log.info("run stopped (%s): %s", reason, error)
        await self.emit(
            DoneEvent(
                answer=answer,
                iterations=self.iterations,
                usage=self.usage.as_dict(),
                elapsed=elapsed,
                stopped_reason=reason,
                error=error,
            )
        )
        return AgentResult(
            answer=answer,
            messages=self.messages,
            iterations=self.iterations,
            usage=self.usage,
            elapsed=elapsed,
            tool_outcomes=self.calls.outcomes,
            leftover_interrupts=leftovers,
            stopped_reason=reason,
            error=error,
            query=self.query,
            mode="native" if self.native else "json",
            injected=self.injected,
            selected_tools=self.selected,
            sent_back=self.sent_back,
            made_for_model=self.made_for_model,
            answer_from_trace=stop.answer_from_trace,
        )

    async def choose_tools(self) -> None:
        tools = self.agent.tools
        if len(tools) > self.agent.tool_selection_threshold:
            await self.emit(PhaseEvent(phase="selecting_tools", total_tools=len(tools)))
            selection = await select_tools(
                self.llm, tools, self.query, max_tools=self.agent.tool_selection_max
            )
            self.usage.add(selection.usage)
            self.registry = selection.registry
            self.selected = selection.selected
            self.calls = self._tool_calls()
            await self.emit(
                PhaseEvent(phase="tools_selected", total_tools=len(tools), selected=list(selection.selected))
            )
        if self.native and len(self.registry):
            self.schemas, self.schemas_estimate = offered_schemas(self.registry)
        else:
            self.schemas, self.schemas_estimate = None, 0.0

    def known_texts(self) -> list[str]:
        """What the conversation got from outside the model: the player's messages and tool results
        (earlier runs of the thread included)."""
        messages, scanned, texts = self._known
        last = scanned - 1
        # Asked before every call: only the messages appended since the last ask are scanned. A history
        # that was replaced (compaction) or changed at its end (an answer taken back) is scanned again.
        if (
            messages is not self.messages
            or len(messages) < scanned
            or (last >= 0 and messages[last] is not self._known_last)
        ):
            messages, scanned, texts = self.messages, 0, []
        texts += [
            m["content"]
            for m in messages[scanned:]
            if m.get("role") in ("user", "tool") and isinstance(m.get("content"), str)
        ]
        self._known = (messages, len(messages), texts)
        self._known_last = messages[-1] if messages else None
        return [self.query, *self.injected, *texts]

    def missing_calls(self) -> list[RequiredCall]:
        """Calls the player's messages of this run require that the model has not made yet."""
        return missing_calls(self.registry, self.ctx.actor, [self.query, *self.injected], self.calls.outcomes)

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - self.clock()

    async def loop(self) -> Stop:
        for iteration in range(1, self.agent.max_iterations + 1):
            if self.queue is not None and self.queue.stop_requested:
                return Stop(fallbacks.stopped_text(self.ctx), StopReason.CANCELLED)
            left = self.remaining()
            if left is not None and left <= 0:
                return self.out_of_time()
            self.iterations = iteration
            await give_way()
            request = await self.check_context()
            await self.emit(ThinkingEvent(status="start", iteration=iteration))
            timeout = asyncio.timeout(self.remaining())
            try:
                async with timeout:
                    response = await self.llm.chat(
                        request,
                        tools=self.schemas,
                        response_format=self.response_format,
                        purpose="loop",
                    )
            except AssertionError:
                raise
            except TimeoutError as exc:
                if timeout.expired():
                    return self.out_of_time()
                return Stop(
                    fallbacks.llm_error_text(self.ctx, self.calls.outcomes), StopReason.LLM_ERROR, repr(exc)
                )
            except Exception as exc:  # LLMError, or a broken adapter: end the run, keep the history valid
                if not isinstance(exc, LLMError):
                    log.exception("loop LLM call raised")
                return Stop(
                    fallbacks.llm_error_text(self.ctx, self.calls.outcomes),
                    StopReason.LLM_ERROR,
                    f"{type(exc).__name__}: {exc}",
                )
            if self.agent.pace is not None:
                await self.agent.pace()
            await give_way()  # replies that land together are read in turns, not all in one
            self.usage.add(response.usage)
            self.guard.calibrate(self.raw_estimate, response.usage.prompt_tokens)
            outcome = (
                read_native(response, self.ids, lambda: fallbacks.empty_text(self.ctx))
                if self.native
                else read_json(response, self.ids)
            )
            stop = await self.apply(outcome, iteration)
            if stop is not None:
                return stop
            if self.calls.repeated is not None:
                return self.repeated()
        limit = self.agent.max_iterations
        return Stop(
            fallbacks.max_iterations_text(self.ctx, limit, self.calls.outcomes), StopReason.MAX_ITERATIONS
        )

    def out_of_time(self) -> Stop:
        budget = self.agent.run_budget_s or 0
        ran = ", ".join(o.name for o in self.calls.outcomes) or "no tools"
        why = f"the run's time budget of {budget:g} s ran out after {self.iterations} model call(s) ({ran})"
        return Stop(fallbacks.budget_text(self.ctx, budget, self.calls.outcomes), StopReason.BUDGET, why)

    def repeated(self) -> Stop:
        o = self.calls.repeated
        assert o is not None
        why = (
            f"{o.name} was called three times with the same arguments (its result was already in the run)"
            if o.reused
            else f"{o.name} failed three times with the same arguments and the same result ({o.result.code})"
        )
        if o.reused and o.result.ok:
            # Seen live (2026-12-03): a 1.5B model looked the named order up three times and the player
            # was told the step "kept failing". The result is in the trace: the synthesis answers from it.
            text = fallbacks.repeated_read_text(self.ctx, self.calls.outcomes)
            return Stop(text, StopReason.REPETITION, why, answer_from_trace=True)
        return Stop(fallbacks.repetition_text(self.ctx, self.calls.outcomes), StopReason.REPETITION, why)

    def _api_request(self) -> list[dict[str, Any]]:
        """`messages` as the API takes them, and `raw_estimate` set to their `estimate_tokens` (the cached
        shares of the messages the previous request sent, plus the new ones')."""
        sent, messages = self._sent, self.messages
        kept = len(sent)
        # The usual case, compared in C: the previous request's messages, still first (a list compares
        # items by identity first; an equal message that is another object has the same share anyway).
        if kept > len(messages) or messages[:kept] != sent:
            kept = 0
            for old, message in zip(sent, messages, strict=False):
                if old is not message:
                    break
                kept += 1
            del sent[kept:], self._apis[kept:], self._shares[kept:]
        prepared = self._prepared
        for message in messages[kept:]:
            found = prepared.get(id(message))
            if found is not None and found[0] is message:
                api, tokens = found[1]
            else:
                api, tokens = request_share(message)
            sent.append(message)
            self._apis.append(api)
            self._shares.append(tokens)
        # Shares are multiples of 1/4: their sum is exact in any order.
        self.raw_estimate = int(self.schemas_estimate + sum(self._shares)) + 1
        return list(self._apis)

    async def check_context(self) -> list[dict[str, Any]]:
        """The messages of the next model call as the API takes them, compacted first when they would
        not fit the context window (built once per iteration: estimated and sent as they are)."""
        api = self._api_request()
        if int(self.raw_estimate * self.guard.ratio) <= self.guard.budget:
            return api
        if self.writer is not None:
            await self.writer.flush()  # the summary boundary is computed from stored ids
        compaction = await self.guard.compact(self.messages, self.llm, self.schemas)
        if compaction is None:
            return api
        self.messages = compaction.messages
        api = self._api_request()
        await self.emit(
            CompactEvent(
                original_messages=compaction.original_messages,
                kept_messages=compaction.kept_messages,
                summarized=compaction.summarized,
            )
        )
        if self.memory is not None and compaction.summarized and compaction.upto_id and compaction.summary:
            await self.memory.save_summary(
                self.ctx.thread_id, compaction.upto_id, summary_note(compaction.summary)
            )
        return api

    async def close_open_calls(self) -> None:
        """On cancellation: the results of calls that already finished are kept; `ThreadMemory.load`
        closes the calls that did not finish (its "interrupted" result), so the history stays valid."""
        results = [
            {"role": "tool", "tool_call_id": cid, "content": self.calls.finished[cid]}
            for cid in self.open_calls
            if cid in self.calls.finished
        ]
        self.open_calls = {}
        self.release_held()
        if results:
            self.messages.extend(results)
            await self.persist(results, kind="tool_result")

    # ---- applying a reply ---------------------------------------------------------------------
    # The one place that changes the run's messages for a step, sends an answer back, runs the calls
    # and takes in the player's queued interrupts.

    async def apply(self, outcome: StepOutcome, iteration: int) -> Stop | None:
        """Apply one reply's outcome; a `Stop` ends the loop, None asks the model again."""
        await self.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=outcome.reasoning))
        if self.native:
            if isinstance(outcome, CallTools):
                return await self._native_calls(outcome, iteration)
            assert isinstance(outcome, Answer)
            return await self._answer(outcome, self.take_interrupts(), iteration)
        # JSON mode: the reply joins the messages first, and interrupts are taken right after it, before the
        # final-answer check.
        self.messages.append(outcome.message)
        injected = self.take_interrupts()
        if isinstance(outcome, Unreadable):
            return await self._unreadable(outcome, injected)
        self.parse_failures = 0
        if isinstance(outcome, Answer):
            return await self._answer(outcome, injected, iteration)
        return await self._json_call(outcome, injected, iteration)

    async def _answer(self, answer: Answer, injected: list[str], iteration: int) -> Stop | None:
        if injected:
            # The player added something: this answer is no longer final, keep looping.
            await self._keep(answer)
            await self.inject(injected)
            return None
        missing = [c for c in self.missing_calls() if answer_needs(c, answer.final)]
        if missing:
            if self.sent_back:
                if answer.in_messages:
                    self.messages.pop()  # the unchecked answer stays out of the thread
                if self.made_for_model or not self.may_make(missing):
                    return self.ungrounded(missing)
                await self.make_for_model(missing, iteration)
                return None
            await self._keep(answer)
            await self.send_back(missing)
            return None
        await self.emit(AnswerEvent(channel="step", status="start"))
        if not answer.in_messages and answer.message["content"] == answer.final:  # native, and not blank
            self.messages.append({"role": "assistant", "content": answer.final})
        return Stop(answer.final, StopReason.FINAL_ANSWER)

    async def _keep(self, answer: Answer) -> None:
        if answer.in_messages:
            await self.persist([answer.message], kind="step")
        else:
            await self.add(answer.message, kind="step")

    async def _native_calls(self, step: CallTools, iteration: int) -> None:
        self.open_calls = {c.id: c.name for c in step.calls}
        self.calls.finished = {}
        if self.calls.reads_only(step.calls):
            self.release_held()
            self.messages.append(step.message)
            self.held_step = step.message  # stored with the results (`held_step`)
        else:
            await self.add(step.message, kind="step")
        outcomes = await self.calls.run_batch(step.calls, iteration)
        # All results first: the API requires them right after the assistant message.
        results = [{"role": "tool", "tool_call_id": o.call_id, "content": o.observation} for o in outcomes]
        self.messages.extend(results)
        self.open_calls = {}
        await self.persist(results, kind="tool_result")
        await self._take_in_after_calls()

    async def _json_call(self, step: CallTools, injected: list[str], iteration: int) -> None:
        await self.persist([step.message], kind="step")
        if injected:
            await self.inject(injected)
        self.unread_injection = bool(injected)
        try:
            [outcome] = await self.calls.run_batch(step.calls, iteration)
        finally:
            self.unread_injection = False
        await self.add(
            {"role": "user", "content": observation_message(outcome.name, outcome.observation)},
            kind="observation",
        )
        # Also after the observation (safe: JSON mode has no pairing rule), so a message that came in
        # while the tool ran reaches the very next call, as in native mode: one script fits both modes.
        await self._take_in_after_calls()

    async def _take_in_after_calls(self) -> None:
        """After a step's results, unless the calls repeat (the run is about to stop): inject what came in."""
        if self.calls.repeated is None:
            injected = self.take_interrupts()
            if injected:
                await self.inject(injected)

    async def send_back(self, missing: list[RequiredCall]) -> None:
        """The answer came before a required call: ask for exactly that call, once per run."""
        self.sent_back += 1
        text = send_back_text(missing, self.query, json_mode=not self.native)
        await self.add(tagged({"role": "user", "content": text}), kind="reformat")

    def may_make(self, missing: list[RequiredCall]) -> bool:
        """Whether the engine may make the missing calls itself: reads the actor may run (never a side
        effect: what the player did not ask the model to do is not done for it)."""
        registry = self.registry
        return all(
            registry.get(c.tool) is not None
            and not registry.is_side_effect(c.tool)
            and registry.allowed(c.tool, self.ctx.actor)
            for c in missing
        )

    async def make_for_model(self, missing: list[RequiredCall], iteration: int) -> None:
        """A second answer without the required reads: the engine makes them itself, with the arguments it
        had asked for, and asks once more for an answer from their results (a small model that ignores the
        instruction twice still gets the player an answer from the policy or the order, not a refusal).
        The calls run as the model's would (same checks, events and trace); native mode sees them as an
        assistant tool call with its results, JSON mode as observations."""
        self.made_for_model += 1
        calls = [
            self.ids.unique(
                ToolCall(
                    id="", name=c.tool, arguments=json.dumps(call_args(c, self.query), ensure_ascii=False)
                )
            )
            for c in missing
        ]
        if self.native:
            message = {"role": "assistant", "content": None, "tool_calls": [c.to_message() for c in calls]}
            await self._native_calls(CallTools(calls=calls, message=message), iteration)
        else:
            outcomes = await self.calls.run_batch(calls, iteration)
            for outcome in outcomes:
                await self.add(
                    {"role": "user", "content": observation_message(outcome.name, outcome.observation)},
                    kind="observation",
                )
        await self.add(
            tagged({"role": "user", "content": made_for_model_text(json_mode=not self.native)}),
            kind="reformat",
        )

    def ungrounded(self, missing: list[RequiredCall]) -> Stop:
        """An answer without the required call that the engine could not make itself, or an answer still
        without it after that: the honest fallback, not the answer."""
        ids = [c.order_id for c in missing if c.order_id]
        policy = any(not c.order_id for c in missing)
        why = "the model answered without " + ", ".join(
            f"{c.tool} {json.dumps(c.args, ensure_ascii=False)}" for c in missing
        )
        return Stop(fallbacks.ungrounded_text(self.ctx, ids, policy), StopReason.UNGROUNDED, why)

    async def _unreadable(self, step: Unreadable, injected: list[str]) -> Stop | None:
        self.parse_failures += 1
        if self.parse_failures >= 2 and not injected:
            # Second failure in a row: an unparseable reply is never the answer (issue 28: the player was
            # told a made-up limit that way); the run ends in an honest text that offers a person.
            self.messages.pop()
            return Stop(
                fallbacks.parse_failure_text(self.ctx, self.calls.outcomes),
                StopReason.PARSE_FAILURE,
                f"the model's reply could not be parsed as a JSON action twice in a row ({step.error})",
            )
        await self.persist([step.message], kind="step")
        if injected:
            await self.inject(injected)
        missing = self.missing_calls()
        example = (
            json.dumps(
                {"action": "tool_call", "tool": missing[0].tool, "args": call_args(missing[0], self.query)},
                ensure_ascii=False,
            )
            if missing
            else None
        )
        request = reformat_request(step.hint, step.error, example, language_of(self.query))
        await self.add(tagged({"role": "user", "content": request}), kind="reformat")
        return None

    # ---- interrupts ------------------------------------------------------------------------

    def take_interrupts(self) -> list[str]:
        """The player's messages queued since the last take: the only drain of the queue during a run
        (`AgentRun.apply` at the points the seed allows, and the leftovers when the loop ends)."""
        return self.queue.drain() if self.queue is not None else []

    async def inject(self, texts: list[str]) -> None:
        content = interrupt_message(texts)
        await self.add({"role": "user", "content": content, "pinned": True}, kind="interrupt")
        self.injected.extend(texts)
        await self.emit(InjectEvent(content=content, messages=list(texts)))


def _now(ctx: ToolContext) -> datetime | None:
    try:
        return ctx.clock().astimezone(ZoneInfo(ctx.services.timezone))
    except Exception:  # a test clock or a bad zone must not block the run
        return None
