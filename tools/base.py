"""Tool declaration, context, result and registry: the seam between the engine and the tools (the
context lives in `tools.context`, results in `tools.results`; both are re-exported here).

A tool is a typed async function `fn(args: ArgsModel, ctx: ToolContext) -> ToolResult`. Its name,
docstring and the argument model's field descriptions are the schema the model reads. Guards live
inside the function and answer with a `ToolResult` (code + a sentence the model can act on); the
registry turns every failure around a tool (unknown name, broken arguments, exception, actor not
allowed) into a result too, so every tool call gets exactly one result.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.vocabulary.catalogue import ACCOUNT_NOT_LINKED, WORKING, Text
from bot.vocabulary.log_context import log_context
from bot.vocabulary.particles import particle
from tools.context import Actor, PolicySearcher, RequestTrust, StaffNotifier, ToolContext, ToolServices
from tools.examples import declared_examples
from tools.requirements import RequirementRule
from tools.results import ResultCode, ToolResult
from tools.schemas import copy_json, describe_validation_error, schema_of

__all__ = [
    "Actor",
    "PolicySearcher",
    "RequestTrust",
    "ResultCode",
    "StaffNotifier",
    "Tool",
    "ToolContext",
    "ToolFn",
    "ToolRegistry",
    "ToolResult",
    "ToolServices",
    "tool",
]

log = logging.getLogger(__name__)


ToolFn = Callable[[Any, ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A registered tool: the function plus the schema the model sees."""

    name: str
    description: str
    args_model: type[BaseModel]
    fn: ToolFn
    side_effect: bool = False
    """True for tools that change the world (issue_coupon, escalate_to_staff): run one at a time, in order."""
    staff_only: bool = False
    """Only staff see and run it."""
    allowed_unlinked: bool = False
    """A Discord user with no linked game account may run it (search_policy, escalate_to_staff)."""
    status: Text = WORKING
    """The line a channel shows while the tool runs, in both languages."""
    player_name: Text | None = None
    """What a player calls it ("운영진" for escalate_to_staff): an answer that names the tool says this
    instead (`bot.guards.voice`). None for staff-only tools, whose names staff know."""
    argument_words: Mapping[str, Text] = field(default_factory=dict, hash=False)
    """What a player calls an argument whose name is an identifier ("주문 번호" for order_id): seen live,
    "order_id를 다시 확인해주세요" reached a player. An answer that names one says this instead."""
    coupon_outcome: bool = False
    """Its results say whether a coupon exists (the output guard's claim check reads them)."""
    required_before_answer: RequirementRule | None = None
    """Given what the player wrote, the arguments this tool must have been called with before the model
    may answer (`tools.requirements`): lookup_order for each order id named, search_policy for a policy
    question. The engine sends an answer without them back once."""
    counts_as: tuple[str, ...] = ()
    """Tools whose requirement a call of this one meets when their shared arguments agree: issue_coupon
    reads the same order record as lookup_order, so it grounds what is said about that order."""

    @functools.cached_property
    def example_values(self) -> dict[str, frozenset[str]]:
        """Per argument, the values the tool's own texts show as examples (ids such as ORD001 for text
        fields, numbers such as 5000 for integer fields): the engine runs a call with one only when the
        player wrote it (`bot.engine.example_values`). Free-text fields (a reason, a summary) have none."""
        return declared_examples(self.description, self.args_model)

    def openai_schema(self) -> dict[str, Any]:
        """The `tools=[…]` entry for the Chat Completions API (non-strict, so local servers accept it)."""
        return copy_json(schema_of(self.args_model, self.name, self.description))

    def catalogue_line(self, width: int = 80) -> str:
        """Compact one-line entry (~80 chars) for tool selection: name and first sentence."""
        first = self.description.strip().split("\n", 1)[0]
        line = f"{self.name}: {first}"
        return line if len(line) <= width else line[: width - 1] + "…"

    def prompt_description(self) -> str:
        """Full description for JSON mode's system prompt: name, description, argument schema."""
        schema = self.args_model.model_json_schema()
        props = {
            k: {kk: vv for kk, vv in v.items() if kk in ("type", "description", "default", "anyOf", "enum")}
            for k, v in schema.get("properties", {}).items()
        }
        args = json.dumps({"properties": props, "required": schema.get("required", [])}, ensure_ascii=False)
        return f"- {self.name}: {self.description.strip()}\n  args: {args}"


