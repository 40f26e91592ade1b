"""The bot's web server with the game's event endpoint on (`ARCA_GAME_WEBHOOK_SECRET`), over real HTTP on
loopback, and a client that signs what it posts the way a studio's backend does (DESIGN.md §11.3)."""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bot.app import App, build_app
from bot.config import load_settings
from bot.game.events import SIGNATURE_HEADER, signature_header
from bot.llm.scripted import ScriptedLLM
from bot.serving.web.app import WebDeps, create_app
from bot.serving.web.startup import WebServer
from bot.store import Store
from bot.web_kit.identity import IdentityService
from examples.game_backend.events import EventSender
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.discord import BotHarness, Running
from tests.support.fake_discord import FakeDiscord
from tests.support.game_backend import GameBackend

SECRET = "whsec-test-0123456789abcdef"
NEXT_SECRET = "whsec-next-fedcba9876543210"
WEB_SECRET = "test-secret-for-the-web-channel-0123456789"
EVENTS = "/game/v1/events"


def event(kind: str, data: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
    return {
        "id": event_id or f"evt_{uuid.uuid4().hex[:16]}",
        "type": kind,
        "created_at": "2026-12-06T12:00:00+00:00",
        "data": data,
    }


def order(
    order_id: str = "ORD777", *, updated_at: str, status: str = "shipping", player: str = "P100"
) -> dict:
    return {
        "id": order_id,
        "player_id": player,
        "status": status,
        "item": "월간 패키지",
        "amount": 33000,
        "currency": "KRW",
        "ordered_at": "2026-12-01T09:00:00+09:00",
        "updated_at": updated_at,
    }


@dataclass
class EventsServer:
    app: App
    server: WebServer
    deps: WebDeps
    clients: list[httpx.AsyncClient] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def store(self) -> Store:
        return self.app.store

    def client(self) -> httpx.AsyncClient:
        client = httpx.AsyncClient(base_url=self.url, timeout=20)
        self.clients.append(client)
        return client

    async def post(
        self,
        body: dict[str, Any] | bytes,
        *,
        secret: str | None = SECRET,
        timestamp: int | None = None,
        header: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """POST `body` (a dict is sent as JSON) signed with `secret` at `timestamp` (now by default);
        `header` replaces the signature header; `secret=None` sends none."""
        raw = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if header is not None:
            sent[SIGNATURE_HEADER] = header
        elif secret is not None:
            t = int(time.time()) if timestamp is None else timestamp
            sent[SIGNATURE_HEADER] = signature_header(secret.encode(), raw, t)
        return await self.client().post(EVENTS, content=raw, headers=sent)


async def start_events_server(
    store: Store, data_dir: Path, *, secret: str | None = SECRET, **deps_fields: Any
) -> EventsServer:
    env: dict[str, Any] = {"ARCA_DATA_DIR": str(data_dir), "ARCA_WEB_SECRET": WEB_SECRET}
    if secret is not None:
        env["ARCA_GAME_WEBHOOK_SECRET"] = secret
    settings = load_settings(**env)
    app = await build_app(settings, store=store, policy_index=EmptyPolicyIndex(), llm_factory=lambda: None)
    deps = WebDeps.from_settings(settings, app.conversations, IdentityService(WEB_SECRET), **deps_fields)
    server = await WebServer(create_app(deps), "127.0.0.1", 0).start()
    return EventsServer(app, server, deps)


async def stop_events_server(events: EventsServer) -> None:
    for client in events.clients:
        await client.aclose()
    await events.server.stop()


CODE = re.compile(r"\b[2-9A-HJ-NP-Z]{5}-[2-9A-HJ-NP-Z]{5}\b")
"""A link code as `/link` shows it."""


@dataclass
class LinkingWorld:
    """A player's whole path: the bot on the fake Discord and its web server (events on) on one app, and
    the reference game backend that signs and sends the `account.link` event when a code is typed."""

    fake: FakeDiscord
    running: Running
    web: WebServer
    backend: GameBackend

    @property
    def store(self) -> Store:
        return self.running.app.store

    async def ask_code(self, user_id: int, channel: int = FakeDiscord.SUPPORT_CHANNEL) -> tuple[str, int]:
        """`/link` with no argument: the (text, flags) of the bot's answer."""
        token = await self.fake.slash(user_id, channel, "link")
        [answer] = await self.fake.wait_for(lambda: self.fake.interaction_texts(token), what="/link's answer")
        return answer

    async def code_for(self, user_id: int) -> str:
        text, _ = await self.ask_code(user_id)
        match = CODE.search(text)
        assert match is not None, text
        return match.group(0)

    async def type_in_game(self, code: str, player_id: str) -> dict[str, Any]:
        """The player enters `code` in the game: the backend sends `account.link`; the bot's answer."""
        async with httpx.AsyncClient(
            base_url=self.backend.url, headers={"Authorization": f"Bearer {self.backend.token}"}, timeout=20
        ) as client:
            answer = await client.post("/_admin/link", json={"code": code, "player_id": player_id})
            answer.raise_for_status()
            return answer.json()["bot"]

    async def linked_player(self, user_id: int) -> str | None:
        return await self.store.players.id_for_discord(str(user_id))


async def start_linking_world(harness: BotHarness, backend: GameBackend) -> LinkingWorld:
    settings = harness.settings(ARCA_GAME_WEBHOOK_SECRET=SECRET, ARCA_WEB_SECRET=WEB_SECRET)
    running = await harness.start(ScriptedLLM([]), settings=settings)  # no conversation is expected
    deps = WebDeps.from_settings(settings, running.app.conversations, IdentityService(WEB_SECRET))
    web = await WebServer(create_app(deps), "127.0.0.1", 0).start()
    backend.app.state.events = EventSender(f"{web.url}{EVENTS}", SECRET)
    return LinkingWorld(harness.fake, running, web, backend)
