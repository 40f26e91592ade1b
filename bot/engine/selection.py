"""Tool selection: with more tools than the threshold, one cheap call over a compact catalogue picks
the few that fit the query. Any failure keeps the full set (more context, never less capability).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.engine.prompts import selection_messages
from bot.engine.structured import structured_llm_call
from bot.llm.base import LLM, Usage
from tools.base import ToolRegistry

log = logging.getLogger(__name__)

SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Names of the tools most relevant to the player's message, most relevant first.",
        }
    },
    "required": ["tools"],
}


@dataclass
class ToolSelection:
    registry: ToolRegistry
    """The tools the loop will offer and execute."""
    selected: list[str]
    fell_back: bool
    """True when the full set is used because selection failed or picked nothing valid."""
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)


async def select_tools(llm: LLM, tools: ToolRegistry, query: str, *, max_tools: int = 6) -> ToolSelection:
    """Pick at most `max_tools` of `tools` for `query` via `structured_llm_call`; fall back to all."""

    def names_of(raw: dict[str, Any]) -> list[str]:
        picked = raw.get("tools")
        if not isinstance(picked, list):
            raise ValueError("`tools` must be a list of names")
        valid: list[str] = []
        for name in picked:
            if isinstance(name, str) and name in tools and name not in valid:
                valid.append(name)
        return valid[:max_tools]

    try:
        result = await structured_llm_call(
            llm,
            selection_messages(tools.catalogue(), query, max_tools),
            SELECTION_SCHEMA,
            parse_fn=names_of,
            default_value=[],
            purpose="select_tools",
        )
    except AssertionError:
        raise
    except Exception:  # selection is an optimisation: nothing it does may stop the run
        log.exception("tool selection failed; using all tools")
        return ToolSelection(registry=tools, selected=tools.names, fell_back=True)
    if not result.value:
        return ToolSelection(tools, tools.names, True, result.llm_calls, result.usage)
    return ToolSelection(
        tools.subset(result.value), list(result.value), False, result.llm_calls, result.usage
    )
