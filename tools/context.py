"""Who calls a tool and with what: the actor, the per-call context and the services it may use.

`tools.base` re-exports these names beside the tool declaration and registry, so tools import one seam.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from bot.game.orders import BuiltinOrderSource, OrderSource
from bot.store import Store
from bot.vocabulary.catalogue import say
from tools.coupon_rules import CouponRules, default_coupon_rules


@dataclass(frozen=True)
class Actor:
    """Who is talking. Authority comes from Discord roles and account links only, never from text."""

    discord_id: str | None
    """The Discord user id as a string ("9001"); None for system actors."""
    player_id: str | None = None
    """The linked game account, None when the Discord user has no linked account."""
    roles: frozenset[str] = frozenset()
    """Discord role names of the author in this guild."""
    is_staff: bool = False
    """True when `roles` contains the configured staff role (decided by the channel, not by text)."""
    display_name: str | None = None

    @property
    def label(self) -> str:
        """Audit label: `staff:42`, `player:P100`, `discord:9001`, or a web visitor's `web:<id>`."""
        if self.is_staff:
            return f"staff:{self.discord_id}"
        if self.player_id:
            return f"player:{self.player_id}"
        if self.discord_id is None:
            return self.display_name or "anonymous"
        return f"discord:{self.discord_id}"


class PolicySearcher(Protocol):
    """The knowledge base as the `search_policy` tool sees it."""

    async def search(self, query: str, top_k: int = 3) -> list[Any]: ...


StaffNotifier = Callable[[str, dict[str, Any]], Awaitable[None]]
"""`await notify(kind, payload)`: posts an escalation or approval request to the staff channel."""


@dataclass
class ToolServices:
    """Long-lived collaborators tools may use; injected by whoever builds the context."""

    coupon_rules: CouponRules = field(default_factory=default_coupon_rules)
    """Loaded once from policies/coupon_rules.yaml (the app passes the configured file's rules)."""
    policy_search: PolicySearcher | None = None
    """The policy knowledge base (`bot.knowledge`)."""
    notify_staff: StaffNotifier | None = None
    """Posts escalations and approval requests where staff see them."""
    timezone: str = "Asia/Seoul"
    """Calendar days for daily caps are counted in this zone."""
    away_notice: Callable[[datetime, str], str | None] | None = None
    """`(now, locale)` → when staff return, while they are away (`bot.desk.hours.SupportHours.notice`)."""
    orders: OrderSource | None = None
    """Where orders are read (ARCA_ORDER_SOURCE); None: the builtin table of the context's store."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class RequestTrust:
    """Whether what the player wrote in this run tries to instruct the bot or claims authority (the input
    guard's `untrusted`). One per run, shared by all its calls, so a message that arrives mid-run taints
    the calls after it. A coupon asked for in an untrusted run is never issued automatically: every check
    runs as usual, and one that would be issued waits for staff approval (PENDING_APPROVAL) instead."""

    untrusted: bool = False


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool may touch for one call. Built per run; `for_call` binds the call id."""

    actor: Actor
    thread_id: str
    run_id: str
    store: Store
    locale: str = "ko"
    """Language of the player's latest message: `ko` or `en`."""
    clock: Callable[[], datetime] = _utcnow
    services: ToolServices = field(default_factory=ToolServices)
    tool_call_id: str = ""
    """Unique within the thread; set by the engine through `for_call`."""
    trust: RequestTrust = field(default_factory=RequestTrust)
    question: str = ""
    """The player's message this run answers (the policy search brings its best section along)."""

    @property
    def idempotency_key(self) -> str:
        """thread_id + run id + tool call id: the same call retried never acts twice."""
        return f"{self.thread_id}:{self.run_id}:{self.tool_call_id}"

    @property
    def korean(self) -> bool:
        return self.locale == "ko"

    @property
    def orders(self) -> OrderSource:
        """The order source every order read goes through (`bot.game.orders`)."""
        return self.services.orders or BuiltinOrderSource(self.store)

    def for_call(self, tool_call_id: str) -> ToolContext:
        return replace(self, tool_call_id=tool_call_id)

    def say(self, ko: str, en: str) -> str:
        """Pick the sentence in the conversation's language."""
        return say(self.locale, ko, en)
