"""Persistence: the `Store` and its typed parts (coupons, orders, threads, players), its tables and the demo seed."""

from bot.store.attachments import AttachmentRow  # registers the table with the schema
from bot.store.coupons import ActiveCoupon, CouponRow, DailyUsage, IssueFacts, IssueWrite
from bot.store.database import Store, StoreError, StoreSession, TableRows
from bot.store.desk_claims import DeskClaim  # registers the table with the schema
from bot.store.game_deliveries import Backlog, DeliveryView
from bot.store.game_events import GameEvent  # registers the table with the schema
from bot.store.game_order_facts import GameOrderFacts  # registers the table with the schema
from bot.store.link_codes import LinkCode  # registers the table with the schema
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
from bot.store.orders import OrderRecord, OrderView
from bot.store.players import Contacts
from bot.store.policy_gaps import PolicyGap  # registers the table with the schema
from bot.store.saved_replies import SavedReply  # registers the table with the schema
from bot.store.threads import StoredThread
from bot.store.tickets import Ticket  # registers the table with the schema
from bot.store.units import RaceLost

__all__ = [
    "COUPON_STATUSES",
    "ORDER_STATUSES",
    "ORDER_STATUS_EN",
    "SCHEMA_VERSION",
    "ActiveCoupon",
    "AttachmentRow",
    "AuditEntry",
    "Backlog",
    "Contacts",
    "Coupon",
    "CouponRow",
    "DailyUsage",
    "DeliveryView",
    "DeskClaim",
    "Escalation",
    "Feedback",
    "GameEvent",
    "GameOrderFacts",
    "IssueFacts",
    "IssueWrite",
    "LinkCode",
    "Order",
    "OrderRecord",
    "OrderView",
    "Player",
    "PolicyGap",
    "RaceLost",
    "Run",
    "RunCitation",
    "RunToolCall",
    "SavedReply",
    "Store",
    "StoreError",
    "StoreSession",
    "StoredThread",
    "TableRows",
    "ThreadMessage",
    "ThreadState",
    "ThreadSummary",
    "Ticket",
    "utcnow",
]
