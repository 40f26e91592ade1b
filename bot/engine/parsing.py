"""JSON mode: reading the model's reply as one action, repairing the unambiguous mistakes small models
make (a code fence, prose after the object, Python literals) and naming the ambiguous ones precisely.

Each repair is logged, so an operator can see which model needs which help.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

TOOL_CALL = "tool_call"
FINAL_ANSWER = "final_answer"
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_LITERAL_LIMIT = 20_000
"""Longer replies are not handed to `ast.literal_eval` (its cost grows with nesting)."""
_ACTION_KEYS = ("action", "tool", "answer")


@dataclass
class JsonAction:
    """One action of a JSON-mode reply: a tool call or the final answer."""

    kind: str
    tool: str = ""
    args: Any = None
    answer: str = ""
    reasoning: str = ""
    repairs: list[str] = field(default_factory=list)
    """What had to be fixed to read the reply (empty for a well-formed one)."""


_JsonAction = JsonAction


@dataclass
class ActionReading:
    """A reply read as an action, or why it could not be (`hint`, for the reformat request)."""

    action: JsonAction | None
    hint: str | None = None
    error: str | None = None
    """The JSON decoder's own message for the reply (e.g. "Expecting ',' delimiter: line 1 column 41
    (char 40)"), or why no object was found; sent back word for word in the corrective request."""


def parse_action(content: str | None) -> JsonAction | None:
    """A JSON-mode reply as an action, or None when it is not one (→ reformat request). Quiet: for
    reading a reply again (trace, review); the loop reads each reply once with `read_action`."""
    return _read(content).action


def read_action(content: str | None) -> ActionReading:
    """Read a reply; unambiguous mistakes are repaired (and logged), ambiguous ones get a hint."""
    reading = _read(content)
    for repair in reading.action.repairs if reading.action else []:
        log.info("repaired a JSON-mode reply: %s", repair)
    return reading


def _read(content: str | None) -> ActionReading:
    reading = _read_text(content)
    if reading.action is None and reading.error is None:
        reading.error = _decode_error(content or "")
    return reading


def _decode_error(text: str) -> str:
    """What is wrong with the reply as JSON, in the decoder's words, for the corrective request."""
    stripped = text.strip()
    if not stripped:
        return "the reply was empty"
    spans = _spans(stripped)
    start = stripped.find("{")
    if start < 0:
        return "no JSON object found: the reply has no '{'"
    chunk = stripped[start : spans[0][1]] if spans else stripped[start:]
    try:
        json.loads(chunk)
    except ValueError as exc:
        return f"{exc}"
    return "the JSON object has no usable action"


def _read_text(content: str | None) -> ActionReading:
    text = (content or "").strip()
    if not text:
        return ActionReading(None, "Your reply was empty.")
    repairs: list[str] = []
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return _to_action(whole, repairs)
    fenced = [body for body in _FENCE.findall(text) if "{" in body]
    if len(fenced) > 1:
        return ActionReading(
            None,
            f"Your reply had {len(fenced)} code blocks. Send exactly one JSON object, without a code fence.",
        )
    if fenced:
        repairs.append("code fence removed")
        outside = _FENCE.sub("", text).strip()
        if outside:
            repairs.append("text around the JSON object ignored")
        text = fenced[0].strip()
    objects, broken = _objects(text)
    actions = [(obj, how) for obj, how in objects if _is_action(obj)]
    if len(actions) > 1:
        return ActionReading(
            None,
            f"Your reply had {len(actions)} JSON objects. Send exactly one: one tool call per reply, "
            "or the final answer.",
        )
    if not actions:
        if broken:
            return ActionReading(
                None,
                "Your JSON object is not valid JSON: use double quotes for keys and strings, "
                "true/false/null, and close every brace.",
            )
        return ActionReading(None)
    data, how = actions[0]
    if how == "python":
        repairs.append("Python literals read as JSON")
    if not fenced:
        start, end = _span_of(text)
        if text[end:].strip():
            repairs.append("trailing prose after the JSON object ignored")
        if text[:start].strip():
            repairs.append("text before the JSON object ignored")
    return _to_action(data, repairs)


def _is_action(obj: dict[str, Any]) -> bool:
    """An action object, or a function call in the OpenAI shape small models emit from habit."""
    return any(k in obj for k in _ACTION_KEYS) or _function_call_shape(obj)


def _function_call_shape(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("name"), str) and isinstance(obj.get("arguments", obj.get("args")), dict | str)


