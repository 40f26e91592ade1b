"""Persistence: the SQLAlchemy store, its tables and the demo seed."""

from bot.store.database import Store, StoreError
from bot.store.models import (
    COUPON_STATUSES,
    ORDER_STATUS_EN,
    ORDER_STATUSES,
    SCHEMA_VERSION,
    AuditEntry,
    Coupon,
    Escalation,
    Feedback,
    Order,
    Player,
    Run,
    RunCitation,
    RunToolCall,
    ThreadMessage,
    ThreadState,
    ThreadSummary,
    utcnow,
)
from bot.store.policy_gaps import PolicyGap  # registers the table with the schema

__all__ = [
    "COUPON_STATUSES",
    "ORDER_STATUSES",
    "ORDER_STATUS_EN",
    "SCHEMA_VERSION",
    "AuditEntry",
    "Coupon",
    "Escalation",
    "Feedback",
    "Order",
    "Player",
    "PolicyGap",
    "Run",
    "RunCitation",
    "RunToolCall",
    "Store",
    "StoreError",
    "ThreadMessage",
    "ThreadState",
    "ThreadSummary",
    "utcnow",
]
