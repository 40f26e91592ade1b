"""The one way tests build a tool context (`make_ctx`), and the players they act as."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tools.base import Actor, ToolContext, ToolServices
from tools.coupon_rules import CouponRules

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)
"""2026-03-02 10:00 in Seoul."""

LUNA = Actor(discord_id="9001", player_id="P100", display_name="루나")
SOL = Actor(discord_id="9002", player_id="P200", display_name="솔")
UNLINKED = Actor(discord_id="9009")
STAFF = Actor(discord_id="42", roles=frozenset({"Support Staff"}), is_staff=True)

_call_ids = itertools.count(1)


def make_ctx(
    actor: Actor = LUNA,
    *,
    store: Any = None,
    thread_id: str = "test:thread",
    run_id: str = "run1",
    locale: str = "ko",
    clock: Callable[[], datetime] | None = None,
    rules: CouponRules | None = None,
    notify: Any = None,
    searcher: Any = None,
    services: ToolServices | None = None,
    call_id: str | None = None,
    new_call: bool = False,
) -> ToolContext:
    """A tool context for `actor`. Services are `services`, or the defaults with `rules`, `notify` (staff
    notifier) and `searcher` (policy search) when given. `call_id` binds a call id; `new_call` binds a fresh one (so an
    idempotency key of its own)."""
    extra: dict[str, Any] = {}
    if rules is not None:
        extra["coupon_rules"] = rules
    if notify is not None:
        extra["notify_staff"] = notify
    if searcher is not None:
        extra["policy_search"] = searcher
    ctx = ToolContext(
        actor=actor,
        thread_id=thread_id,
        run_id=run_id,
        store=store,
        locale=locale,
        services=services or ToolServices(**extra),
    )
    if clock is not None:
        ctx = replace(ctx, clock=clock)
    if call_id is None and new_call:
        call_id = f"call_{next(_call_ids)}"
    return ctx.for_call(call_id) if call_id is not None else ctx
