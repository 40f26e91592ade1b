"""What a tool call produces: a fixed result code (DESIGN.md §5) and the sentence the model reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ResultCode(StrEnum):
    """Fixed result codes (DESIGN.md §5); outside test suites match on these strings."""

    OK = "OK"
    ISSUED = "ISSUED"
    ORDER_NOT_FOUND = "ORDER_NOT_FOUND"
    NOT_LINKED = "NOT_LINKED"
    NOT_ELIGIBLE_STATUS = "NOT_ELIGIBLE_STATUS"
    INVALID_AMOUNT = "INVALID_AMOUNT"
    AMOUNT_OVER_LIMIT = "AMOUNT_OVER_LIMIT"
    ALREADY_ISSUED = "ALREADY_ISSUED"
    DAILY_LIMIT_REACHED = "DAILY_LIMIT_REACHED"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    DENIED = "DENIED"
    ERROR = "ERROR"


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
