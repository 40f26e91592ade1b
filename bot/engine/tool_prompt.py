"""How JSON mode shows tools to the model: a name, one line of purpose, an example `args` object with
realistic values and the fields with their types — not a raw JSON schema, which small models copy into
their arguments. The same example values make the concrete calls the engine suggests after a mistake.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic.fields import FieldInfo

from bot.engine.example_values import question_words
from tools.base import Tool, ToolRegistry

_EXAMPLE_IN_TEXT = re.compile(r"e\.g\.,?\s*(?:'([^']+)'|\"([^\"]+)\"|`([^`]+)`|([^\s,;)]+))")
_ID_SHAPE = re.compile(r"^([A-Za-z]{2,})(\d+|…)$")
"""An id example: realistic (ORD001) or a visible placeholder (ORD…), filled from the player's words."""
_WON = re.compile(r"(\d[\d,]*)\s*(?:원|won|krw)", re.IGNORECASE)
_KRW_FIRST = re.compile(r"krw\s*(\d[\d,]*)", re.IGNORECASE)
_MAN_WON = re.compile(r"(?<![A-Za-z\d])(\d+(?:\.\d+)?)?\s*만\s*원")
_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "true/false"}


def purpose_line(t: Tool) -> str:
    """The first sentence of the tool's docstring, on one line."""
    text = " ".join(t.description.split())
    for match in re.finditer(r"(?<=[.!?])\s+(?=[A-Z`])", text):
        if not text[: match.start()].endswith(("e.g.", "i.e.")):
            return text[: match.start()]
    return text


def field_example(name: str, info: FieldInfo) -> Any:
    """A realistic value for one argument: declared `examples`, else the `e.g.` of its description,
    else its default, else a placeholder of its type."""
    if info.examples:
        return info.examples[0]
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    if isinstance(extra.get("examples"), list) and extra["examples"]:
        return extra["examples"][0]
    kind = _json_type(info)
    match = _EXAMPLE_IN_TEXT.search(info.description or "")
    if match:
        raw = next(g for g in match.groups() if g).rstrip(".")
        if kind == "integer":
            try:
                return int(raw.replace(",", ""))
            except ValueError:
                pass
        else:
            return raw
    if not info.is_required() and info.default is not None:
        return info.default
    return {"integer": 1, "number": 1, "true/false": True}.get(kind, "...")


def example_args(t: Tool, texts: Iterable[str] = ()) -> dict[str, Any]:
    """An `args` object for `t` with its required fields, filled from `texts` (what the player wrote)
    where a value of the right shape appears there, e.g. `{"order_id": "ORD101"}`."""
    texts = list(texts)
    said = "\n".join(texts)
    args: dict[str, Any] = {}
    for name, info in t.args_model.model_fields.items():
        if not info.is_required():
            continue
        example = field_example(name, info)
        if name == "query" and said.strip() and isinstance(example, str) and example.startswith("<"):
            args[name] = question_words(texts)  # the player's own words, never a copied topic
            continue
        args[name] = _from_player(example, said)
    return args


def example_call(t: Tool, texts: Iterable[str] = (), *, json_mode: bool) -> str:
    """The call to show the model: a whole JSON-mode action, or `name` + arguments for native calls."""
    args = example_args(t, texts)
    if json_mode:
        return json.dumps({"action": "tool_call", "tool": t.name, "args": args}, ensure_ascii=False)
    return f"{t.name} with arguments {json.dumps(args, ensure_ascii=False)}"


def describe_tool(t: Tool) -> str:
    lines = [
        f"- {t.name}: {purpose_line(t)}",
        f"  args example: {json.dumps(example_args(t), ensure_ascii=False)}",
    ]
    fields = t.args_model.model_fields
    if not fields:
        lines.append("  fields: none")
    for name, info in fields.items():
        need = "required" if info.is_required() else "optional"
        about = " ".join((info.description or "").split())
        lines.append(f"  - {name} ({_json_type(info)}, {need}){': ' + about if about else ''}")
    return "\n".join(lines)


def describe_tools(registry: ToolRegistry) -> str:
    """JSON mode's tool list for the system prompt."""
    return "\n".join(describe_tool(t) for t in registry)


_ORDER_ID = re.compile(r"\b[A-Za-z]{2,5}\d{2,}\b")


def player_values(query: str) -> str | None:
    """The ids and the KRW amount the player's message names, read the way the example calls are filled
    ("만원" → 10000), for JSON mode's prompt: small models misread amounts written in words."""
    found: list[str] = []
    ids = list(dict.fromkeys(m.group(0).upper() for m in _ORDER_ID.finditer(query)))
    if ids:
        found.append("ids " + ", ".join(ids))
    amount = _amount(query)
    if amount is not None:
        found.append(f"amount {amount} (KRW, as a whole number)")
    if not found:
        return None
    return "The player's message names: " + "; ".join(found) + ". Use exactly these values in tool arguments."


def _json_type(info: FieldInfo) -> str:
    annotation = info.annotation
    args = getattr(annotation, "__args__", None)
    candidates = [a for a in args if a is not type(None)] if args else [annotation]
    kind = candidates[0] if candidates else str
    if kind is bool:
        return "true/false"
    if kind is int:
        return "integer"
    if kind is float:
        return "number"
    if kind is str:
        return "string"
    return _JSON_TYPES.get(getattr(kind, "__name__", ""), "object")


def _from_player(example: Any, said: str) -> Any:
    if isinstance(example, str):
        shape = _ID_SHAPE.match(example)
        if shape:
            found = re.search(rf"\b{re.escape(shape.group(1))}\d+\b", said, re.IGNORECASE)
            if found:
                return found.group(0).upper()
        return example
    if isinstance(example, int) and not isinstance(example, bool):
        amount = _amount(said)
        return amount if amount is not None else example
    return example


def _amount(said: str) -> int | None:
    man = _MAN_WON.search(said)
    if man:
        return int(float(man.group(1) or 1) * 10_000)
    for pattern in (_WON, _KRW_FIRST):
        found = pattern.search(said)
        if found:
            return int(found.group(1).replace(",", ""))
    return None
