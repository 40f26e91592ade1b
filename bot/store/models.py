"""ORM tables: players, orders, coupons (the ledger), audit, conversation memory, schema meta.

Constraints that protect money live in the database itself (one live coupon per order,
unique idempotency keys), so no code path can bypass them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

SCHEMA_VERSION = 12
"""Bumped whenever a table changes; a database with a newer or unknown version is refused at start-up.

Version 2 only adds tables (`runs`, `run_tool_calls`, `run_citations`, `feedback`): a
version-1 database is upgraded in place by creating them (`UPGRADABLE_FROM`). Version 3
only adds the staff console's `staff_links` and `staff_sessions`; version 4 only adds `staff_outbox`;
version 5 only adds the incident tables (`bot.store.incident_tables`); version 6 only adds `policy_gaps`
(bot/store/policy_gaps.py); version 7 only adds the tables of `_V7_TABLES`: incident notice posts and
deliveries, saved replies and the desk's claims (bot/store/saved_replies.py, bot/store/desk_claims.py),
attachments (bot/store/attachments.py) and tickets (bot/store/tickets.py); version 8 only adds
`incident_notice_answers` (answers that relayed an incident's notice); version 9 only adds the game
connection's `game_events` and `link_codes` (bot/store/game_events.py, bot/store/link_codes.py); version
10 only adds `game_deliveries` (the outbox of grants into the game: bot/store/game_deliveries.py); version 11
only adds `game_order_facts` (the order facts each coupon was decided on, bot/store/game_order_facts.py);
version 12 only adds `link_code_failures` (refused link codes, counted across processes:
bot/store/link_codes.py)."""

_STAFF_CONSOLE_TABLES = ("staff_links", "staff_sessions", "staff_outbox")
_INCIDENT_TABLES = ("incidents", "incident_exclusions")
_POLICY_GAPS = ("policy_gaps",)
_V7_TABLES = (
    "incident_posts",
    "incident_deliveries",
    "saved_replies",
    "desk_claims",
    "attachments",
    "tickets",
)
_V8_TABLES = ("incident_notice_answers",)
_V9_TABLES = ("game_events", "link_codes")
_V10_TABLES = ("game_deliveries",)
_V11_TABLES = ("game_order_facts",)
_V12_TABLES = ("link_code_failures",)
UPGRADABLE_FROM: dict[int, tuple[str, ...]] = {
    1: (
        "runs",
        "run_tool_calls",
        "run_citations",
        "feedback",
        *_STAFF_CONSOLE_TABLES,
        *_INCIDENT_TABLES,
        *_POLICY_GAPS,
        *_V7_TABLES,
        *_V8_TABLES,
        *_V9_TABLES,
        *_V10_TABLES,
        *_V11_TABLES,
        *_V12_TABLES,
    ),
    2: (
        *_STAFF_CONSOLE_TABLES,
        *_INCIDENT_TABLES,
        *_POLICY_GAPS,
        *_V7_TABLES,
        *_V8_TABLES,
        *_V9_TABLES,
        *_V10_TABLES,
        *_V11_TABLES,
        *_V12_TABLES,
    ),
    3: (
        "staff_outbox",
        *_INCIDENT_TABLES,
        *_POLICY_GAPS,
        *_V7_TABLES,
        *_V8_TABLES,
        *_V9_TABLES,
        *_V10_TABLES,
        *_V11_TABLES,
        *_V12_TABLES,
    ),
    4: (
        *_INCIDENT_TABLES,
        *_POLICY_GAPS,
        *_V7_TABLES,
        *_V8_TABLES,
        *_V9_TABLES,
        *_V10_TABLES,
        *_V11_TABLES,
        *_V12_TABLES,
    ),
    5: (*_POLICY_GAPS, *_V7_TABLES, *_V8_TABLES, *_V9_TABLES, *_V10_TABLES, *_V11_TABLES, *_V12_TABLES),
    6: (*_V7_TABLES, *_V8_TABLES, *_V9_TABLES, *_V10_TABLES, *_V11_TABLES, *_V12_TABLES),
    7: (*_V8_TABLES, *_V9_TABLES, *_V10_TABLES, *_V11_TABLES, *_V12_TABLES),
    8: (*_V9_TABLES, *_V10_TABLES, *_V11_TABLES, *_V12_TABLES),
    9: (*_V10_TABLES, *_V11_TABLES, *_V12_TABLES),
    10: (*_V11_TABLES, *_V12_TABLES),
    11: _V12_TABLES,
}
"""Older schema versions this bot upgrades, and the tables the upgrade creates (nothing else changes)."""

ORDER_STATUSES: dict[str, str] = {
    "paid": "결제 완료",
    "preparing": "상품 준비 중",
    "shipping": "배송 중",
    "delayed": "배송 지연",
    "delivered": "배송 완료",
    "cancelled": "주문 취소",
    "refunded": "환불 완료",
}
"""Order status codes and their Korean labels (DESIGN.md §5)."""

ORDER_STATUS_EN: dict[str, str] = {
    "paid": "paid",
    "preparing": "preparing",
    "shipping": "shipping",
    "delayed": "delivery delayed",
    "delivered": "delivered",
    "cancelled": "cancelled",
    "refunded": "refunded",
}

COUPON_STATUSES = ("active", "revoked", "pending", "rejected")
"""`pending` waits for `/coupon approve`; `rejected` is a pending coupon staff declined."""


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes as UTC; SQLite drops the zone, so it is put back on load."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: object) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    pass


class SchemaMeta(Base):
    __tablename__ = "schema_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(256))


class Player(Base):
    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    discord_id: Mapped[str | None] = mapped_column(String(32), unique=True, nullable=True)
    name: Mapped[str] = mapped_column(String(100))
    locale: Mapped[str] = mapped_column(String(8), default="ko")
    email: Mapped[str | None] = mapped_column(String(200), nullable=True)
    phone: Mapped[str | None] = mapped_column(String(40), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Order(Base):
    __tablename__ = "orders"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    item: Mapped[str] = mapped_column(String(200))
    amount: Mapped[int] = mapped_column(Integer)
    currency: Mapped[str] = mapped_column(String(3), default="KRW")
    ordered_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Coupon(Base):
    __tablename__ = "coupons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(32), unique=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"), index=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    amount: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="active")
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    issued_by: Mapped[str] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (
        # At most one live (active or awaiting approval) coupon per order, enforced by the database.
        Index(
            "uq_coupons_one_live_per_order",
            "order_id",
            unique=True,
            sqlite_where=text("status IN ('active', 'pending')"),
            postgresql_where=text("status IN ('active', 'pending')"),
        ),
        Index("ix_coupons_player_created", "player_id", "created_at"),
    )


class AuditEntry(Base):
    __tablename__ = "audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(100))
    thread_id: Mapped[str | None] = mapped_column(String(100), nullable=True, index=True)
    action: Mapped[str] = mapped_column(String(64), index=True)
    target: Mapped[str | None] = mapped_column(String(100), nullable=True)
    code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)


class ThreadMessage(Base):
    """One message of a conversation, append-only (ThreadMemory)."""

    __tablename__ = "thread_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(100), index=True)
    run_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    tool_calls: Mapped[list | None] = mapped_column(JSON, nullable=True)
    tool_call_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    name: Mapped[str | None] = mapped_column(String(100), nullable=True)
    pinned: Mapped[bool] = mapped_column(Boolean, default=False)
    meta: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (Index("ix_thread_messages_thread_id_id", "thread_id", "id"),)


class ThreadSummary(Base):
    """A compaction summary: replaces every message of the thread up to `upto_message_id`."""

    __tablename__ = "thread_summaries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(100), index=True)
    upto_message_id: Mapped[int] = mapped_column(Integer)
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ThreadState(Base):
    """Per-thread flags that outlive a process: handoff (bot paused) and the last reset."""

    __tablename__ = "thread_state"

    thread_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    handoff: Mapped[bool] = mapped_column(Boolean, default=False)
    handoff_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    reset_before_id: Mapped[int] = mapped_column(Integer, default=0)
    """Messages with an id at or below this were cleared by `/thread reset` (kept for audit)."""
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Escalation(Base):
    __tablename__ = "escalations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    player_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    discord_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    summary: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="open")
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


OPS_DRAFT_STATUSES = ("accepted", "capped", "failed")


class OpsDraft(Base):
    """One `/ops draft` result (request, plan, draft, how it ended), for `/ops show`."""

    __tablename__ = "ops_drafts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    request: Mapped[str] = mapped_column(Text)
    plan: Mapped[str] = mapped_column(Text, default="")
    draft: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16))
    """`accepted`, `capped` (the reflection cap ended the loop) or `failed` (see `failed_step`)."""
    reflection_count: Mapped[int] = mapped_column(Integer, default=0)
    failed_step: Mapped[str | None] = mapped_column(String(16), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    missing: Mapped[list | None] = mapped_column(JSON, nullable=True)
    """What the last review found missing."""
    progress: Mapped[list | None] = mapped_column(JSON, nullable=True)
    """The progress lines of the run, in order."""
    thread_id: Mapped[str | None] = mapped_column(String(100), nullable=True)
    created_by: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class Run(Base):
    """One answered run: who asked in which thread, when, and when the answer was delivered.

    Written once when the answer has been delivered; the unit of first-answer time and of conversations
    (DESIGN.md §7: one player's runs in one thread, split after an idle gap)."""

    __tablename__ = "runs"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    thread_id: Mapped[str] = mapped_column(String(100))
    player: Mapped[str] = mapped_column(String(100))
    """The asker's audit label (`player:P100`, `discord:9001`, `web:…`)."""
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    """When the player's message started the run."""
    answered_at: Mapped[datetime] = mapped_column(UTCDateTime())
    """When the final answer had been delivered."""
    locale: Mapped[str] = mapped_column(String(8), default="ko")

    __table_args__ = (Index("ix_runs_thread_player_started", "thread_id", "player", "started_at"),)


class RunToolCall(Base):
    """One tool call of a run and its result code (tool errors by code, the tools of a rated answer)."""

    __tablename__ = "run_tool_calls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    tool: Mapped[str] = mapped_column(String(64))
    code: Mapped[str] = mapped_column(String(32))
    ok: Mapped[bool] = mapped_column(Boolean)


class RunCitation(Base):
    """One policy section a run's `search_policy` call returned (top policy sections)."""

    __tablename__ = "run_citations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    section: Mapped[str] = mapped_column(String(200))


FEEDBACK_VOTES = (1, -1)
"""👍 is 1, 👎 is -1."""


class Feedback(Base):
    """A player's vote on one answer: one per (run, player), changeable; with the run's tools and codes."""

    __tablename__ = "feedback"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64))
    thread_id: Mapped[str] = mapped_column(String(100))
    player: Mapped[str] = mapped_column(String(100))
    vote: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)
    tools: Mapped[list | None] = mapped_column(JSON, nullable=True)
    codes: Mapped[list | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    __table_args__ = (UniqueConstraint("run_id", "player", name="uq_feedback_run_player"),)


class StaffLink(Base):
    """A one-time staff console login link: only the SHA-256 of its token is kept."""

    __tablename__ = "staff_links"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    staff_id: Mapped[str] = mapped_column(String(100))
    """The Discord user id of the staff member (`/console`) or the operator's name (`console-link`)."""
    staff_name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class StaffSession(Base):
    """A staff console session opened by a link; the cookie holds a token whose SHA-256 is `token_hash`."""

    __tablename__ = "staff_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf: Mapped[str] = mapped_column(String(64))
    staff_id: Mapped[str] = mapped_column(String(100))
    staff_name: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    user_agent: Mapped[str | None] = mapped_column(String(200), nullable=True)


class StaffOutbox(Base):
    """A staff reply typed in the console, waiting for the channel process that owns its thread to post it."""

    __tablename__ = "staff_outbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(100))
    staff: Mapped[str] = mapped_column(String(100))
    """The name the reply is signed with in the player's channel."""
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    __table_args__ = (Index("ix_staff_outbox_pending", "delivered_at", "thread_id"),)
