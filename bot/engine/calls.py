"""Running the model's tool calls: repairs of unambiguous mistakes, the repetition guard, the
`iteration` events, and the concurrency rule (calls of one response run together, calls with side
effects one at a time, in order). A call that uses a tool's example value the player never wrote is
refused before it runs (`bot.engine.example_values`). A call with side effects is held, not run, when the player wrote
something the model had not read when it decided on the call ("cancel, do not issue"), and refused when the
player took the request back mid-run (`bot.engine.withdrawals`)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Callable
from typing import Any

from bot.engine.call_checks import REPAIRS, WITHDRAWAL, PendingCall, first_refusal
from bot.engine.events import Emitter, IterationEvent
from bot.engine.example_values import EXAMPLE_VALUE
from bot.engine.grounding import RequiredCall, call_args
from bot.engine.observations import observation_text
from bot.engine.repairs import RepairedCall, repair_call, repaired_name
from bot.engine.repetition import (
    REPEAT_LIMIT,
    REPEATED_FAILURE_NOTE,
    REUSED_NOTE,
    RepetitionGuard,
    call_key,
)
from bot.engine.results import ToolOutcome
from bot.engine.tool_prompt import example_call
from bot.engine.unasked import NOT_ASKED
from bot.engine.withdrawals import withdrawal
from bot.guard_rules import Quirks
from bot.llm.base import ToolCall
from tools.base import ResultCode, ToolContext, ToolRegistry, ToolResult

HELD_FOR_NEW_MESSAGE = (
    "Not run: the player sent a new message before this call could run. Read it and decide "
    "again; call '{name}' again only if the player still wants it."
)
INSTEAD_STEP = ":instead"  # the step id of a call the run made in place of a refused one
MADE_INSTEAD = "The run made the call it needs instead: {tool} {args}. Answer from its result:"
WITHDRAWN = (
    "Not run: the player took the request back while you worked ({said!r}). Do not call '{name}' in this "
    "run; tell the player, in their language, that nothing was done."
)


class ToolCalls:
    """Executes calls for one run and keeps what they produced."""

    def __init__(
        self,
        registry: ToolRegistry,
        ctx: ToolContext,
        emit: Emitter,
        clock: Callable[[], float],
        player_texts: Callable[[], list[str]],
        *,
        json_mode: bool,
        unread: Callable[[], bool] = lambda: False,
        known_texts: Callable[[], list[str]] | None = None,
        required: Callable[[], list[RequiredCall]] | None = None,
        quirks: Quirks | None = None,
    ) -> None:
        self.registry = registry
        self.quirks = quirks or Quirks()
        """The model's quirk modes: which quirk checks refuse, only log, or are off (`bot.guard_rules`)."""
        self.known_texts = known_texts or player_texts
        """Everything the conversation got from outside the model (the player's messages, tool results):
        an example value found there may be used as an argument."""
        self.unread = unread
        """True when the player wrote something the model has not read yet: side effects wait."""
        self.ctx = ctx
        self.emit = emit
        self.clock = clock
        self.player_texts = player_texts
        """What the player wrote in this run: example calls are filled from it."""
        self.json_mode = json_mode
        self.guard = RepetitionGuard()
        self.outcomes: list[ToolOutcome] = []
        self.finished: dict[str, str] = {}
        """Observations of calls that finished (used when the run is cancelled mid-batch)."""
        self.required = required
        """The reads the rules still require before an answer (`AgentRun.missing_calls`)."""
        self._refused: set[str] = set()
        self._made_instead = False
        self.repeated: ToolOutcome | None = None
        """The call that failed the same way `REPEAT_LIMIT` times: the run must stop."""

    async def run_batch(self, calls: list[ToolCall], iteration: int) -> list[ToolOutcome]:
        """Calls of one response run concurrently; side-effect tools one at a time, in order."""
        if len(calls) == 1:  # the usual step: no tasks to gather (two per step, ~1/20 of a run's CPU)
            outcome = await self.run(calls[0], iteration)
            self.outcomes.append(outcome)
            return [outcome]
        done: dict[str, ToolOutcome] = {}

        async def run_one(call: ToolCall) -> None:
            done[call.id] = await self.run(call, iteration)

        async def run_side_effects() -> None:
            for call in calls:
                if self._side_effect(call.name):
                    await run_one(call)

        pure = [run_one(c) for c in calls if not self._side_effect(c.name)]
        await asyncio.gather(*pure, run_side_effects())
        ordered = [done[c.id] for c in calls]
        self.outcomes.extend(ordered)
        return ordered

    def reads_only(self, calls: list[ToolCall]) -> bool:
        """None of `calls` has a side effect (after the repair of its name)."""
        return not any(self._side_effect(c.name) for c in calls)

    def _side_effect(self, name: str) -> bool:
        return self.registry.is_side_effect(repaired_name(name, self.registry))

    async def run(self, call: ToolCall, iteration: int) -> ToolOutcome:
        fixed = repair_call(call.name, call.arguments, self.registry, self.player_texts())
        if (fixed.repairs or fixed.refusal) and not self.quirks.acts(
            REPAIRS.quirk, f"repaired {call.name}: {fixed.repairs or fixed.refusal}"
        ):
            fixed = RepairedCall(call.name, call.arguments)
        name = fixed.name
        t = self.registry.get(name)
        # A call the actor may not make at all is answered DENIED by the registry, which says more.
        if (
            fixed.refusal is None
            and t is not None
            and isinstance(fixed.args, dict)
            and self.registry.allowed(name, self.ctx.actor)
        ):
            pending = PendingCall(t, fixed.args, self.registry, self.known_texts(), self.player_texts())
            fixed.refusal = first_refusal(pending, self.quirks)
        args = fixed.args if isinstance(fixed.args, dict) else _parsed_args(call.arguments)
        await self.emit(
            IterationEvent(
                status="start", iteration=iteration, tool_name=name, tool_args=args, call_id=call.id
            )
        )
        key = call_key(name, fixed.args)
        side_effect = self.registry.is_side_effect(name)
        earlier = None if side_effect or fixed.refusal else self.guard.earlier_read(key)
        started = self.clock()
        held = side_effect and fixed.refusal is None and self.unread()
        withdrawn = withdrawal(self.player_texts()) if side_effect and fixed.refusal is None else None
        if withdrawn is not None and not self.quirks.acts(WITHDRAWAL.quirk, f"refused {name}: withdrawn"):
            withdrawn = None
        instead = self._instead_of(key, fixed.refusal)
        outcome_name, outcome_args, step_id = name, args, call.id
        if earlier is not None:
            result, observation = earlier.result, earlier.observation + REUSED_NOTE
        elif instead is not None:
            # The same refused call again: the run makes the read the rules require instead. Watchers see
            # two steps, as it happened: the model's call declined, then the call the run made (its own
            # step id), so a feed or a metric never shows the model's tool with another tool's result.
            assert fixed.refusal is not None
            await self._done(iteration, name, args, call.id, fixed.refusal, 0.0)
            outcome_name, outcome_args = instead.tool, call_args(instead, self.player_texts()[0])
            step_id = f"{call.id}{INSTEAD_STEP}"
            await self.emit(
                IterationEvent(
                    status="start",
                    iteration=iteration,
                    tool_name=outcome_name,
                    tool_args=outcome_args,
                    call_id=step_id,
                )
            )
            result = await self.registry.execute(outcome_name, outcome_args, self.ctx.for_call(call.id))
            shown = json.dumps(outcome_args, ensure_ascii=False)
            observation = (
                f"{fixed.refusal.message}\n{MADE_INSTEAD.format(tool=outcome_name, args=shown)}\n"
                + observation_text(outcome_name, result)
            )
        else:
            if fixed.refusal is not None:
                result = fixed.refusal
            elif held:
                result = ToolResult.error(HELD_FOR_NEW_MESSAGE.format(name=name), reason="new_message")
            elif withdrawn is not None:
                result = ToolResult.error(
                    WITHDRAWN.format(name=name, said=withdrawn[:200]), reason="withdrawn"
                )
            else:
                result = await self.registry.execute(name, fixed.args, self.ctx.for_call(call.id))
            observation = observation_text(name, result)
        elapsed = self.clock() - started
        outcome = ToolOutcome(
            call.id, outcome_name, outcome_args, result, observation, elapsed, iteration, earlier is not None
        )
        if earlier is not None and self.guard.reused(key) >= REPEAT_LIMIT - 1 and self.repeated is None:
            self.repeated = outcome  # the same read a third time: the model is stuck on it
        if earlier is None and not held:
            failures = self.guard.record(key, outcome, side_effect=side_effect)
            if failures == REPEAT_LIMIT - 1:
                outcome.observation += REPEATED_FAILURE_NOTE.format(example=self._example(name))
            elif failures >= REPEAT_LIMIT and self.repeated is None:
                self.repeated = outcome
        self.finished[call.id] = outcome.observation
        await self._done(
            iteration, outcome_name, outcome_args, step_id, result, elapsed, observation=outcome.observation
        )
        return outcome

    async def _done(
        self,
        iteration: int,
        name: str,
        args: dict[str, Any] | str,
        step_id: str,
        result: ToolResult,
        elapsed: float,
        *,
        observation: str | None = None,
    ) -> None:
        await self.emit(
            IterationEvent(
                status="done",
                iteration=iteration,
                tool_name=name,
                tool_args=args,
                call_id=step_id,
                observation=observation_text(name, result) if observation is None else observation,
                code=str(result.code),
                error=result.message if result.code == ResultCode.ERROR else None,
                iter_elapsed=elapsed,
            )
        )

    def _instead_of(self, key: str, refusal: ToolResult | None) -> RequiredCall | None:
        """For a refused call, once per run: the read the rules require that has not run yet
        (`search_policy` on a policy question, the lookup of an order the player named), made at once
        when the model guessed a value (an id nobody wrote, a placeholder, an example: it is about to guess
        the answer too), else when the same refused call comes a second time. Seen live: a policy question
        began with a lookup of an order id made up from the clock, refused three times with the search to
        make instead, and the run stopped; and (2026-12-03, three runs of three) a policy question began
        with a lookup of "ORD…", after which the model searched with words of its own ("[보상 정책 §2]",
        one excerpt; "환불 정책") and answered from the wrong section, or not at all."""
        if refusal is None:
            return None
        again = key in self._refused
        self._refused.add(key)
        guessed = refusal.data.get("reason") in (EXAMPLE_VALUE, NOT_ASKED)
        if not (again or guessed) or self._made_instead or self.required is None:
            return None
        for call in self.required():
            if not self.registry.is_side_effect(call.tool) and self.registry.allowed(
                call.tool, self.ctx.actor
            ):
                self._made_instead = True
                return call
        return None

    def _example(self, name: str) -> str:
        t = self.registry.get(name)
        if t is None:
            return "a call to one of these tools: " + ", ".join(self.registry.names)
        return example_call(t, self.player_texts(), json_mode=self.json_mode)


def _parsed_args(arguments: str) -> dict[str, Any] | str:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


class CallIds:
    """Call ids unique in the thread: some servers reuse ids like `call_0` across responses, and
    JSON mode has none at all."""

    def __init__(self, run_id: str | None) -> None:
        # Run id plus a random part: unique even if a caller reuses a run id, which would otherwise
        # also repeat the tools' idempotency keys.
        token = re.sub(r"[^A-Za-z0-9]", "", run_id or "")[-10:]
        self.base = f"call_{token}{secrets.token_hex(3)}"
        self.seq = 0
        self.seen: set[str] = set()
        """Ids already in the thread (earlier runs included)."""

    def unique(self, call: ToolCall) -> ToolCall:
        if call.id and call.id not in self.seen:
            self.seen.add(call.id)
            return call
        return ToolCall(id=self.new(), name=call.name, arguments=call.arguments)

    def new(self) -> str:
        while True:
            self.seq += 1
            candidate = f"{self.base}_{self.seq}"
            if candidate not in self.seen:
                self.seen.add(candidate)
                return candidate
