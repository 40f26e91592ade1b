"""What every route of the one web server shares, the players' and the staff's: their collaborators
(`WebDeps`, read from `app.state.web`) and the JSON error they raise (`WebError`)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request

from bot.conversations import Conversations
from bot.web_kit.identity import IdentityService
from bot.web_kit.readiness import ReadinessProbe, game_probe_from_settings

NO_LLM_MESSAGE = (
    "No LLM is configured: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama / vLLM / "
    "llama.cpp) and restart `arca-bot web`."
)
"""For the operator: the log at start-up and `arca-bot doctor` (never the player's page)."""


class WebError(Exception):
    """An error answered as JSON `{"error": code, "message": ...}` with `status`."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.extra = extra


@dataclass
class WebDeps:
    """Everything the web app needs, built by the caller (`bot.serving.web.startup`, tests)."""

    conversations: Conversations
    identities: IdentityService
    llm_ready: bool = True
    """False: `/api/chat` answers 503 and the page says what to configure."""
    max_message_chars: int = 4_000
    rate_limit: int = 20
    rate_limit_ip: int = 60
    """Anonymous visitors' messages per address (`ARCA_WEB_RATE_LIMIT_IP`)."""
    rate_limit_ip_signed: int = 600
    """Signed-in players' messages per address, all of them together (`ARCA_WEB_RATE_LIMIT_IP_SIGNED`)."""
    rate_window: float = 60.0
    attachment_address_bytes: int = 256 * 1024 * 1024
    """Bytes the anonymous visitors of one address may upload per unsent-upload lifetime
    (`ARCA_ATTACHMENT_ADDRESS_BYTES`)."""
    new_visitors_ip: int = 10
    """New anonymous visitors (requests without a visitor cookie) one address may start per `rate_window`."""
    trusted_proxies: list[str] = field(default_factory=list)
    """`ARCA_WEB_TRUSTED_PROXIES`: addresses whose `X-Forwarded-For` / `-Proto` name the client (uvicorn's
    `forwarded_allow_ips`); none by default, so a client cannot pick the address its limits count."""
    origins: list[str] = field(default_factory=list)
    debug_view: bool = False
    """`ARCA_WEB_DEBUG`: the widget may show step details (`#debug=1`)."""
    secure_cookies: bool = False
    """Set the visitor cookie `Secure; SameSite=None` (the page is embedded cross-site over HTTPS)."""
    conversation_idle_minutes: int = 30
    resolution_window_minutes: int = 60
    """The support analytics' conversation gap and resolution window (`ARCA_CONVERSATION_IDLE_MINUTES`,
    `ARCA_RESOLUTION_WINDOW_MINUTES`), for the console's dashboard: the same figures as `/stats`."""
    index_state: Callable[[], str] = lambda: "ready"
    """`building`, `ready` or `unavailable`: the policy index, for `/healthz` and `/readyz`."""
    game_ready: ReadinessProbe | None = None
    """`/readyz`'s check of the studio's backend (None: orders are not read from it). `from_settings`
    installs an HTTP probe when `ARCA_ORDER_SOURCE=http`; the game connection may pass its own."""
    clock: Callable[[], float] = time.monotonic
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex[:12]
    game_webhook_secrets: tuple[bytes, ...] = field(default=(), repr=False)
    """`ARCA_GAME_WEBHOOK_SECRET` (two during a rotation): `POST /game/v1/events` exists only with one."""
    support_hours: Any = None
    """The staff hours in force (`bot.desk.hours.SupportHours`; None: always in), shown on the dashboard."""
    sla_targets: Any = None
    """The SLA targets (`bot.analytics.staff_response.SlaTargets`; None: the defaults): the console's
    reminders give each one's due time and say whether it was missed."""
    forget_order: Callable[[str], Awaitable[None]] | None = None
    """The order source's `forget(order_id)`, called after a signed `order.upserted` event committed
    (`bot.serving.web.game_events`); None when the source keeps no cache."""

    @classmethod
    def from_settings(
        cls, settings: Any, conversations: Conversations, identities: IdentityService, **kw: Any
    ) -> WebDeps:
        from bot.analytics.staff_response import SlaTargets
        from bot.desk.hours import SupportHours

        return cls(
            conversations=conversations,
            support_hours=SupportHours.from_settings(settings),
            sla_targets=SlaTargets.from_settings(settings),
            identities=identities,
            llm_ready=settings.llm_configured,
            max_message_chars=settings.max_message_chars,
            rate_limit=settings.web_rate_limit,
            rate_limit_ip=settings.web_rate_limit_ip,
            rate_limit_ip_signed=settings.web_rate_limit_ip_signed,
            rate_window=settings.web_rate_window,
            attachment_address_bytes=settings.attachment_address_bytes,
            origins=list(settings.web_origins),
            trusted_proxies=list(settings.web_trusted_proxies),
            conversation_idle_minutes=settings.conversation_idle_minutes,
            resolution_window_minutes=settings.resolution_window_minutes,
            debug_view=settings.web_debug,
            game_webhook_secrets=tuple(getattr(settings, "webhook_secrets", ())),
            secure_cookies=bool(settings.web_public_url and settings.web_public_url.startswith("https://")),
            **{
                "game_ready": game_probe_from_settings(settings),
                # The order source's cache forgets an order a signed event changed (bot.game.orders).
                "forget_order": getattr(
                    getattr(getattr(conversations, "services", None), "orders", None), "forget", None
                ),
                **kw,
            },
        )


def deps_of(request: Request) -> WebDeps:
    return request.app.state.web
