"""What a tool call produces: a fixed result code (DESIGN.md §5) and the sentence the model reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.vocabulary.result_codes import ResultCode

__all__ = ["ResultCode", "ToolResult"]


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced. `message` is the sentence the model reads; `data` is for code."""

    ok: bool
    """True when the tool did what was asked (OK, ISSUED)."""
    code: str
    """One of `ResultCode`."""
    message: str
    """The observation the model reads, in the conversation's language."""
    data: dict[str, Any] = field(default_factory=dict)
    """Structured facts for code (claim check, replay expectations), never shown to the model."""

    @classmethod
    def error(cls, message: str, **data: Any) -> ToolResult:
        return cls(ok=False, code=ResultCode.ERROR, message=message, data=data)
