"""The reference game backend's HTTP API (DESIGN.md §11), the studio's side:

- `GET /orders/{id}`, `GET /players/{id}/orders?limit=N`, `GET /orders?status=…&cursor=…` (orders);
- `POST /grants` with `Idempotency-Key`, `POST /grants/{grant_id}/revoke` (compensation into the game);
- `/_admin/…`: what a test or a demo needs to set the world up and look inside (not part of the contract);
- the signed events it sends to the bot (`events.py`: an order changed, a Discord link code typed in game).

Every route wants `Authorization: Bearer <GAME_BACKEND_TOKEN>`. Run it with
`uvicorn examples.game_backend.app:app` (settings from the environment, see `BackendSettings`) or build
one in a test with `create_app(...)`.
"""

from __future__ import annotations

import asyncio
import hmac
import os
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field

from examples.game_backend.events import EventSender, events_router
from examples.game_backend.faults import FaultBox, Faults, Part
from examples.game_backend.storage import GameStore

Status = Literal["paid", "preparing", "shipping", "delayed", "delivered", "cancelled", "refunded"]


class Order(BaseModel):
    id: str
    player_id: str
    status: Status
    item: str
    amount: int
    currency: str = "KRW"
    ordered_at: str
    """ISO 8601 with offset."""
    updated_at: str
    """ISO 8601 with offset; the bot applies an `order.upserted` event only when it is newer."""


class OrderList(BaseModel):
    orders: list[Order]


class OrderPage(BaseModel):
    orders: list[Order]
    next_cursor: str | None


class Grant(BaseModel):
    grant_id: str = Field(min_length=1, max_length=200)
    player_id: str = Field(min_length=1)
    order_id: str | None = None
    code: str = Field(min_length=1)
    amount: int = Field(gt=0)
    currency: str = "KRW"
    reason: str | None = None
    expires_at: str | None = None


class GrantAnswer(BaseModel):
    grant_id: str
    status: Literal["granted", "revoked"]


class Player(BaseModel):
    id: str
    name: str
    locale: str = "ko"


class World(BaseModel):
    players: list[Player] = []
    orders: list[Order] = []


