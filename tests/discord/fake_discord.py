"""A fake Discord (REST + gateway websocket) on 127.0.0.1 that the unmodified discord.py client talks to.

Only two class attributes of discord.py are redirected by the tests (`discord.http.Route.BASE` and
`discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`); everything else is the real client. The fake keeps
message state (create, edit, delete, reactions), records every REST call with its arrival time, lets a
test inject MESSAGE_CREATE and INTERACTION_CREATE dispatches, and can answer chosen routes with a 429
(with the `Via` header discord.py needs to retry) or a 5xx a given number of times.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1_420_070_400_000

OP_DISPATCH = 0
OP_HEARTBEAT = 1
OP_IDENTIFY = 2
OP_RESUME = 6
OP_HELLO = 10
OP_HEARTBEAT_ACK = 11

EPHEMERAL = 64


def _iso(dt: datetime | None = None) -> str:
    return (dt or datetime.now(UTC)).isoformat()


@dataclass
class FakeUser:
    """A member of the fake guild (or a DM partner)."""

    id: int
    name: str
    bot: bool = False
    roles: list[int] = field(default_factory=list)
    """Role ids in the guild."""

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name,
            "global_name": self.name,
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
        }

    def member_payload(self, *, with_user: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "roles": [str(r) for r in self.roles],
            "joined_at": _iso(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "nick": None,
        }
        if with_user:
            data["user"] = self.payload()
        return data


@dataclass
class Call:
    """One REST request the client made."""

    method: str
    path: str
    """Path below the API base, e.g. `/channels/10/messages`."""
    query: dict[str, str]
    body: Any
    at: float
    """`time.monotonic()` when the request arrived."""
    status: int = 200


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    times: int
    retry_after: float
    via: bool


class FakeDiscord:
    """The fake server. `async with FakeDiscord() as fake:` then point discord.py at `fake.api_base`."""

    TOKEN = "fake-bot-token"
    APP_ID = 700_000_000_000_000_001
    BOT_ID = 700_000_000_000_000_001
    GUILD_ID = 800_000_000_000_000_001
    SUPPORT_CHANNEL = 810_000_000_000_000_001
    GENERAL_CHANNEL = 810_000_000_000_000_002
    STAFF_CHANNEL = 810_000_000_000_000_003
    SUPPORT_THREAD = 810_000_000_000_000_004
    STAFF_ROLE = 820_000_000_000_000_001
    STAFF_ROLE_NAME = "Support Staff"

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
        self.identified: list[dict[str, Any]] = []
        """IDENTIFY payloads received (token, intents…)."""
        self.gateway_queries: list[dict[str, str]] = []
        self.synced_commands: dict[str, list[dict[str, Any]]] = {}
        """`guild:<id>` or `global` → the command payloads of the last sync."""
        self.interactions: dict[str, dict[str, Any]] = {}
        """interaction token → {"callback": …, "original": …, "followups": […]}"""
        self._faults: list[_Fault] = []
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
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        server = site._server  # aiohttp keeps the bound socket here; needed for the ephemeral port
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]
        return self

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

    # ---- world -------------------------------------------------------------------------------

    def add_user(self, user: FakeUser) -> FakeUser:
        self.users[user.id] = user
        return user

    def snowflake(self) -> int:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return (ms << 22) + next(self._ids)

    def _roles(self) -> list[dict[str, Any]]:
        def role(rid: int, name: str, position: int, permissions: int) -> dict[str, Any]:
            return {
                "id": str(rid),
                "name": name,
                "color": 0,
                "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
                "hoist": False,
                "icon": None,
                "unicode_emoji": None,
                "position": position,
                "permissions": str(permissions),
                "managed": False,
                "mentionable": False,
                "flags": 0,
            }

        return [
            role(self.GUILD_ID, "@everyone", 0, 0x0000000000000400 | 0x0000000000000800 | 0x80000000),
            role(self.STAFF_ROLE, self.STAFF_ROLE_NAME, 1, 0x0000000000002000),
        ]

    def _text_channel(self, cid: int, name: str, position: int) -> dict[str, Any]:
        return {
            "id": str(cid),
            "type": 0,
            "guild_id": str(self.GUILD_ID),
            "name": name,
            "position": position,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "rate_limit_per_user": 0,
            "last_message_id": None,
        }

    def _thread(self) -> dict[str, Any]:
        return {
            "id": str(self.SUPPORT_THREAD),
            "type": 11,
            "guild_id": str(self.GUILD_ID),
            "parent_id": str(self.SUPPORT_CHANNEL),
            "owner_id": "9001",
            "name": "ORD001 문의",
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": _iso(),
                "locked": False,
            },
        }

    def channel_payload(self, cid: int) -> dict[str, Any]:
        if cid == self.SUPPORT_THREAD:
            return self._thread()
        names = {
            self.SUPPORT_CHANNEL: "support",
            self.GENERAL_CHANNEL: "general",
            self.STAFF_CHANNEL: "staff",
        }
        if cid in names:
            return self._text_channel(cid, names[cid], list(names).index(cid))
        return {"id": str(cid), "type": 1, "recipients": [], "last_message_id": None}

    def guild_payload(self) -> dict[str, Any]:
        members = [u.member_payload() for u in self.users.values()] + [self.bot_user.member_payload()]
        return {
            "id": str(self.GUILD_ID),
            "name": "Arca Online",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": "42",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "ko",
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "features": [],
            "roles": self._roles(),
            "emojis": [],
            "stickers": [],
            "member_count": len(members),
            "large": False,
            "unavailable": False,
            "joined_at": _iso(),
            "channels": [
                self._text_channel(self.SUPPORT_CHANNEL, "support", 0),
                self._text_channel(self.GENERAL_CHANNEL, "general", 1),
                self._text_channel(self.STAFF_CHANNEL, "staff", 2),
            ],
            "threads": [self._thread()],
            "members": members,
            "presences": [],
            "voice_states": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

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
        deadline = time.monotonic() + within
        while True:
            value = predicate()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {within}s waiting for {what}")
            await asyncio.sleep(0.01)

    # ---- gateway -----------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        self.gateway_queries.append(dict(request.query))
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        try:
            # The client may ask for zlib-stream/zstd-stream: it decompresses binary frames only, so
            # plain text frames are always understood.
            await ws.send_str(json.dumps({"op": OP_HELLO, "d": {"heartbeat_interval": 41_250}}))
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                op = payload.get("op")
                if op == OP_HEARTBEAT:
                    await ws.send_str(json.dumps({"op": OP_HEARTBEAT_ACK}))
                elif op == OP_IDENTIFY:
                    await self._identify(ws, payload["d"])
                elif op == OP_RESUME:
                    await self._send(ws, "RESUMED", {})
        finally:
            if ws in self.sockets:
                self.sockets.remove(ws)
        return ws

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> None:
        self.identified.append(data)
        if data.get("token") not in (self.TOKEN, f"Bot {self.TOKEN}"):
            await ws.close(code=4004, message=b"Authentication failed.")
            return
        ready = {
            "v": 10,
            "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "flags": 0},
            "guilds": [{"id": str(self.GUILD_ID), "unavailable": True}],
            "session_id": f"session-{self.snowflake()}",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.APP_ID), "flags": 0},
            "private_channels": [],
            "relationships": [],
        }
        await self._send(ws, "READY", ready)
        await self._send(ws, "GUILD_CREATE", self.guild_payload())

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        self._seq += 1
        await ws.send_str(json.dumps({"op": OP_DISPATCH, "t": event, "s": self._seq, "d": data}))

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway dispatch to every connected client."""
        if not self.sockets:
            raise AssertionError("no gateway client is connected")
        for ws in list(self.sockets):
            await self._send(ws, event, data)

    # ---- injected traffic --------------------------------------------------------------------

    def _message(
        self,
        channel_id: int,
        author: FakeUser,
        content: str,
        *,
        guild: bool,
        mentions: list[FakeUser] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        mid = self.snowflake()
        msg: dict[str, Any] = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": author.payload(),
            "content": content,
            "timestamp": _iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [
                {**u.payload(), "member": u.member_payload(with_user=False)} for u in mentions or []
            ],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": [],
        }
        if guild:
            msg["guild_id"] = str(self.GUILD_ID)
        msg.update(extra or {})
        return msg

    async def user_says(
        self,
        channel_id: int,
        user_id: int,
        content: str,
        *,
        mention_bot: bool = False,
        dm: bool = False,
    ) -> int:
        """A user posts a message (MESSAGE_CREATE). Returns the message id."""
        author = self.users[user_id]
        mentions = [self.bot_user] if mention_bot else []
        if mention_bot:
            content = f"<@{self.BOT_ID}> {content}"
        msg = self._message(channel_id, author, content, guild=not dm, mentions=mentions)
        self.messages[int(msg["id"])] = msg
        data = dict(msg)
        if not dm:
            data["member"] = author.member_payload(with_user=False)
        await self.dispatch("MESSAGE_CREATE", data)
        return int(msg["id"])

    async def slash(
        self,
        user_id: int,
        channel_id: int,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        sub: str | None = None,
        channel_options: tuple[str, ...] = (),
        known: bool = True,
    ) -> str:
        """A user runs `/name [sub] options…` (INTERACTION_CREATE). Returns the interaction token.

        Option types follow the synced command (integer options are sent as numbers); names listed in
        `channel_options` are channel options whose value is a channel id. `known=False` sends a command
        Discord knows but the bot never synced (a stale client).
        """
        user = self.users[user_id]
        command = self._synced_command(name) if known else {"id": "1", "name": name, "options": []}
        opts_schema = command.get("options", [])
        if sub is not None:
            opts_schema = next(o for o in opts_schema if o["name"] == sub).get("options", [])
        types = {o["name"]: o["type"] for o in opts_schema}
        types.update({k: 3 for k in options or {} if k not in types})
        values = []
        resolved: dict[str, Any] = {}
        for key, value in (options or {}).items():
            kind = types[key]
            if key in channel_options or kind == 7:
                cid = int(value)
                resolved.setdefault("channels", {})[str(cid)] = {
                    **self.channel_payload(cid),
                    "permissions": str((1 << 41) - 1),
                }
                values.append({"type": 7, "name": key, "value": str(cid)})
            else:
                values.append({"type": kind, "name": key, "value": value})
        if sub is not None:
            values = [{"type": 1, "name": sub, "options": values}]
        token = f"itoken-{self.snowflake()}"
        iid = self.snowflake()
        data: dict[str, Any] = {
            "id": command["id"],
            "name": name,
            "type": 1,
            "guild_id": str(self.GUILD_ID),
            "options": values,
        }
        if resolved:
            data["resolved"] = resolved
        payload = {
            "id": str(iid),
            "application_id": str(self.APP_ID),
            "type": 2,
            "token": token,
            "version": 1,
            "guild_id": str(self.GUILD_ID),
            "channel_id": str(channel_id),
            "channel": {**self.channel_payload(channel_id), "permissions": str((1 << 41) - 1)},
            "member": {**user.member_payload(), "permissions": str((1 << 41) - 1)},
            "data": data,
            "app_permissions": str((1 << 41) - 1),
            "locale": "ko",
            "guild_locale": "ko",
            "entitlements": [],
            "attachment_size_limit": 8 * 1024 * 1024,
            "authorizing_integration_owners": {"0": str(self.GUILD_ID)},
            "context": 0,
        }
        self.interactions[token] = {"id": iid, "callback": None, "original": None, "followups": []}
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    def _synced_command(self, name: str) -> dict[str, Any]:
        for commands in self.synced_commands.values():
            for c in commands:
                if c["name"] == name:
                    return c
        raise AssertionError(f"/{name} was never synced; synced: {self.synced_commands}")

    def interaction_texts(self, token: str) -> list[tuple[str, int]]:
        """(content, flags) of everything the bot showed for this interaction, in order."""
        rec = self.interactions[token]
        out: list[tuple[str, int]] = []
        cb = rec["callback"]
        if cb is not None and cb.get("type") == 4:
            d = cb.get("data") or {}
            out.append((d.get("content") or "", int(d.get("flags") or 0)))
        if rec["original"] is not None:
            d = rec["original"]
            out.append((d.get("content") or "", int((cb or {}).get("data", {}).get("flags") or 0)))
        for f in rec["followups"]:
            out.append((f.get("content") or "", int(f.get("flags") or 0)))
        return out

    # ---- REST --------------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        path = unquote(path)
        body: Any = None
        if request.content_type.startswith("multipart/"):
            # Messages with files: discord.py sends `payload_json` plus `files[n]` parts.
            form = await request.post()
            body = json.loads(str(form.get("payload_json") or "{}"))
            body["_files"] = {
                part.filename: part.file.read().decode("utf-8", "replace")
                for part in form.values()
                if hasattr(part, "filename") and hasattr(part, "file")
            }
        elif request.can_read_body:
            raw = await request.read()
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
        call = Call(request.method, path, dict(request.query), body, time.monotonic())
        self.calls.append(call)
        for fault in self._faults:
            if fault.times > 0 and fault.method == request.method and fault.pattern.search(path):
                fault.times -= 1
                call.status = fault.status
                if fault.status == 429:
                    headers = {"Via": "1.1 google"} if fault.via else {}
                    return _json(
                        {
                            "message": "You are being rate limited.",
                            "retry_after": fault.retry_after,
                            "global": False,
                        },
                        status=429,
                        headers=headers,
                    )
                return _json({"message": f"{fault.status}: injected", "code": 0}, status=fault.status)
        auth = request.headers.get("Authorization", "")
        needs_bot_auth = not path.startswith(("/webhooks/", "/interactions/"))
        if needs_bot_auth and auth != f"Bot {self.TOKEN}":
            call.status = 401
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        try:
            status, payload = self._route(request.method, path, body, dict(request.query))
        except KeyError as exc:
            status, payload = 404, {"message": f"Unknown {exc}", "code": 10008}
        call.status = status
        if status == 204:
            return web.Response(status=204)
        return _json(payload, status=status)

    def _route(self, method: str, path: str, body: Any, query: dict[str, str]) -> tuple[int, Any]:
        m = re.fullmatch
        if method == "GET" and path == "/users/@me":
            return 200, {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "flags": 0}
        if method == "GET" and path == "/oauth2/applications/@me":
            return 200, {
                "id": str(self.APP_ID),
                "name": "Arca Support Bot",
                "description": "",
                "icon": None,
                "bot_public": False,
                "bot_require_code_grant": False,
                "owner": self.users[42].payload(),
                "verify_key": "0" * 64,
                "flags": 0,
                "team": None,
            }
        if method == "GET" and path in ("/gateway", "/gateway/bot"):
            return 200, {
                "url": self.gateway_url.rstrip("/"),
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        if method == "PUT" and (hit := m(r"/applications/(\d+)(?:/guilds/(\d+))?/commands", path)):
            key = f"guild:{hit.group(2)}" if hit.group(2) else "global"
            out = []
            for cmd in body or []:
                out.append(
                    {
                        **cmd,
                        "id": str(next(self._command_ids)),
                        "application_id": str(self.APP_ID),
                        "version": "1",
                        **({"guild_id": hit.group(2)} if hit.group(2) else {}),
                    }
                )
            self.synced_commands[key] = out
            return 200, out
        if method == "POST" and (hit := m(r"/channels/(\d+)/messages", path)):
            cid = int(hit.group(1))
            guild = cid in (
                self.SUPPORT_CHANNEL,
                self.GENERAL_CHANNEL,
                self.STAFF_CHANNEL,
                self.SUPPORT_THREAD,
            )
            msg = self._message(cid, self.bot_user, (body or {}).get("content") or "", guild=guild)
            msg["sent_payload"] = body
            self.messages[int(msg["id"])] = msg
            return 200, _public(msg)
        if method == "PATCH" and (hit := m(r"/channels/(\d+)/messages/(\d+)", path)):
            msg = self.messages[int(hit.group(2))]
            if msg.get("deleted"):
                raise KeyError("Message")
            if "content" in (body or {}):
                msg["content"] = body["content"]
            msg["edited_timestamp"] = _iso()
            msg.setdefault("edits", []).append(time.monotonic())
            return 200, _public(msg)
        if method == "DELETE" and (hit := m(r"/channels/(\d+)/messages/(\d+)", path)):
            self.messages[int(hit.group(2))]["deleted"] = True
            return 204, None
        if method == "PUT" and (hit := m(r"/channels/(\d+)/messages/(\d+)/reactions/(.+)/@me", path)):
            self.messages[int(hit.group(2))].setdefault("my_reactions", []).append(hit.group(3))
            return 204, None
        if method == "POST" and m(r"/channels/(\d+)/typing", path):
            return 204, None
        if method == "GET" and (hit := m(r"/channels/(\d+)", path)):
            return 200, self.channel_payload(int(hit.group(1)))
        if method == "POST" and path == "/users/@me/channels":
            uid = int((body or {}).get("recipient_id"))
            dm_id = 830_000_000_000_000_000 + uid
            return 200, {
                "id": str(dm_id),
                "type": 1,
                "recipients": [self.users[uid].payload()],
                "last_message_id": None,
            }
        if method == "POST" and (hit := m(r"/interactions/(\d+)/([^/]+)/callback", path)):
            rec = self.interactions[hit.group(2)]
            rec["callback"] = body
            kind = (body or {}).get("type")
            flags = int(((body or {}).get("data") or {}).get("flags") or 0)
            message = None
            if kind == 4:
                message = self._message(0, self.bot_user, body["data"].get("content") or "", guild=True)
                message["flags"] = flags
                message["webhook_id"] = str(self.APP_ID)
            interaction = {
                "id": str(rec["id"]),
                "type": 2,
                "response_message_id": message["id"] if message else None,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(flags & EPHEMERAL),
            }
            resource: dict[str, Any] = {"type": kind}
            if message is not None:
                resource["message"] = _public(message)
            return 200, {"interaction": interaction, "resource": resource}
        if hit := m(r"/webhooks/(\d+)/([^/]+)/messages/@original", path):
            rec = self.interactions[hit.group(2)]
            if method == "PATCH":
                rec["original"] = body
            msg = self._message(0, self.bot_user, (rec["original"] or {}).get("content") or "", guild=True)
            msg["webhook_id"] = str(self.APP_ID)
            return 200, _public(msg)
        if method == "POST" and (hit := m(r"/webhooks/(\d+)/([^/]+)", path)):
            rec = self.interactions[hit.group(2)]
            rec["followups"].append(body)
            msg = self._message(0, self.bot_user, (body or {}).get("content") or "", guild=True)
            msg["webhook_id"] = str(self.APP_ID)
            msg["flags"] = int((body or {}).get("flags") or 0)
            return 200, _public(msg)
        return 404, {"message": f"fake Discord has no route {method} {path}", "code": 0}


def _public(msg: dict[str, Any]) -> dict[str, Any]:
    """The message as Discord would return it (without the fake's bookkeeping keys)."""
    return {k: v for k, v in msg.items() if k not in ("sent_payload", "edits", "my_reactions", "deleted")}


def _json(payload: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # discord.py parses a body as JSON only when Content-Type is exactly `application/json`.
    return web.Response(
        body=json.dumps(payload, ensure_ascii=False).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