def _to_action(data: dict[str, Any], repairs: list[str]) -> ActionReading:
    action = data.get("action")
    if action is None and "tool" not in data and "answer" not in data and _function_call_shape(data):
        repairs.append('{"name", "arguments"} function-call shape read as a tool call')
        data = {"action": TOOL_CALL, "tool": data["name"], "args": data.get("arguments", data.get("args"))}
    if isinstance(action, str) and action not in (TOOL_CALL, FINAL_ANSWER) and action:
        tool = data.get("tool")
        if action == tool:
            # Seen live: {"action": "lookup_order", "tool": "lookup_order", "args": {…}}, twice in a row.
            repairs.append('"action" naming the same tool as "tool" read as a tool call')
            action = TOOL_CALL
        elif isinstance(tool, str) and tool and isinstance(data.get("args"), dict):
            # Seen live (2026-12-02), twice in a row until the run stopped: {"action": "lookup_order",
            # "tool": "search_policy", "args": {"query": …}}. "tool" is the field the format names, and
            # the arguments are that tool's.
            repairs.append('"action" naming a tool read as "tool_call"; "tool" kept')
            action = TOOL_CALL
        elif "tool" not in data and isinstance(data.get("args"), dict) and action.isidentifier():
            # Seen live (2026-12-02), twice in a row until the run stopped: {"action": "lookup_order",
            # "args": {"order_id": "ORD103"}} after the hint said how to write it.
            repairs.append('"action" naming the tool read as a tool call of that tool')
            data = {**data, "tool": action}
            action = TOOL_CALL
    reasoning = data.get("reasoning") if isinstance(data.get("reasoning"), str) else ""
    if action == TOOL_CALL or (action is None and "tool" in data):
        tool = data.get("tool") or data.get("name")
        if not isinstance(tool, str) or not tool:
            return ActionReading(None, 'A tool call needs "tool": the name of the tool, as a string.')
        args = data.get("args", data.get("arguments", {}))
        if isinstance(args, str):
            try:
                decoded = json.loads(args)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                args = decoded
                repairs.append("args given as a JSON string decoded")
        return _done(
            JsonAction(TOOL_CALL, tool=tool, args=args if args is not None else {}, reasoning=reasoning),
            repairs,
        )
    if action == FINAL_ANSWER or (action is None and "answer" in data):
        answer = data.get("answer")
        if not isinstance(answer, str):
            return ActionReading(
                None, 'A final answer needs "answer": your reply to the player, as a string.'
            )
        return _done(JsonAction(FINAL_ANSWER, answer=answer, reasoning=reasoning), repairs)
    if isinstance(action, str) and action:
        return ActionReading(
            None,
            f'"action" must be "tool_call" or "final_answer", not {json.dumps(action, ensure_ascii=False)}. '
            f'To call a tool write {{"action": "tool_call", "tool": "<tool name>", "args": {{...}}}}.',
        )
    return ActionReading(None, 'Your JSON object has no "action": use "tool_call" or "final_answer".')


def _done(action: JsonAction, repairs: list[str]) -> ActionReading:
    action.repairs = list(repairs)
    return ActionReading(action)


def _objects(text: str) -> tuple[list[tuple[dict[str, Any], str]], bool]:
    """Every top-level `{…}` span that decodes to an object (as JSON, else as Python literals), and
    whether some span looked like an object but decoded as neither."""
    found: list[tuple[dict[str, Any], str]] = []
    broken = False
    for start, end in _spans(text):
        chunk = text[start:end]
        value, how = _decode(chunk)
        if isinstance(value, dict):
            found.append((value, how))
        else:
            broken = True
    return found, broken


def _decode(chunk: str) -> tuple[Any, str]:
    try:
        return json.loads(chunk), "json"
    except ValueError:
        pass
    if len(chunk) > _LITERAL_LIMIT:
        return None, ""
    try:
        return ast.literal_eval(chunk), "python"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None, ""


def _spans(text: str) -> list[tuple[int, int]]:
    """Balanced top-level brace spans; quotes (either kind) are only tracked inside a span."""
    spans: list[tuple[int, int]] = []
    depth, start, quote, escaped = 0, 0, "", False
    for i, ch in enumerate(text):
        if depth and quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if depth and ch in "\"'":
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _span_of(text: str) -> tuple[int, int]:
    for start, end in _spans(text):
        value, _how = _decode(text[start:end])
        if isinstance(value, dict) and _is_action(value):
            return start, end
    return 0, len(text)
