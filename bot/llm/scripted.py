"""`ScriptedLLM`: a deterministic model that serves `loop` calls from a script (DESIGN.md §9).

A real implementation of the LLM protocol with no wire (pydantic-ai's FunctionModel idea): the real
engine runs against it in tests, replays and the offline demo. It refuses, loudly, any message history
the OpenAI API would reject, so an engine bug cannot hide behind a lenient double.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from bot.llm.base import API_MESSAGE_KEYS, LLMError, LLMResult, ToolCall, merged_abilities
from bot.llm.hooks import LLMObserver, observed, observed_stream

STEP_KINDS = ("tool", "tools", "final", "raw", "answer", "error")
"""`error` (raise `LLMError` with the given text) is an extension for engine tests; the rest are §9's."""

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_CATALOGUE_LINE = re.compile(r"^\s*[-*]?\s*([A-Za-z_][\w\-]*)\s*:", re.MULTILINE)
_FACT = re.compile(
    r"(?<![A-Za-z0-9,])(?:[A-Z]{1,6}[-_]?\d{2,}[A-Z0-9]*|\d{1,3}(?:,\d{3})+|\d{3,})(?![A-Za-z0-9]|,\d)"
)


class ScriptViolation(AssertionError):
    """The engine did something the real API would reject, or the script does not fit the run.

    An `AssertionError` on purpose: the engine treats LLM failures as data but lets assertion errors
    through, so a violation fails the test or the replay case instead of becoming an apology.
    """


class ScriptExhausted(ScriptViolation):
    """The engine asked for more `loop` steps than the script has."""


@dataclass
class ScriptedRequest:
    """One call the scripted model received, for assertions on what the engine sent."""

    purpose: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None
    stream: bool = False


def validate_history(messages: list[dict[str, Any]]) -> list[str]:
    """Problems the Chat Completions API would reject this history for (empty list: valid)."""
    check = HistoryCheck()
    check.feed(messages)
    return check.problems_now()


class HistoryCheck:
    """`validate_history` as a fold over the messages that can go on: a run sends its history again at
    every call with new messages at the end (the same dicts: the engine reuses the copies it sent), so
    `ScriptedLLM` checks only what is new. It re-checked every message at every call: about 1/12 of the
    engine bench's per-run CPU, which is the double's, not the engine's."""

    __slots__ = ("checked", "pending", "problems", "seen_ids")

    def __init__(self) -> None:
        self.checked: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.pending: dict[str, str] = {}
        self.seen_ids: set[str] = set()

    def continues(self, messages: list[dict[str, Any]]) -> bool:
        """`messages` starts with exactly the messages checked so far (the same objects)."""
        checked = self.checked
        return len(checked) <= len(messages) and all(
            a is b for a, b in zip(checked, messages[: len(checked)], strict=True)
        )

    def feed(self, messages: list[dict[str, Any]]) -> None:
        """Check the messages after those checked so far (`messages` must `continue` them)."""
        for i in range(len(self.checked), len(messages)):
            self._one(i, messages[i])
        self.checked = list(messages)

    def problems_now(self) -> list[str]:
        if self.pending:
            return [
                *self.problems,
                f"the history ends with tool calls that have no results: {sorted(self.pending)}",
            ]
        return list(self.problems)

    def _one(self, i: int, m: dict[str, Any]) -> None:
        problems, pending = self.problems, self.pending
        role = m.get("role")
        if role not in _ROLES:
            problems.append(f"message {i} has an invalid role {role!r}")
            return
        extra = set(m) - API_MESSAGE_KEYS
        if extra:
            problems.append(f"message {i} ({role}) carries keys the API does not accept: {sorted(extra)}")
        if pending and role != "tool":
            problems.append(
                f"message {i} ({role}) comes between an assistant's tool_calls and their results "
                f"(still missing results for {sorted(pending)})"
            )
            pending.clear()
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in pending:
                problems.append(
                    f"message {i} is a tool result for {call_id!r}, which is not a pending tool call"
                )
            else:
                pending.pop(call_id)
            if not isinstance(m.get("content"), str):
                problems.append(f"message {i} (tool) has no string content")
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            content = m.get("content")
            if content is not None and not isinstance(content, str):
                problems.append(f"message {i} (assistant) content must be a string or null")
            if not calls and not content:
                problems.append(f"message {i} (assistant) has neither content nor tool_calls")
            for tc in calls:
                call_id = tc.get("id")
                fn = tc.get("function") or {}
                if not call_id:
                    problems.append(f"message {i} has a tool call without an id")
                    continue
                if call_id in self.seen_ids:
                    problems.append(f"message {i} repeats tool call id {call_id!r}")
                self.seen_ids.add(call_id)
                if not fn.get("name") or not isinstance(fn.get("arguments"), str):
                    problems.append(
                        f"message {i} tool call {call_id!r} needs a function name and string arguments"
                    )
                pending[call_id] = fn.get("name", "")
        elif not isinstance(m.get("content"), str | list):
            problems.append(f"message {i} ({role}) has no content")


