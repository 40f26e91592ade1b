"""The fields every log line carries (thread_id, run_id, tool, code) and the block that sets them.

Shared by every layer (the tool registry sets `tool` and `code`, conversations `thread_id` and
`run_id`); the log formatters in `bot.observability` read them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

LOG_FIELDS = ("thread_id", "run_id", "tool", "code")
"""Context every log line carries (null when unknown), so one grep follows a conversation."""

# A ContextVar, not a global dict: each asyncio task (one per run) sees its own values, and a task
# created inside `log_context` inherits them, so concurrent threads never mix their fields.
_context: ContextVar[Mapping[str, str]] = ContextVar("arca_log_context", default=MappingProxyType({}))


@contextmanager
def log_context(**fields: Any) -> Iterator[Mapping[str, str]]:
    """Add fields (thread_id, run_id, tool, code, or any other) to every log line inside the block.

    Nested blocks add to the outer fields; a None value leaves the outer value in place.
    """
    merged = {**_context.get(), **{k: str(v) for k, v in fields.items() if v is not None}}
    token = _context.set(MappingProxyType(merged))
    try:
        yield _context.get()
    finally:
        _context.reset(token)


def current_log_context() -> dict[str, str]:
    """The fields `log_context` has set in this task (a copy)."""
    return dict(_context.get())


def context_fields() -> Mapping[str, str]:
    """The current fields, read-only (for log filters and formatters)."""
    return _context.get()
