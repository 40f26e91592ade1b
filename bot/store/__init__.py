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
    Order,
    Player,
    ThreadMessage,
    ThreadState,
    ThreadSummary,
    utcnow,
)

__all__ = [
    "COUPON_STATUSES",
    "ORDER_STATUSES",
    "ORDER_STATUS_EN",
    "SCHEMA_VERSION",
    "AuditEntry",
    "Coupon",
    "Escalation",
    "Order",
    "Player",
    "Store",
    "StoreError",
    "ThreadMessage",
    "ThreadState",
    "ThreadSummary",
    "utcnow",
]