def _chunks(text: str, size: int) -> Iterable[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


class ScriptedLLM:
    """Serves `loop` calls from `steps`; deterministic answers for the other purposes.

    `mode` picks the abilities: `native` (tool calls, JSON mode) or `json` (no tool calls: every step
    is rendered as the JSON-mode action object in the content).
    """

    def __init__(
        self,
        steps: Iterable[dict[str, Any]] = (),
        *,
        abilities: dict[str, Any] | None = None,
        mode: str = "native",
        answer: str | None = None,
        id_prefix: str | None = None,
        select: list[str] | None = None,
        structured: dict[str, Any] | None = None,
        chunk_size: int = 8,
        chunk_delay: float = 0.0,
        observer: LLMObserver | None = None,
    ) -> None:
        if mode not in ("native", "json"):
            raise ValueError(f"mode must be 'native' or 'json', got {mode!r}")
        base = {"tool_call": mode == "native", "json_mode": True, "streaming": True, "context_window": 32_000}
        base.update(abilities or {})
        self.abilities = merged_abilities(base)
        self.mode = "native" if self.abilities["tool_call"] else "json"
        self.steps: list[dict[str, Any]] = [_check_step(i, s) for i, s in enumerate(steps)]
        self._loop_steps: list[int] = [i for i, s in enumerate(self.steps) if "answer" not in s]
        answers = [s["answer"] for s in self.steps if "answer" in s]
        self.answer = answer if answer is not None else (answers[-1] if answers else None)
        finals = [s["final"] for s in self.steps if "final" in s]
        self._last_final = finals[-1] if finals else None
        # A per-instance random prefix keeps ids unique across runs persisted in one thread.
        self._id_prefix = id_prefix or secrets.token_hex(3)
        self._id_counter = 0
        self._select = select
        self._structured = structured if structured is not None else {}
        self._chunk_size = max(1, chunk_size)
        self._chunk_delay = max(0.0, chunk_delay)
        """Seconds between streamed chunks: a stream that takes real time, as a real model's does."""
        self._next = 0
        self._pending_calls: deque[dict[str, Any]] = deque()
        self._history = HistoryCheck()
        """What the previous call's history was checked to (`HistoryCheck`)."""

        self.current_step: int | None = None
        """Index (in `steps`) of the step the latest `loop` call served; the replay runner's `after_step`."""
        self.steps_served = 0
        """How many scripted loop steps were served (a multi-call step counts once)."""
        self.loop_calls = 0
        self.calls: Counter[str] = Counter()
        """Calls per purpose (`loop`, `synthesis`, …)."""
        self.requests: list[ScriptedRequest] = []
        self.violations: list[str] = []
        """Every violation raised, so a runner can fail the case even if something swallowed the error."""
        self.exhausted = False
        self.observer = observer
        """Told about every finished call (`bot.llm.hooks`)."""

    def __repr__(self) -> str:
        return f"ScriptedLLM(mode={self.mode}, steps={len(self.steps)}, served={self.steps_served})"

    # ---- bookkeeping the replay runner reads --------------------------------------------------

    @property
    def unused_steps(self) -> list[int]:
        """Indices of loop steps never served (plus the current step if some of its calls are still queued)."""
        unused = list(self._loop_steps[self._next :])
        if self._pending_calls and self.current_step is not None:
            unused.insert(0, self.current_step)
        return unused

    @property
    def pending_calls_in_step(self) -> int:
        """JSON mode serves a `tools` step one call per response: calls of the current step still to come."""
        return len(self._pending_calls)

    def _violation(self, message: str, exc_type: type[ScriptViolation] = ScriptViolation) -> ScriptViolation:
        self.violations.append(message)
        return exc_type(message)

    def _check(self, messages: list[dict[str, Any]], purpose: str) -> None:
        check = self._history
        if not check.continues(messages):
            check = self._history = HistoryCheck()
        check.feed(messages)
        problems = check.problems_now()
        if problems:
            raise self._violation(f"{purpose} call with an invalid history: " + "; ".join(problems))

    def _new_id(self) -> str:
        self._id_counter += 1
        return f"call_{self._id_prefix}_{self._id_counter}"

    # ---- the protocol ---------------------------------------------------------------------------

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
        response_format: dict[str, Any] | None = None,
        purpose: str = "loop",
    ) -> LLMResult:
        return await observed(
            self.observer, purpose, self._chat(messages, tools, tool_choice, response_format, purpose)
        )

    def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        return observed_stream(self.observer, purpose, self._stream(messages, purpose))

    async def _chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: Any,
        response_format: dict[str, Any] | None,
        purpose: str,
    ) -> LLMResult:
        self.calls[purpose] += 1
        self.requests.append(ScriptedRequest(purpose, list(messages), tools, tool_choice, response_format))
        self._check(messages, purpose)
        if purpose == "loop":
            return self._loop(native=bool(tools) and bool(self.abilities["tool_call"]))
        if purpose == "select_tools":
            return self._structured_reply({"tools": self._selection(messages)}, tool_choice, response_format)
        if purpose == "compact":
            return LLMResult(content=_compact_summary(messages))
        if purpose == "synthesis":
            return LLMResult(content=self._synthesis_text())
        return self._structured_reply(self._structured, tool_choice, response_format)

    async def _stream(self, messages: list[dict[str, Any]], purpose: str) -> AsyncIterator[str]:
        self.calls[purpose] += 1
        self.requests.append(ScriptedRequest(purpose, list(messages), stream=True))
        self._check(messages, purpose)
        for piece in _chunks(self._synthesis_text(), self._chunk_size):
            yield piece
            await asyncio.sleep(self._chunk_delay)  # other tasks run between deltas, as in a real stream

    # ---- rendering ------------------------------------------------------------------------------

    def _synthesis_text(self) -> str:
        return self.answer if self.answer is not None else (self._last_final or "")

    def _loop(self, *, native: bool) -> LLMResult:
        self.loop_calls += 1
        if self._pending_calls:
            return self._render_json_call(self._pending_calls.popleft(), {})
        if self._next >= len(self._loop_steps):
            self.exhausted = True
            raise self._violation(
                f"the run asked for loop step {self.steps_served + 1}, but the script has only "
                f"{len(self._loop_steps)} loop step(s)",
                ScriptExhausted,
            )
        index = self._loop_steps[self._next]
        self._next += 1
        self.current_step = index
        self.steps_served += 1
        step = self.steps[index]
        reasoning_content = step.get("reasoning_content")
        if "error" in step:
            raise LLMError(str(step["error"]), kind="scripted")
        if "raw" in step:
            return LLMResult(content=str(step["raw"]), reasoning_content=reasoning_content)
        if "final" in step:
            text = str(step["final"])
            if native:
                return LLMResult(content=text, reasoning_content=reasoning_content, finish_reason="stop")
            payload = {"action": "final_answer", "answer": text, "reasoning": step.get("reasoning", "")}
            return LLMResult(
                content=json.dumps(payload, ensure_ascii=False), reasoning_content=reasoning_content
            )
        calls = [step] if "tool" in step else list(step["tools"])
        if native:
            return LLMResult(
                content=step.get("reasoning") or None,
                tool_calls=[
                    ToolCall(id=self._new_id(), name=str(c["tool"]), arguments=_arguments_text(c.get("args")))
                    for c in calls
                ],
                reasoning_content=reasoning_content,
                finish_reason="tool_calls",
            )
        self._pending_calls.extend(calls[1:])
        return self._render_json_call(calls[0], step)

    def _render_json_call(self, call: dict[str, Any], step: dict[str, Any]) -> LLMResult:
        payload = {
            "action": "tool_call",
            "tool": call["tool"],
            "args": call.get("args") if call.get("args") is not None else {},
            "reasoning": call.get("reasoning", step.get("reasoning", "")),
        }
        return LLMResult(
            content=json.dumps(payload, ensure_ascii=False), reasoning_content=step.get("reasoning_content")
        )

    def _structured_reply(self, value: dict[str, Any], tool_choice: Any, response_format: Any) -> LLMResult:
        text = json.dumps(value, ensure_ascii=False)
        if tool_choice and isinstance(tool_choice, dict) and self.abilities["tool_call"]:
            name = (tool_choice.get("function") or {}).get("name", "respond")
            return LLMResult(tool_calls=[ToolCall(id=self._new_id(), name=name, arguments=text)])
        if response_format is not None:
            return LLMResult(content=text)
        return LLMResult(content=f"Here is the result:\n```json\n{text}\n```")

    def _selection(self, messages: list[dict[str, Any]]) -> list[str]:
        if self._select is not None:
            return list(self._select)
        offered: list[str] = []
        for m in messages:
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                offered = _CATALOGUE_LINE.findall(m["content"]) or offered
        scripted = []
        for s in self.steps:
            for c in [s] if "tool" in s else s.get("tools", []):
                if c["tool"] in offered and c["tool"] not in scripted:
                    scripted.append(c["tool"])
        rest = [n for n in offered if n not in scripted]
        return (scripted + rest)[:6]


