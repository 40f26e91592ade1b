"""The run as text for answer synthesis: who said what, which tool ran with which arguments, and each
result cut to a limit so one huge result cannot crowd out the rest."""

from __future__ import annotations

import json
from typing import Any

from bot.engine.parsing import TOOL_CALL, parse_action
from bot.engine.prompts import LOOP_REFORMAT_REQUEST, OBSERVATION_PREFIX


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [cut, {len(text) - limit} more characters]"


def format_trace(messages: list[dict[str, Any]], limit: int) -> str:
    """The run as text; every tool result cut to `limit` characters; system and reformat turns left out."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for m in messages:
        role, content = m.get("role"), m.get("content") if isinstance(m.get("content"), str) else ""
        if role == "system":
            continue
        if role == "tool":
            name = names.get(m.get("tool_call_id", ""), "tool")
            lines.append(f"Result of {name}: {cut(content, limit)}")
        elif role == "assistant" and m.get("tool_calls"):
            for tc in m["tool_calls"]:
                fn = tc.get("function") or {}
                names[tc.get("id", "")] = fn.get("name", "tool")
                lines.append(f"Assistant called {fn.get('name')}({fn.get('arguments', '')})")
        elif role == "assistant":
            action = parse_action(content) if "{" in content else None
            if action is not None and action.kind == TOOL_CALL:
                lines.append(f"Assistant called {action.tool}({json.dumps(action.args, ensure_ascii=False)})")
            elif action is not None:
                lines.append(f"Assistant: {action.answer}")
            elif content:
                lines.append(f"Assistant: {content}")
        elif content.startswith(OBSERVATION_PREFIX):
            lines.append(f"Result of {cut(content[len(OBSERVATION_PREFIX) :], limit)}")
        elif content and not content.startswith(LOOP_REFORMAT_REQUEST):
            lines.append(f"Player: {content}")
    return "\n".join(lines)
