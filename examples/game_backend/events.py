"""The reference backend's side of the bot's signed events (DESIGN.md §11.3): it signs each event with
the shared secret and posts it to the bot, and two admin routes stand for what happens in the game —

- `PUT /_admin/orders/{order_id}`: an order changes (a support agent, the shop, a refund); the new
  order is stored and sent as `order.upserted`;
- `POST /_admin/link` `{"code", "player_id"}`: the player typed their Discord link code in the game;
  it is sent as `account.link`, and the bot's answer is passed back (what the game would show).

Settings from the environment: `ARCA_BOT_EVENTS_URL` (e.g. `http://127.0.0.1:8080/game/v1/events`) and
`ARCA_GAME_WEBHOOK_SECRET` (the bot's secret; during a rotation the sender signs with the first one).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field


def sign(secret: bytes, body: bytes, timestamp: int) -> str:
    """The `X-Arca-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>." + body>`."""
    digest = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class EventSender:
    """Posts events to the bot. Without a URL or a secret it sends nothing (the bot is not connected)."""

    def __init__(self, url: str | None, secret: str | None) -> None:
        self.url = url
        self._secret = secret.encode() if secret else None
        self.sent: list[dict[str, Any]] = []
        """Every event posted, with the bot's answer (what a studio would log)."""

    @classmethod
    def from_env(cls) -> EventSender:
        secrets = os.environ.get("ARCA_GAME_WEBHOOK_SECRET", "").split(",")
        return cls(os.environ.get("ARCA_BOT_EVENTS_URL") or None, secrets[0].strip() or None)

    def __repr__(self) -> str:  # never the secret
        return f"EventSender(url={self.url!r})"

    async def send(
        self, event_type: str, data: dict[str, Any], *, event_id: str | None = None
    ) -> dict[str, Any]:
        """Sign and post one event; `{"status_code", "body"}` of the bot's answer."""
        if self.url is None or self._secret is None:
            raise HTTPException(
                409, "the bot is not connected: set ARCA_BOT_EVENTS_URL and ARCA_GAME_WEBHOOK_SECRET"
            )
        event = {
            "id": event_id or f"evt_{uuid.uuid4().hex}",
            "type": event_type,
            "created_at": datetime.now(UTC).isoformat(),
            "data": data,
        }
        body = json.dumps(event, ensure_ascii=False).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Arca-Signature": sign(self._secret, body, int(time.time())),
        }
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.post(self.url, content=body, headers=headers)
        try:
            payload = answer.json()
        except ValueError:
            payload = {"error": answer.text[:200]}
        result = {"status_code": answer.status_code, "body": payload}
        self.sent.append({"event": event, "answer": result})
        return result


class OrderChange(BaseModel):
    """The fields of an order to change; the rest are kept."""

    status: str | None = None
    item: str | None = None
    amount: int | None = None
    player_id: str | None = None


class LinkTyped(BaseModel):
    code: str = Field(min_length=1, max_length=64)
    player_id: str = Field(min_length=1, max_length=32)


def events_router(store: Any, dependencies: list[Any]) -> APIRouter:
    """The two admin routes; the sender is `app.state.events` (replaceable by a test or a demo)."""
    router = APIRouter(dependencies=dependencies, include_in_schema=False)

    @router.put("/_admin/orders/{order_id}")
    async def change_order(order_id: str, change: OrderChange, request: Request) -> dict[str, Any]:
        order = store.order(order_id)
        if order is None:
            raise HTTPException(404, "no such order")
        order.update({k: v for k, v in change.model_dump().items() if v is not None})
        order["updated_at"] = datetime.now(UTC).isoformat()  # microseconds: two changes never tie
        store.upsert_orders([order])
        sender: EventSender = request.app.state.events
        bot = await sender.send("order.upserted", order) if sender.url else None
        return {"order": order, "bot": bot}

    @router.post("/_admin/link")
    async def player_typed_code(typed: LinkTyped, request: Request) -> dict[str, Any]:
        sender: EventSender = request.app.state.events
        return {"bot": await sender.send("account.link", typed.model_dump())}

    return router