def _arguments_text(args: Any) -> str:
    """Dict args become JSON; a string is sent verbatim (scripts use it to send broken JSON)."""
    if args is None:
        return "{}"
    if isinstance(args, str):
        return args
    return json.dumps(args, ensure_ascii=False)


def _check_step(index: int, step: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(step, dict):
        raise ValueError(f"script step {index} must be a mapping, got {type(step).__name__}")
    kinds = [k for k in STEP_KINDS if k in step]
    if len(kinds) != 1:
        raise ValueError(
            f"script step {index} must have exactly one of {', '.join(STEP_KINDS)}; got {sorted(step)}"
        )
    if "tools" in step:
        calls = step["tools"]
        if (
            not isinstance(calls, list)
            or not calls
            or not all(isinstance(c, dict) and "tool" in c for c in calls)
        ):
            raise ValueError(f"script step {index}: `tools` must be a non-empty list of {{tool, args}}")
    return step


def _compact_summary(messages: list[dict[str, Any]]) -> str:
    """Deterministic stand-in for a summary: the exact ids and numbers the conversation mentioned."""
    facts: list[str] = []
    for m in messages:
        texts = [m.get("content") if isinstance(m.get("content"), str) else ""]
        texts += [(tc.get("function") or {}).get("arguments", "") for tc in m.get("tool_calls") or []]
        for text in texts:
            for fact in _FACT.findall(text or ""):
                if fact not in facts:
                    facts.append(fact)
    return "Summary of the earlier conversation. Exact ids and numbers: " + (", ".join(facts) or "(none)")
