"""`structured_llm_call`: the single entry point for getting schema-shaped JSON out of any model.

Three levels, each skipped when the model's abilities rule it out: native function calling with a
forced `tool_choice` → `response_format=json_object` (+1 reformat retry) → plain text read with
`extract_json` (+ `regex_fallback`, +1 reformat retry). At most five calls; `default_value` when all fail.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from bot.llm.base import LLM, LLMError, LLMResult, Usage

log = logging.getLogger(__name__)

REFORMAT_REQUEST = (
    "Your previous response could not be parsed as valid JSON. Reply again with only one JSON object "
    "that matches the schema, with no text before or after it."
)
_FUNCTION_NAME = "respond"


class StructuredParseError(ValueError):
    """The reply held no JSON object matching the schema."""


@dataclass
class StructuredCallResult:
    """What `structured_llm_call` got: the value, which level produced it, and what it cost."""

    value: Any
    level_used: str
    """`native`, `json_mode`, `text`, or `default` when every level failed."""
    llm_calls: int
    usage: Usage = field(default_factory=Usage)

    @property
    def ok(self) -> bool:
        return self.level_used != "default"


def extract_json(text: str | None) -> Any:
    """The first JSON object (or array) in free text: whole text, a ```json fence, or embedded braces."""
    if not text:
        return None
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    # Scan candidates in order; fenced blocks and prose-wrapped objects both land here.
    for i, ch in enumerate(stripped):
        if ch not in "{[":
            continue
        try:
            value, _end = decoder.raw_decode(stripped, i)
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    return None


def _schema_of(schema: dict[str, Any] | type[BaseModel]) -> dict[str, Any]:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return schema


def _instruction(schema: dict[str, Any]) -> str:
    return (
        "Respond with a single JSON object that matches this JSON schema, and nothing else:\n"
        + json.dumps(schema, ensure_ascii=False)
    )


async def structured_llm_call(
    llm: LLM,
    messages: list[dict[str, Any]],
    schema: dict[str, Any] | type[BaseModel],
    *,
    parse_fn: Callable[[Any], Any] | None = None,
    default_value: Any = None,
    regex_fallback: Callable[[str], Any] | None = None,
    purpose: str = "structured",
    function_name: str = _FUNCTION_NAME,
) -> StructuredCallResult:
    """Ask `llm` for data matching `schema`, degrading through the levels its abilities allow.

    `parse_fn(raw)` turns the decoded JSON into the caller's value and may raise to reject it; a
    pydantic model as `schema` is validated (and returned as an instance) before `parse_fn`.
    """
    json_schema = _schema_of(schema)
    model_cls = schema if isinstance(schema, type) and issubclass(schema, BaseModel) else None
    abilities = llm.abilities
    usage = Usage()
    calls = 0

    def parse(raw: Any) -> Any:
        if raw is None:
            raise StructuredParseError("no JSON found")
        value = raw
        if model_cls is not None:
            value = model_cls.model_validate(raw)
        elif not isinstance(raw, dict):
            raise StructuredParseError(f"expected a JSON object, got {type(raw).__name__}")
        return parse_fn(value) if parse_fn is not None else value

    async def ask(msgs: list[dict[str, Any]], **kwargs: Any) -> LLMResult | None:
        nonlocal calls
        calls += 1
        try:
            result = await llm.chat(msgs, purpose=purpose, **kwargs)
        except LLMError as exc:
            log.warning("structured call (%s) failed: %s", purpose, exc)
            return None
        usage.add(result.usage)
        return result

    def done(value: Any, level: str) -> StructuredCallResult:
        return StructuredCallResult(value=value, level_used=level, llm_calls=calls, usage=usage)

    # Level 1: native function calling, the function forced.
    if abilities.get("tool_call"):
        tool = {
            "type": "function",
            "function": {
                "name": function_name,
                "description": "Return the requested data.",
                "parameters": json_schema,
            },
        }
        result = await ask(
            messages, tools=[tool], tool_choice={"type": "function", "function": {"name": function_name}}
        )
        if result is not None:
            for tc in result.tool_calls:
                try:
                    return done(parse(extract_json(tc.arguments)), "native")
                except (ValueError, ValidationError, TypeError) as exc:
                    log.info("structured native level: unusable arguments (%s)", exc)
            # Some servers ignore tool_choice and answer in the content instead.
            if result.content:
                try:
                    return done(parse(extract_json(result.content)), "native")
                except (ValueError, ValidationError, TypeError):
                    pass

    instructed = [*messages, {"role": "user", "content": _instruction(json_schema)}]

    # Level 2: JSON mode, one reformat retry; level 3: plain text, one reformat retry.
    levels: list[tuple[str, dict[str, Any]]] = []
    if abilities.get("json_mode"):
        levels.append(("json_mode", {"response_format": {"type": "json_object"}}))
    levels.append(("text", {}))
    for level, kwargs in levels:
        convo = list(instructed)
        for attempt in range(2):
            result = await ask(convo, **kwargs)
            if result is None:
                break  # the endpoint failed: a reformat request would not help, try the next level
            text = result.content or ""
            try:
                return done(parse(extract_json(text)), level)
            except (ValueError, ValidationError, TypeError):
                pass
            if level == "text" and regex_fallback is not None:
                try:
                    return done(parse(regex_fallback(text)), level)
                except (ValueError, ValidationError, TypeError):
                    pass
            if attempt == 0:
                convo = [
                    *convo,
                    {"role": "assistant", "content": text or "(empty)"},
                    {"role": "user", "content": REFORMAT_REQUEST},
                ]
    return done(default_value, "default")