def create_app(*, token: str, db_path: str = ":memory:") -> FastAPI:
    """The backend; `token` is the bearer token the bot must send."""
    store = GameStore(db_path)
    faults = FaultBox()
    app = FastAPI(title="Arca Online game backend (reference)", version="1.0.0")
    app.state.store = store
    app.state.faults = faults

    # async: a plain `def` dependency would run on the thread pool, one hand-off per request.
    async def authorized(authorization: Annotated[str | None, Header()] = None) -> None:
        given = (authorization or "").removeprefix("Bearer ").encode()
        if (
            not authorization
            or not authorization.startswith("Bearer ")
            or not hmac.compare_digest(given, token.encode())
        ):
            raise HTTPException(401, "bad or missing bearer token")

    async def before(part: Part) -> Response | None:
        """The faults that strike before anything is done; a Response to send instead, or None."""
        if (delay := faults.latency_s(part)) > 0:
            await asyncio.sleep(delay)
        if faults.take(part, "timeout_next"):
            await asyncio.sleep(faults.faults.hang_s)
        if faults.take(part, "rate_limit_next"):
            return JSONResponse(
                {"error": "rate limited"}, 429, headers={"Retry-After": str(faults.faults.retry_after_s)}
            )
        if faults.take(part, "refuse_next"):
            return JSONResponse({"error": faults.faults.refuse_reason}, 422)
        if faults.take(part, "fail_next") or faults.random_error(part):
            return JSONResponse({"error": "temporarily unavailable"}, 503)
        return None

    async def after_commit(part: Part) -> None:
        if faults.take(part, "drop_after_commit_next"):
            await asyncio.sleep(faults.faults.hang_s)

    auth = [Depends(authorized)]

    @app.get("/orders/{order_id}", response_model=Order, dependencies=auth, tags=["orders"])
    async def get_order(order_id: str) -> Any:
        if (early := await before("orders")) is not None:
            return early
        if (body := faults.take_body("orders")) is not None:
            return PlainTextResponse(body, media_type="application/json")
        if faults.take("orders", "malformed_next"):
            return PlainTextResponse("{not json", media_type="application/json")
        order = store.order(order_id)
        if order is None:
            raise HTTPException(404, "no such order")
        return order

    @app.get("/players/{player_id}/orders", response_model=OrderList, dependencies=auth, tags=["orders"])
    async def player_orders(player_id: str, limit: Annotated[int, Query(ge=1, le=100)] = 10) -> Any:
        if (early := await before("orders")) is not None:
            return early
        if (body := faults.take_body("orders")) is not None:
            return PlainTextResponse(body, media_type="application/json")
        return {"orders": store.player_orders(player_id, limit)}

    @app.get("/orders", response_model=OrderPage, dependencies=auth, tags=["orders"])
    async def search_orders(
        status: Status | None = None,
        updated_after: str | None = None,
        updated_before: str | None = None,
        cursor: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 500,
    ) -> Any:
        if (early := await before("orders")) is not None:
            return early
        if (body := faults.take_body("orders")) is not None:
            return PlainTextResponse(body, media_type="application/json")
        page, next_cursor = store.search_orders(
            status=status, after=updated_after, before=updated_before, cursor=cursor, limit=limit
        )
        return {"orders": page, "next_cursor": next_cursor}

    @app.post("/grants", response_model=GrantAnswer, dependencies=auth, tags=["grants"])
    async def post_grant(
        grant: Grant, response: Response, idempotency_key: Annotated[str, Header(alias="Idempotency-Key")]
    ) -> Any:
        if idempotency_key != grant.grant_id:
            raise HTTPException(422, "Idempotency-Key must equal grant_id")
        if (early := await before("grants")) is not None:
            return early
        response.status_code = 201 if store.grant(grant.model_dump()) else 200
        await after_commit("grants")
        return {"grant_id": grant.grant_id, "status": "granted"}

    @app.post("/grants/{grant_id}/revoke", response_model=GrantAnswer, dependencies=auth, tags=["grants"])
    async def revoke_grant(grant_id: str) -> Any:
        if (early := await before("grants")) is not None:
            return early
        if store.revoke(grant_id) is None:
            raise HTTPException(404, "no such grant")
        await after_commit("grants")
        return {"grant_id": grant_id, "status": "revoked"}

    # -- not part of the contract: setting the world up and looking inside, for tests and demos --------

    admin = {"dependencies": auth, "include_in_schema": False}

    @app.post("/_admin/world", **admin)
    async def load_world(world: World) -> dict[str, int]:
        for player in world.players:
            store.upsert_player(player.model_dump())
        store.upsert_orders([o.model_dump() for o in world.orders])
        return {"players": len(world.players), "orders": len(world.orders)}

    @app.put("/_admin/faults", **admin)
    async def set_faults(new: Faults) -> Faults:
        faults.set(new)
        return new

    @app.get("/_admin/grants", **admin)
    async def list_grants() -> dict[str, Any]:
        posts = store.posts()
        return {
            "grants": store.grants(),
            "posts": len(posts),
            "repeats": sum(p["answered"] != "granted" for p in posts),
        }

    # The events it signs and sends to the bot (`events.py`): an order changed, a link code typed in game.
    app.state.events = EventSender.from_env()
    app.include_router(events_router(store, auth))

    @app.post("/_admin/reset", **admin)
    async def reset(request: Request) -> dict[str, str]:
        store.reset()
        faults.set(Faults())
        return {"status": "reset"}

    return app


class BackendSettings(BaseModel):
    """`GAME_BACKEND_TOKEN` (required), `GAME_BACKEND_DB` (default `game_backend.db`)."""

    token: str
    db_path: str = "game_backend.db"

    @classmethod
    def from_env(cls) -> BackendSettings:
        token = os.environ.get("GAME_BACKEND_TOKEN", "").strip()
        if not token:
            raise SystemExit("GAME_BACKEND_TOKEN is required (the bearer token the bot sends)")
        return cls(token=token, db_path=os.environ.get("GAME_BACKEND_DB", "game_backend.db"))


def __getattr__(name: str) -> Any:  # `uvicorn examples.game_backend.app:app` builds it from the environment
    if name == "app":
        settings = BackendSettings.from_env()
        return create_app(token=settings.token, db_path=settings.db_path)
    raise AttributeError(name)
