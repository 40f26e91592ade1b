"""The fixed result codes of DESIGN.md §5: what tools return, what metrics label, what transcripts expect."""

from __future__ import annotations

from enum import StrEnum


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
    SOURCE_UNAVAILABLE = "SOURCE_UNAVAILABLE"
    """The game backend could not be read fresh (DESIGN.md §11); nothing was issued."""


RESULT_CODES = frozenset(code.value for code in ResultCode)
