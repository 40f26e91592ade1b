"""`ReActAgent`: the two-phase run of seed 000 — a tool loop on non-streaming `chat()` (native function
calling or JSON mode), then a separate streaming `stream_answer()` over the whole trace.

The loop never crashes on a model or tool failure: tool problems become observations, model failures
end the run with a clear answer, and the history (in memory and persisted) stays API-valid throughout,
also when the task is cancelled.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.engine.context import ContextGuard, estimate_tokens
from bot.engine.events import (
    AnswerEvent,
    CompactEvent,
    DoneEvent,
    Event,
    InjectEvent,
    IterationEvent,
    PhaseEvent,
    ThinkingEvent,
)
from bot.engine.interrupts import InterruptQueue, interrupt_message
from bot.engine.observations import observation_text
from bot.engine.prompts import (
    LOOP_REFORMAT_REQUEST,
    OBSERVATION_PREFIX,
    loop_system_prompt,
    observation_message,
    synthesis_messages,
)
from bot.engine.selection import select_tools
from bot.engine.structured import extract_json
from bot.llm.base import LLM, LLMError, LLMResult, ToolCall, Usage, api_message
from bot.memory import INTERRUPTED_RESULT, ThreadMemory
from tools.base import ResultCode, ToolContext, ToolRegistry, ToolResult

log = logging.getLogger(__name__)

EventCallback = Callable[[Event], Awaitable[None] | None]

STOP_FINAL = "final_answer"
STOP_MAX = "max_iterations"
STOP_PARSE = "parse_failure"
STOP_LLM = "llm_error"
STOP_CANCELLED = "cancelled"


@dataclass
class ToolOutcome:
    """One executed tool call: what was asked, what came back, what the model read."""

    call_id: str
    name: str
    args: dict[str, Any] | str
    result: ToolResult
    observation: str
    elapsed: float
    iteration: int


@dataclass
class AgentResult:
    """The tool loop's outcome; `stream_answer` turns it into the player-facing reply."""

    answer: str
    """The loop's final text (or a fallback); what the player gets if synthesis fails."""
    messages: list[dict[str, Any]]
    """The whole trace; messages may carry `pinned` / `_id` (use `api_message` before sending)."""
    iterations: int
    usage: Usage
    elapsed: float
    tool_outcomes: list[ToolOutcome] = field(default_factory=list)
    leftover_interrupts: list[str] = field(default_factory=list)
    """Messages queued after the last drain: the caller must start the next run with them."""
    stopped_reason: str = STOP_FINAL
    """final_answer | max_iterations | parse_failure | llm_error | cancelled."""
    error: str | None = None
    query: str = ""
    mode: str = "native"
    injected: list[str] = field(default_factory=list)
    """Interrupt texts the loop took in."""
    synthesis_error: str | None = None
    """Set when the answer stream broke; text already streamed is then incomplete."""
    selected_tools: list[str] | None = None
    """Names picked by tool selection (None when selection did not run)."""

    @property
    def codes(self) -> list[str]:
        return [str(o.result.code) for o in self.tool_outcomes]

    @property
    def tools_called(self) -> list[str]:
        return [o.name for o in self.tool_outcomes]


@dataclass
class _JsonAction:
    kind: str
    tool: str = ""
    args: Any = None
    answer: str = ""
    reasoning: str = ""


def parse_action(content: str | None) -> _JsonAction | None:
    """A JSON-mode reply as an action, or None when it is not one (→ reformat request)."""
    data = extract_json(content)
    if not isinstance(data, dict):
        return None
    action = data.get("action")
    reasoning = data.get("reasoning") if isinstance(data.get("reasoning"), str) else ""
    if action == "tool_call" or (action is None and "tool" in data):
        tool = data.get("tool") or data.get("name")
        if not isinstance(tool, str) or not tool:
            return None
        args = data.get("args", data.get("arguments", {}))
        return _JsonAction("tool_call", tool=tool, args=args if args is not None else {}, reasoning=reasoning)
    if action == "final_answer" or (action is None and "answer" in data):
        answer = data.get("answer")
        if not isinstance(answer, str):
            return None
        return _JsonAction("final_answer", answer=answer, reasoning=reasoning)
    return None


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [cut, {len(text) - limit} more characters]"


