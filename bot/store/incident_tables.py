"""The incident tables: a declared incident (notice, scope, compensation plan) and the targets its bulk
compensation excluded, with why. The coupons themselves live in the ledger (`coupons`), each under the
idempotency key `incident:<id>:<order|player>:<target>`, so the ledger's unique index decides "once".
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.models import Base, UTCDateTime, utcnow

INCIDENT_STATUSES = ("open", "closed")
COMPENSATION_STATES = ("previewed", "approved", "done", "cancelled")
"""`previewed`: a plan waits for approval; `approved`: issuing (or interrupted, resumable); `done`."""


class Incident(Base):
    """One declared incident: what players are told, whom it affects and how they are compensated."""

    __tablename__ = "incidents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(String(200))
    notice_ko: Mapped[str] = mapped_column(Text)
    """The player-facing notice in Korean (the model's source of facts while the incident is open)."""
    notice_en: Mapped[str] = mapped_column(Text, default="")
    notice_version: Mapped[int] = mapped_column(Integer, default=1)
    """Bumped by every `/incident update`: conversations read the current text at each run."""
    status: Mapped[str] = mapped_column(String(16), default="open", index=True)
    scope: Mapped[str] = mapped_column(Text, default='{"kind": "all"}')
    """The scope as JSON text (`bot.incidents.scope.Scope`); text, so every store path reads it alike."""
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_by: Mapped[str] = mapped_column(String(100))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    comp_per: Mapped[str | None] = mapped_column(String(8), nullable=True)
    """`order` (a coupon per affected order) or `player` (one per affected player); None: no plan."""
    comp_amount: Mapped[int | None] = mapped_column(Integer, nullable=True)
    comp_budget: Mapped[int | None] = mapped_column(Integer, nullable=True)
    comp_player_cap: Mapped[int | None] = mapped_column(Integer, nullable=True)
    comp_state: Mapped[str | None] = mapped_column(String(16), nullable=True)
    comp_approved_by: Mapped[str | None] = mapped_column(String(100), nullable=True)


class IncidentExclusion(Base):
    """A target the bulk compensation left out, and why (`bot.incidents.compensation.EXCLUSION_REASONS`)."""

    __tablename__ = "incident_exclusions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    target: Mapped[str] = mapped_column(String(100))
    """The order id (per order) or the player id (per player)."""
    player_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    order_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    reason: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (UniqueConstraint("incident_id", "target", name="uq_incident_exclusion_target"),)


class IncidentPost(Base):
    """An incident's notice as posted in one opted-in Discord channel: posted once (the unique key holds
    across processes and restarts), then edited whenever the notice or the status changes."""

    __tablename__ = "incident_posts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    channel_id: Mapped[str] = mapped_column(String(32))
    message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """None while the post is claimed but not yet sent (or its send failed: the next round sends it)."""
    revision: Mapped[str] = mapped_column(String(32), default="")
    """`<notice_version>:<status>` the message shows; a different one means: edit it."""
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (UniqueConstraint("incident_id", "channel_id", name="uq_incident_post_channel"),)


class IncidentDelivery(Base):
    """A conversation told what an incident's compensation gave it, through the staff outbox: once per
    (incident, conversation), whichever process or restart gets there."""

    __tablename__ = "incident_deliveries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    thread_id: Mapped[str] = mapped_column(String(100))
    player_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    outbox_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (UniqueConstraint("incident_id", "thread_id", name="uq_incident_delivery_thread"),)


class IncidentNoticeAnswer(Base):
    """A delivered answer that relayed an open incident's notice (pinned in its run) without calling
    `incident_status`: its conversation asked about the incident, so it is told its compensation."""

    __tablename__ = "incident_notice_answers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    incident_id: Mapped[int] = mapped_column(Integer, index=True)
    run_id: Mapped[str] = mapped_column(String(64))
    """The run (`runs.run_id`, written in the same transaction) whose answer relayed the notice."""
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    __table_args__ = (UniqueConstraint("incident_id", "run_id", name="uq_incident_notice_answer_run"),)


INCIDENT_TABLES = ("incidents", "incident_exclusions")