def tool(
    *,
    name: str | None = None,
    side_effect: bool = False,
    staff_only: bool = False,
    allowed_unlinked: bool = False,
    status: Text = WORKING,
    player_name: Text | None = None,
    argument_words: Mapping[str, Text] | None = None,
    coupon_outcome: bool = False,
    required_before_answer: RequirementRule | None = None,
    counts_as: tuple[str, ...] = (),
) -> Callable[[ToolFn], Tool]:
    """Declare a tool from `async def fn(args: ArgsModel, ctx: ToolContext) -> ToolResult`, with the facts
    that belong to it: side effects, who may run it, its status line and when it must run."""

    def wrap(fn: ToolFn) -> Tool:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"tool {fn.__name__} must be an async function")
        params = list(inspect.signature(fn, eval_str=True).parameters.values())
        if len(params) != 2:
            raise TypeError(f"tool {fn.__name__} must take (args, ctx)")
        args_model = params[0].annotation
        if not (isinstance(args_model, type) and issubclass(args_model, BaseModel)):
            raise TypeError(f"tool {fn.__name__}: first parameter must be annotated with a pydantic model")
        unknown = set(argument_words or ()) - set(args_model.model_fields)
        if unknown:
            raise TypeError(f"tool {fn.__name__}: argument_words names no argument: {sorted(unknown)}")
        description = inspect.cleandoc(fn.__doc__ or "")
        if not description:
            raise TypeError(f"tool {fn.__name__} needs a docstring: it is the model's instructions")
        return Tool(
            name=name or fn.__name__,
            description=description,
            args_model=args_model,
            fn=fn,
            side_effect=side_effect,
            staff_only=staff_only,
            allowed_unlinked=allowed_unlinked,
            status=status,
            player_name=player_name,
            argument_words=dict(argument_words or {}),
            coupon_outcome=coupon_outcome,
            required_before_answer=required_before_answer,
            counts_as=counts_as,
        )

    return wrap


