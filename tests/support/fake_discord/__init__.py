"""A fake Discord (REST + gateway websocket) on 127.0.0.1 that the unmodified discord.py client talks to.

Only two class attributes of discord.py are redirected by the tests and benchmarks (`discord.http.Route.BASE` and
`discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`); everything else is the real client. The fake keeps
message state (create, edit, delete, reactions), records every REST call with its arrival time, lets a
test inject MESSAGE_CREATE and INTERACTION_CREATE dispatches, and can answer chosen routes with a 429
(with the `Via` header discord.py needs to retry) or a 5xx a given number of times.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bench.polling import poll_until
from tests.support.fake_discord.gateway import GatewayMixin
from tests.support.fake_discord.rest import RestMixin
from tests.support.fake_discord.threads import ThreadsMixin
from tests.support.fake_discord.world import EPHEMERAL, Call, FakeUser, FakeWorld, _Fault

__all__ = ["EPHEMERAL", "Call", "FakeDiscord", "FakeUser"]


class FakeDiscord(FakeWorld, GatewayMixin, RestMixin, ThreadsMixin):
    """The fake server. `async with FakeDiscord() as fake:` then point discord.py at `fake.api_base`."""

    def __init__(self, *, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._ids = itertools.count(1)
        self.bot_user = FakeUser(self.BOT_ID, "Arca", bot=True)
        self.users: dict[int, FakeUser] = {}
        self.calls: list[Call] = []
        self.messages: dict[int, dict[str, Any]] = {}
        """message id → current payload (content, channel_id, reactions, deleted)."""
        self.sockets: list[web.WebSocketResponse] = []
        self.files: dict[str, bytes] = {}
        """Attachment path (`/attachments/<channel>/<id>/<name>`) → bytes, served like Discord's CDN."""
        self.downloads: list[str] = []
        """Attachment paths the bot fetched, in order."""
        self.identified: list[dict[str, Any]] = []
        """IDENTIFY payloads received (token, intents…)."""
        self.gateway_queries: list[dict[str, str]] = []
        self.synced_commands: dict[str, list[dict[str, Any]]] = {}
        """`guild:<id>` or `global` → the command payloads of the last sync."""
        self.interactions: dict[str, dict[str, Any]] = {}
        """interaction token → {"callback": …, "original": …, "followups": […]}"""
        self._faults: list[_Fault] = []
        self._init_threads()
        self._seq = 0
        self._command_ids = itertools.count(900_000_000_000_000_001)
        self.add_user(FakeUser(9001, "루나"))
        self.add_user(FakeUser(9002, "카이"))
        self.add_user(FakeUser(9009, "stranger"))
        self.add_user(FakeUser(42, "staffer", roles=[self.STAFF_ROLE]))
        self.add_user(FakeUser(5555, "OtherBot", bot=True))

    # ---- lifecycle ---------------------------------------------------------------------------

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/gateway/"

    async def start(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gateway/", self._gateway)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{tail:.*}", self._attachment)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        server = site._server  # aiohttp keeps the bound socket here; needed for the ephemeral port
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def _attachment(self, request: web.Request) -> web.Response:
        self.downloads.append(request.path)
        data = self.files.get(request.path)
        if data is None:
            return web.Response(status=404)
        return web.Response(body=data, content_type="application/octet-stream")

    async def stop(self) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- faults and observation --------------------------------------------------------------

    def fail(
        self,
        method: str,
        path_pattern: str,
        *,
        status: int = 500,
        times: int = 1,
        retry_after: float = 0.05,
        via: bool = True,
    ) -> None:
        """Answer the next `times` matching requests (regex on the path) with `status`."""
        self._faults.append(_Fault(method.upper(), re.compile(path_pattern), status, times, retry_after, via))

    def calls_to(self, method: str, path_pattern: str = ".*") -> list[Call]:
        rx = re.compile(path_pattern)
        return [c for c in self.calls if c.method == method.upper() and rx.search(c.path)]

    def channel_messages(self, channel_id: int, *, author_id: int | None = None) -> list[dict[str, Any]]:
        """Messages currently in the channel (not deleted), oldest first."""
        out = [
            m for m in self.messages.values() if int(m["channel_id"]) == channel_id and not m.get("deleted")
        ]
        if author_id is not None:
            out = [m for m in out if int(m["author"]["id"]) == author_id]
        return sorted(out, key=lambda m: int(m["id"]))

    def bot_messages(self, channel_id: int) -> list[dict[str, Any]]:
        return self.channel_messages(channel_id, author_id=self.BOT_ID)

    def reactions_on(self, message_id: int) -> list[str]:
        return list(self.messages[message_id].get("my_reactions", []))

    async def wait_for(
        self, predicate: Callable[[], Any], *, within: float = 10.0, what: str = "condition"
    ) -> Any:
        """Poll until `predicate()` (sync or async) is truthy; fail the test with `what` after `within` seconds."""
        return await poll_until(predicate, within=within, what=what)
