"""What the web channel's routes share: their collaborators (`WebDeps`), the JSON error they raise, the
chat request body and the registry of open event streams."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from pydantic import BaseModel, Field

from bot.conversations import Conversations
from bot.players.web.readiness import ReadinessProbe, game_probe_from_settings
from bot.players.web.widget.identity import IdentityService

THREAD_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
HISTORY_LIMIT = 200

NO_LLM_MESSAGE = (
    "No LLM is configured: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama / vLLM / "
    "llama.cpp) and restart `arca-bot web`."
)
"""For the operator: the log at start-up and `arca-bot doctor` (never the player's page)."""
NO_LLM_PLAYER_MESSAGE = (
    "지금은 답변할 수 없어요. 잠시 후 다시 시도하시거나 상담원 연결을 요청해 주세요. / "
    "We can't answer right now. Please try again later or ask to be put through to our support team."
)


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


class ChatRequest(BaseModel):
    thread: str = Field(
        pattern=THREAD_PATTERN, description="The conversation's name on this page, e.g. `main`."
    )
    message: str = Field(description="What the player wrote.")
    attachments: list[str] = Field(
        default_factory=list, max_length=10, description="Ids of files uploaded to `/api/attachments`."
    )


@dataclass
class WebDeps:
    """Everything the web app needs, built by the caller (`runner.py`, tests)."""

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
    (`bot.players.web.game_events`); None when the source keeps no cache."""

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