class ToolRegistry:
    """Named tools, the per-actor allowlist, and `execute`, which never raises."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.register(t)

    def register(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"tool {t.name} registered twice")
        self._tools[t.name] = t

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry with only the named tools (unknown names ignored), in registration order."""
        wanted = set(names)
        return ToolRegistry(t for t in self._tools.values() if t.name in wanted)

    def visible_to(self, actor: Actor) -> ToolRegistry:
        """The tools offered to the model for this actor: staff all, everyone else all but staff-only.

        Player tools stay visible to an unlinked user, so a call is answered DENIED with how to link
        the account (see `allowed`) instead of the model not knowing the tool exists.
        """
        return self.subset(t.name for t in self._tools.values() if actor.is_staff or not t.staff_only)

    def allowed(self, name: str, actor: Actor) -> bool:
        """May this actor run the tool? Staff: any; linked players: all but staff-only; unlinked: the
        tools that declare `allowed_unlinked`."""
        t = self._tools.get(name)
        if t is None:
            return False
        if actor.is_staff:
            return True
        if t.staff_only:
            return False
        return bool(actor.player_id) or t.allowed_unlinked

    def status_line(self, name: str | None, locale: str) -> str:
        """What a channel shows while `name` runs (the generic line for None or an unknown tool)."""
        t = self._tools.get(name or "")
        return (t.status if t is not None else WORKING)(locale)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.openai_schema() for t in self._tools.values()]

    def catalogue(self) -> str:
        return "\n".join(t.catalogue_line() for t in self._tools.values())

    def prompt_descriptions(self) -> str:
        return "\n".join(t.prompt_description() for t in self._tools.values())

    def is_side_effect(self, name: str) -> bool:
        t = self._tools.get(name)
        return bool(t and t.side_effect)

    async def execute(
        self, name: str, raw_args: Mapping[str, Any] | str | None, ctx: ToolContext
    ) -> ToolResult:
        """Run one call. Unknown tool, bad JSON, invalid arguments, not allowed, exception → a result."""
        with log_context(tool=name):
            result = await self._execute(name, raw_args, ctx)
            with log_context(code=str(result.code)):
                log.info("tool %s → %s", name, result.code)
            return result

    async def _execute(
        self, name: str, raw_args: Mapping[str, Any] | str | None, ctx: ToolContext
    ) -> ToolResult:
        t = self._tools.get(name)
        if t is None:
            known = ", ".join(self._tools) or "(none)"
            return ToolResult.error(
                f"Tool '{name}' does not exist. Available tools: {known}.", reason="unknown_tool"
            )
        if not self.allowed(name, ctx.actor):
            if t.staff_only:
                msg = ctx.say(
                    f"{particle(repr(name), '은/는')} 운영진 전용 기능입니다. 필요하면 escalate_to_staff로 운영진에게 요청하세요.",
                    f"'{name}' is for staff only. Use escalate_to_staff to ask a staff member.",
                )
            else:
                msg = ACCOUNT_NOT_LINKED(
                    ctx.locale,
                    blocked=ctx.say("이 기능을 쓸 수 없습니다", "this is not available"),
                    more=ctx.say(
                        " 연동하면 주문 조회와 보상을 이용할 수 있습니다. 지금은 정책 검색과 운영진 연결만 가능합니다.",
                        " Once linked, order lookups and compensation work; until then only policy search and "
                        "contacting staff are available.",
                    ),
                )
            await _audit_quietly(
                ctx, action=f"tool:{name}", code=ResultCode.DENIED, detail="not allowed for actor"
            )
            return ToolResult(ok=False, code=ResultCode.DENIED, message=msg, data={"reason": "not_allowed"})
        if isinstance(raw_args, str):
            try:
                raw_args = json.loads(raw_args) if raw_args.strip() else {}
            except json.JSONDecodeError as exc:
                return ToolResult.error(
                    f"The arguments for '{name}' are not valid JSON ({exc.msg} at position {exc.pos}). "
                    "Send a JSON object.",
                    reason="bad_json",
                )
        if raw_args is None:
            raw_args = {}
        if not isinstance(raw_args, Mapping):
            return ToolResult.error(
                f"The arguments for '{name}' must be a JSON object, got {type(raw_args).__name__}.",
                reason="bad_arguments",
            )
        try:
            args = t.args_model.model_validate(dict(raw_args))
        except ValidationError as exc:
            return ToolResult.error(
                f"Invalid arguments for '{name}': {describe_validation_error(exc)}.",
                reason="invalid_arguments",
            )
        try:
            result = await t.fn(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not kill the run: the model reads an error instead
            log.exception("tool %s failed", name)
            return ToolResult.error(
                f"Tool '{name}' failed with an internal error ({type(exc).__name__}). "
                "Nothing was changed; you may retry once or tell the player to try again later.",
                reason="exception",
                exception=type(exc).__name__,
            )
        if not isinstance(result, ToolResult):
            return ToolResult.error(f"Tool '{name}' returned no result.", reason="no_result")
        return result


async def _audit_quietly(ctx: ToolContext, **kwargs: Any) -> None:
    audit = getattr(ctx.store, "audit", None)
    if audit is None:
        return
    try:
        await audit(actor=ctx.actor.label, thread_id=ctx.thread_id, **kwargs)
    except Exception:  # auditing must never turn a refusal into a crash
        log.exception("audit write failed")