class ReActAgent:
    """One model, one tool registry. `run()` is the loop; `stream_answer()` the synthesis."""

    def __init__(
        self,
        llm: LLM,
        tools: ToolRegistry,
        *,
        use_native_tools: bool = True,
        max_iterations: int = 50,
        tool_selection_threshold: int = 12,
        tool_selection_max: int = 6,
        context_window: int | None = None,
        synthesis_result_chars: int = 2_000,
        system_prompt: str | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._llm = llm
        self.tools = tools
        self.use_native_tools = use_native_tools
        self.max_iterations = max_iterations
        self.tool_selection_threshold = tool_selection_threshold
        self.tool_selection_max = tool_selection_max
        self.context_window = int(context_window or llm.abilities.get("context_window") or 32_000)
        self.synthesis_result_chars = synthesis_result_chars
        self.system_prompt = system_prompt
        self._clock = clock or time.perf_counter

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
        return await _Run(self, query, ctx, history, memory, interrupts, on_event).execute()

    async def stream_answer(
        self, result: AgentResult, *, query: str | None = None, on_event: EventCallback | None = None
    ) -> AsyncIterator[str]:
        """Stream the player-facing answer; falls back to `result.answer` if synthesis yields nothing."""
        emit = _Emitter(on_event)
        await emit(AnswerEvent(channel="answer", status="start"))
        produced = False
        # A model that just failed in the loop would fail again here; go straight to the fallback.
        if result.stopped_reason not in (STOP_LLM, STOP_CANCELLED):
            question = query if query is not None else result.query
            trace = self.format_trace(result.messages)
            messages = synthesis_messages(question, trace, result.answer)
            try:
                async for delta in self._llm.stream_chat(messages, purpose="synthesis"):
                    if not delta:
                        continue
                    produced = True
                    await emit(AnswerEvent(channel="answer", status="delta", content=delta))
                    yield delta
            except AssertionError:
                raise
            except Exception as exc:  # the edge: any synthesis failure falls back to the loop's answer
                log.warning(
                    "answer synthesis failed (%s: %s); using the loop's answer", type(exc).__name__, exc
                )
                # Text already streamed cannot be taken back here: the caller replaces it with
                # `result.answer` when this is set (see Conversations).
                result.synthesis_error = f"{type(exc).__name__}: {exc}"
        if not produced and result.answer:
            await emit(AnswerEvent(channel="answer", status="delta", content=result.answer))
            yield result.answer
        await emit(AnswerEvent(channel="answer", status="done"))

    def format_trace(self, messages: list[dict[str, Any]]) -> str:
        """The run as text for synthesis; every tool result cut to `synthesis_result_chars`."""
        limit = self.synthesis_result_chars
        names: dict[str, str] = {}
        lines: list[str] = []
        for m in messages:
            role, content = m.get("role"), m.get("content") if isinstance(m.get("content"), str) else ""
            if role == "system":
                continue
            if role == "tool":
                name = names.get(m.get("tool_call_id", ""), "tool")
                lines.append(f"Result of {name}: {_cut(content, limit)}")
            elif role == "assistant" and m.get("tool_calls"):
                for tc in m["tool_calls"]:
                    fn = tc.get("function") or {}
                    names[tc.get("id", "")] = fn.get("name", "tool")
                    lines.append(f"Assistant called {fn.get('name')}({fn.get('arguments', '')})")
            elif role == "assistant":
                action = parse_action(content) if content.lstrip().startswith("{") else None
                if action is not None and action.kind == "tool_call":
                    lines.append(
                        f"Assistant called {action.tool}({json.dumps(action.args, ensure_ascii=False)})"
                    )
                elif action is not None:
                    lines.append(f"Assistant: {action.answer}")
                elif content:
                    lines.append(f"Assistant: {content}")
            elif content.startswith(OBSERVATION_PREFIX):
                lines.append(f"Result of {_cut(content[len(OBSERVATION_PREFIX) :], limit)}")
            elif content and content != LOOP_REFORMAT_REQUEST:
                lines.append(f"Player: {content}")
        return "\n".join(lines)


class _Emitter:
    """Calls the event callback (sync or async). A failing UI callback is logged, never fatal;
    assertion errors (test and replay expectations) propagate."""

    def __init__(self, callback: EventCallback | None) -> None:
        self._callback = callback

    async def __call__(self, event: Event) -> None:
        if self._callback is None:
            return
        try:
            outcome = self._callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        except AssertionError:
            raise
        except Exception:
            log.exception("event callback failed for %s", event.type)


class _Run:
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
        self.query = query
        self.ctx = ctx
        self.history = history
        self.memory = memory
        self.writer = memory.writer(ctx.thread_id, run_id=ctx.run_id) if memory is not None else None
        self.queue = interrupts
        self.emit = _Emitter(on_event)
        self.native = agent.native_mode
        self.registry = agent.tools
        self.schemas: list[dict[str, Any]] | None = None
        self.guard = ContextGuard(agent.context_window)
        self.messages: list[dict[str, Any]] = []
        self.usage = Usage()
        self.outcomes: list[ToolOutcome] = []
        self.injected: list[str] = []
        self.iterations = 0
        self.parse_failures = 0
        self.selected: list[str] | None = None
        self.seen_ids: set[str] = set()
        self.open_calls: dict[str, str] = {}
        """Calls whose assistant message is in the history but whose result is not yet appended."""
        self.finished: dict[str, str] = {}
        """Observations of open calls that already finished (used when the run is cancelled)."""
        # Run id plus a random part: unique in the thread even if a caller reuses a run id, which would
        # otherwise also repeat the tools' idempotency keys.
        token = re.sub(r"[^A-Za-z0-9]", "", ctx.run_id or "")[-10:]
        self.id_base = f"call_{token}{secrets.token_hex(3)}"
        self.id_seq = 0
        self.raw_estimate = 0

    # ---- persistence -----------------------------------------------------------------------

    async def add(self, message: dict[str, Any], kind: str) -> None:
        self.messages.append(message)
        await self.persist([message], kind)

    async def persist(self, messages: list[dict[str, Any]], kind: str) -> None:
        """Hand messages to the thread writer in order; the commit overlaps what the loop does next."""
        if self.writer is not None:
            self.writer.submit(messages, kind=kind)

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
        started = self.agent._clock()
        answer, reason, error = "", STOP_FINAL, None
        try:
            prior = (
                await self.memory.load(self.ctx.thread_id)
                if self.memory
                else [dict(m) for m in self.history or []]
            )
            for m in prior:
                m.pop("pinned", None)  # only this run's query and interrupts are pinned
                for tc in m.get("tool_calls") or []:
                    self.seen_ids.add(tc.get("id", ""))
            await self.choose_tools()
            json_tools = None if self.native else self.registry.prompt_descriptions()
            system = loop_system_prompt(
                self.agent.system_prompt, json_tools=json_tools, now=_now(self.ctx), locale=self.ctx.locale
            )
            self.messages = [{"role": "system", "content": system}, *prior]
            await self.add({"role": "user", "content": self.query, "pinned": True}, kind="query")
            answer, reason, error = await self.loop()
        except asyncio.CancelledError:
            await self.close_open_calls()
            await self.finish_writes(quiet=True)
            raise
        except BaseException:
            await self.finish_writes(quiet=True)
            raise
        await self.finish_writes()
        leftovers = self.queue.drain() if self.queue is not None else []
        elapsed = self.agent._clock() - started
        await self.emit(
            DoneEvent(
                answer=answer,
                iterations=self.iterations,
                usage=self.usage.as_dict(),
                elapsed=elapsed,
                stopped_reason=reason,
            )
        )
        return AgentResult(
            answer=answer,
            messages=self.messages,
            iterations=self.iterations,
            usage=self.usage,
            elapsed=elapsed,
            tool_outcomes=self.outcomes,
            leftover_interrupts=leftovers,
            stopped_reason=reason,
            error=error,
            query=self.query,
            mode="native" if self.native else "json",
            injected=self.injected,
            selected_tools=self.selected,
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
            await self.emit(
                PhaseEvent(phase="tools_selected", total_tools=len(tools), selected=list(selection.selected))
            )
        self.schemas = self.registry.schemas() if self.native and len(self.registry) else None

    async def loop(self) -> tuple[str, str, str | None]:
        for iteration in range(1, self.agent.max_iterations + 1):
            if self.queue is not None and self.queue.stop_requested:
                return self.say_stopped(), STOP_CANCELLED, None
            self.iterations = iteration
            await self.check_context()
            await self.emit(ThinkingEvent(status="start", iteration=iteration))
            try:
                response = await self.llm.chat(
                    [api_message(m) for m in self.messages], tools=self.schemas, purpose="loop"
                )
            except AssertionError:
                raise
            except Exception as exc:  # LLMError, or a broken adapter: end the run, keep the history valid
                if not isinstance(exc, LLMError):
                    log.exception("loop LLM call raised")
                return self.say_llm_error(), STOP_LLM, f"{type(exc).__name__}: {exc}"
            self.usage.add(response.usage)
            self.guard.calibrate(self.raw_estimate, response.usage.prompt_tokens)
            step = await (
                self.native_step(response, iteration) if self.native else self.json_step(response, iteration)
            )
            if step is not None:
                return step
        return self.say_max_iterations(), STOP_MAX, None

    async def check_context(self) -> None:
        api = [api_message(m) for m in self.messages]
        self.raw_estimate = estimate_tokens(api, self.schemas)
        if int(self.raw_estimate * self.guard.ratio) <= self.guard.budget:
            return
        if self.writer is not None:
            await self.writer.flush()  # the summary boundary is computed from stored ids
        compaction = await self.guard.compact(self.messages, self.llm, self.schemas)
        if compaction is None:
            return
        self.messages = compaction.messages
        self.raw_estimate = estimate_tokens([api_message(m) for m in self.messages], self.schemas)
        await self.emit(
            CompactEvent(
                original_messages=compaction.original_messages,
                kept_messages=compaction.kept_messages,
                summarized=compaction.summarized,
            )
        )
        if self.memory is not None and compaction.summarized and compaction.upto_id and compaction.summary:
            await self.memory.save_summary(self.ctx.thread_id, compaction.upto_id, compaction.summary)

    # ---- native function calling -------------------------------------------------------------

    async def native_step(self, response: LLMResult, iteration: int) -> tuple[str, str, str | None] | None:
        calls = response.tool_calls
        reasoning = response.reasoning_content or (response.content if calls else None)
        await self.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=reasoning))
        if not calls:
            text = response.content or ""
            injected = self.drain()
            if injected:
                # The player added something: this answer is no longer final, keep looping.
                await self.add(
                    {"role": "assistant", "content": text or "(draft answer withheld)"}, kind="step"
                )
                await self.inject(injected)
                return None
            await self.emit(AnswerEvent(channel="step", status="start"))
            if text:
                self.messages.append({"role": "assistant", "content": text})
            return text or self.say_empty(), STOP_FINAL, None
        calls = [self.unique(c) for c in calls]
        assistant = {
            "role": "assistant",
            "content": response.content or None,
            "tool_calls": [c.to_message() for c in calls],
        }
        self.open_calls = {c.id: c.name for c in calls}
        self.finished = {}
        await self.add(assistant, kind="step")
        outcomes = await self.execute_batch(calls, iteration)
        # All results first: the API requires them right after the assistant message.
        results = [{"role": "tool", "tool_call_id": o.call_id, "content": o.observation} for o in outcomes]
        self.messages.extend(results)
        self.open_calls = {}
        await self.persist(results, kind="tool_result")
        injected = self.drain()
        if injected:
            await self.inject(injected)
        return None

    async def execute_batch(self, calls: list[ToolCall], iteration: int) -> list[ToolOutcome]:
        """Calls of one response run concurrently; side-effect tools one at a time, in order."""
        done: dict[str, ToolOutcome] = {}

        async def run_one(call: ToolCall) -> None:
            done[call.id] = await self.run_call(call, iteration)

        async def run_side_effects() -> None:
            for call in calls:
                if self.registry.is_side_effect(call.name):
                    await run_one(call)

        pure = [run_one(c) for c in calls if not self.registry.is_side_effect(c.name)]
        await asyncio.gather(*pure, run_side_effects())
        ordered = [done[c.id] for c in calls]
        self.outcomes.extend(ordered)
        return ordered

    def unique(self, call: ToolCall) -> ToolCall:
        """Some servers reuse ids like `call_0` across responses; ids must be unique in the thread."""
        if call.id and call.id not in self.seen_ids:
            self.seen_ids.add(call.id)
            return call
        return ToolCall(id=self.new_id(), name=call.name, arguments=call.arguments)

    def new_id(self) -> str:
        while True:
            self.id_seq += 1
            candidate = f"{self.id_base}_{self.id_seq}"
            if candidate not in self.seen_ids:
                self.seen_ids.add(candidate)
                return candidate

    async def run_call(self, call: ToolCall, iteration: int) -> ToolOutcome:
        args = _parsed_args(call.arguments)
        await self.emit(
            IterationEvent(
                status="start", iteration=iteration, tool_name=call.name, tool_args=args, call_id=call.id
            )
        )
        started = self.agent._clock()
        result = await self.registry.execute(call.name, call.arguments, self.ctx.for_call(call.id))
        elapsed = self.agent._clock() - started
        observation = observation_text(call.name, result)
        self.finished[call.id] = observation
        await self.emit(
            IterationEvent(
                status="done",
                iteration=iteration,
                tool_name=call.name,
                tool_args=args,
                call_id=call.id,
                observation=observation,
                code=str(result.code),
                error=result.message if result.code == ResultCode.ERROR else None,
                iter_elapsed=elapsed,
            )
        )
        return ToolOutcome(call.id, call.name, args, result, observation, elapsed, iteration)

    async def close_open_calls(self) -> None:
        """On cancellation: every call already in the history gets a result (real, or "interrupted")."""
        if not self.open_calls:
            return
        results = [
            {"role": "tool", "tool_call_id": cid, "content": self.finished.get(cid, INTERRUPTED_RESULT)}
            for cid in self.open_calls
        ]
        self.open_calls = {}
        self.messages.extend(results)
        await self.persist(results, kind="tool_result")

    # ---- JSON mode -------------------------------------------------------------------------

    async def json_step(self, response: LLMResult, iteration: int) -> tuple[str, str, str | None] | None:
        content = response.content or ""
        action = parse_action(content)
        reasoning = (action.reasoning if action else "") or response.reasoning_content
        await self.emit(ThinkingEvent(status="done", iteration=iteration, reasoning=reasoning or None))
        assistant = {"role": "assistant", "content": content or "(empty reply)"}
        self.messages.append(assistant)
        injected = self.drain()  # right after the assistant message, before the final-answer check
        if action is None:
            return await self.json_parse_failure(assistant, content, injected)
        self.parse_failures = 0
        if action.kind == STOP_FINAL:
            if injected:
                await self.persist([assistant], kind="step")
                await self.inject(injected)
                return None
            await self.emit(AnswerEvent(channel="step", status="start"))
            return action.answer, STOP_FINAL, None
        await self.persist([assistant], kind="step")
        if injected:
            await self.inject(injected)
        arguments = (
            action.args if isinstance(action.args, str) else json.dumps(action.args, ensure_ascii=False)
        )
        call = ToolCall(id=self.new_id(), name=action.tool, arguments=arguments)
        outcome = await self.run_call(call, iteration)
        self.outcomes.append(outcome)
        await self.add(
            {"role": "user", "content": observation_message(call.name, outcome.observation)},
            kind="observation",
        )
        # Also after the observation (safe: JSON mode has no pairing rule), so a message that came in
        # while the tool ran reaches the very next call, as in native mode: one script fits both modes.
        injected = self.drain()
        if injected:
            await self.inject(injected)
        return None

    async def json_parse_failure(
        self, assistant: dict[str, Any], content: str, injected: list[str]
    ) -> tuple[str, str, str | None] | None:
        self.parse_failures += 1
        if self.parse_failures >= 2 and not injected:
            # Second failure in a row: deliver the raw text rather than loop on a model that cannot comply.
            self.messages.pop()
            if content:
                self.messages.append({"role": "assistant", "content": content})
            return (
                content or self.say_empty(),
                STOP_PARSE,
                "the model's reply could not be parsed as a JSON action",
            )
        await self.persist([assistant], kind="step")
        if injected:
            await self.inject(injected)
        await self.add({"role": "user", "content": LOOP_REFORMAT_REQUEST}, kind="reformat")
        return None

    # ---- interrupts ------------------------------------------------------------------------

    def drain(self) -> list[str]:
        return self.queue.drain() if self.queue is not None else []

    async def inject(self, texts: list[str]) -> None:
        content = interrupt_message(texts)
        await self.add({"role": "user", "content": content, "pinned": True}, kind="interrupt")
        self.injected.extend(texts)
        await self.emit(InjectEvent(content=content, messages=list(texts)))

    # ---- fallback answers -------------------------------------------------------------------

    def tools_summary(self) -> str:
        if not self.outcomes:
            return self.ctx.say("실행된 작업이 없습니다.", "No actions were run.")
        lines = [
            f"- {o.name}: {'성공' if o.result.ok else '실패'} ({o.result.code})"
            if self.ctx.korean
            else f"- {o.name}: {'ok' if o.result.ok else 'failed'} ({o.result.code})"
            for o in self.outcomes
        ]
        return "\n".join(lines)

    def say_max_iterations(self) -> str:
        head = self.ctx.say(
            f"요청을 끝까지 처리하지 못했습니다(최대 {self.agent.max_iterations}회 반복에 도달). 지금까지 실행한 작업:",
            f"I could not finish this request (reached the limit of {self.agent.max_iterations} steps). "
            "What was done so far:",
        )
        return f"{head}\n{self.tools_summary()}"

    def say_llm_error(self) -> str:
        head = self.ctx.say(
            "죄송합니다. 지금은 AI 모델에 연결할 수 없어 답변을 마치지 못했습니다. 잠시 후 다시 시도해 주세요.",
            "Sorry, the AI model is unreachable right now, so I could not finish the answer. Please try again shortly.",
        )
        if not self.outcomes:
            return head
        return (
            head
            + "\n"
            + self.ctx.say("지금까지 실행한 작업:", "What was done so far:")
            + "\n"
            + self.tools_summary()
        )

    def say_stopped(self) -> str:
        return self.ctx.say("요청에 따라 처리를 중단했습니다.", "Stopped as requested.")

    def say_empty(self) -> str:
        return self.ctx.say(
            "답변을 만들지 못했습니다. 질문을 조금 바꿔서 다시 말씀해 주세요.",
            "I could not produce an answer. Please rephrase your question.",
        )


def _parsed_args(arguments: str) -> dict[str, Any] | str:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _now(ctx: ToolContext) -> datetime | None:
    try:
        return ctx.clock().astimezone(ZoneInfo(ctx.services.timezone))
    except Exception:  # a test clock or a bad zone must not block the run
        return None
