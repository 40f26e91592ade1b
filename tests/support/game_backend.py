"""The reference game backend (examples/game_backend) served by uvicorn on 127.0.0.1 in a thread of its
own, with its own event loop: the bot under test talks to it over real loopback HTTP, and a backend
that hangs (a fault) never stalls the test's loop."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import httpx
import uvicorn

from examples.game_backend.app import create_app

TOKEN = "test-game-token"


class GameBackend:
    """`start()` / `stop()`, or a context manager; `url` is the base URL the bot is configured with."""

    def __init__(self, *, token: str = TOKEN, db_path: str = ":memory:") -> None:
        self.token = token
        self.app = create_app(token=token, db_path=db_path)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> GameBackend:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_config=None, log_level="warning", access_log=False, lifespan="off"
        )
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="game-backend", daemon=True
        )
        self._thread.start()
        for _ in range(500):
            if server.started:
                return self
            threading.Event().wait(0.01)
        raise RuntimeError("the reference game backend did not start")

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> GameBackend:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the admin side (not part of the contract) ----------------------------------------------------

    def _admin(self, method: str, path: str, body: Any = None) -> Any:
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}) as client:
            answer = client.request(method, path, json=body, timeout=10)
            answer.raise_for_status()
            return answer.json()

    def load(self, *, players: list[dict[str, Any]] = (), orders: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        self._admin("POST", "/_admin/world", {"players": list(players), "orders": list(orders)})

    def faults(self, **faults: Any) -> None:
        """Set the faults in force (see examples/game_backend/faults.py); no argument clears them."""
        self._admin("PUT", "/_admin/faults", faults)

    def grants(self) -> dict[str, Any]:
        """`{"grants": [...], "posts": N, "repeats": N}`: what the game applied and how often it was asked."""
        return self._admin("GET", "/_admin/grants")
