"""Repairs of a tool call's unambiguous mistakes, in both modes: a `functions.`/`tools.` prefix on the
name, arguments sent as a JSON string (or Python literals) inside the string, and — not repairable,
so refused with the fix — the tool's schema sent in place of values. Each repair is logged."""

from __future__ import annotations

import ast
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from bot.engine.tool_prompt import example_args
from tools.base import ToolRegistry, ToolResult

log = logging.getLogger(__name__)

NAME_PREFIXES = ("functions.", "tools.", "function.", "tool.")
_SCHEMA_KEYS = frozenset({"properties", "required", "type", "title", "description", "$defs"})


@dataclass
class RepairedCall:
    """A call as it will run: the tool name and arguments after repairs, or the refusal to send back."""

    name: str
    args: Any
    repairs: list[str] = field(default_factory=list)
    refusal: ToolResult | None = None
    """Set when the call cannot run as sent (the tool's schema as arguments); the model reads it."""


def repair_call(name: str, args: Any, registry: ToolRegistry, texts: list[str]) -> RepairedCall:
    """Fix what can be fixed without guessing; `texts` (what the player wrote) fill example values."""
    call = RepairedCall(repaired_name(name, registry), args)
    if call.name != name:
        call.repairs.append(f"tool name prefix {name[: len(name) - len(call.name)]!r} removed")
    if isinstance(args, str):
        call.args = _decoded(args, call.repairs)
    t = registry.get(call.name)
    if t is not None and _is_schema(call.args, set(t.args_model.model_fields)):
        example = json.dumps(example_args(t, texts), ensure_ascii=False)
        call.refusal = ToolResult.error(
            f"The arguments for '{call.name}' are the tool's schema (properties/required). "
            f"Give values, not the schema, e.g. {example}.",
            reason="schema_as_args",
        )
    for repair in call.repairs:
        log.info("repaired a call to %s: %s", call.name, repair)
    return call


def repaired_name(name: str, registry: ToolRegistry) -> str:
    """`functions.lookup_order` → `lookup_order` when only the prefixed name is unknown."""
    if name not in registry:
        for prefix in NAME_PREFIXES:
            if name.startswith(prefix) and name[len(prefix) :] in registry:
                return name[len(prefix) :]
    return name


def _decoded(text: str, repairs: list[str]) -> Any:
    """Arguments text as an object when it unambiguously is one; otherwise the text, for the registry's
    own "not valid JSON" error."""
    stripped = text.strip()
    if not stripped:
        return {}
    try:
        value = json.loads(stripped)
    except ValueError:
        try:
            value = ast.literal_eval(stripped) if len(stripped) < 20_000 else None
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return text
        if isinstance(value, dict):
            repairs.append("arguments in Python literals read as JSON")
            return value
        return text
    if isinstance(value, str):
        inner = _decoded(value, [])
        if isinstance(inner, dict):
            repairs.append("arguments given as a JSON string decoded")
            return inner
        return text
    return value if isinstance(value, dict) else text


def _is_schema(args: Any, fields: set[str]) -> bool:
    """True when the arguments look like a JSON schema rather than values for this tool."""
    if not isinstance(args, dict) or not isinstance(args.get("properties"), dict):
        return False
    return "properties" not in fields and set(args) <= _SCHEMA_KEYS | fields
