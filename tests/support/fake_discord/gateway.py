"""The fake gateway (websocket): HELLO/IDENTIFY/READY, and the dispatches a test injects (messages,
slash-command interactions)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.fake_discord.world import (
    OP_DISPATCH,
    OP_HEARTBEAT,
    OP_HEARTBEAT_ACK,
    OP_HELLO,
    OP_IDENTIFY,
    OP_RESUME,
    FakeUser,
    _iso,
)


class GatewayMixin:
    """The websocket side of `FakeDiscord`."""

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
        files: list[tuple[str, bytes]] | None = None,
    ) -> int:
        """A user posts a message (MESSAGE_CREATE), with `files` (name, bytes) attached as Discord does:
        metadata in the message, the bytes served from a CDN-like URL. Returns the message id."""
        author = self.users[user_id]
        mentions = [self.bot_user] if mention_bot else []
        if mention_bot:
            content = f"<@{self.BOT_ID}> {content}"
        msg = self._message(channel_id, author, content, guild=not dm, mentions=mentions)
        for name, data in files or []:
            aid = self.snowflake()
            path = f"/attachments/{channel_id}/{aid}/{name}"
            self.files[path] = data
            url = f"http://{self.host}:{self.port}{path}"
            msg["attachments"].append(
                {"id": str(aid), "filename": name, "size": len(data), "url": url, "proxy_url": url}
            )
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
        data: dict[str, Any] = {
            "id": command["id"],
            "name": name,
            "type": 1,
            "guild_id": str(self.GUILD_ID),
            "options": values,
        }
        if resolved:
            data["resolved"] = resolved
        token, payload = self._interaction(user_id, channel_id, 2, data)
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def autocomplete(
        self, user_id: int, channel_id: int, name: str, option: str, typed: str, *, sub: str | None = None
    ) -> str:
        """A user types `typed` into the string option `option` of `/name [sub]` (an autocomplete
        interaction, type 4). Returns the token; `autocomplete_choices(token)` reads the answer."""
        command = self._synced_command(name)
        values: list[dict[str, Any]] = [{"type": 3, "name": option, "value": typed, "focused": True}]
        if sub is not None:
            values = [{"type": 1, "name": sub, "options": values}]
        data = {
            "id": command["id"],
            "name": name,
            "type": 1,
            "guild_id": str(self.GUILD_ID),
            "options": values,
        }
        token, payload = self._interaction(user_id, channel_id, 4, data)
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    def autocomplete_choices(self, token: str) -> list[dict[str, Any]] | None:
        """The choices the bot answered an autocomplete with (callback type 8); None before it answered."""
        cb = self.interactions[token]["callback"]
        if cb is None or cb.get("type") != 8:
            return None
        return list((cb.get("data") or {}).get("choices") or [])

    def _interaction(
        self, user_id: int, channel_id: int, kind: int, data: dict[str, Any], **extra: Any
    ) -> tuple[str, dict]:
        """An INTERACTION_CREATE payload of `kind` (2 slash command, 3 component, 5 modal submit) in a guild
        channel."""
        user = self.users[user_id]
        token = f"itoken-{self.snowflake()}"
        iid = self.snowflake()
        payload = {
            "id": str(iid),
            "application_id": str(self.APP_ID),
            "type": kind,
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
            **extra,
        }
        self.interactions[token] = {
            "id": iid,
            "type": kind,
            "callback": None,
            "original": None,
            "followups": [],
        }
        return token, payload

    async def press(self, user_id: int, message_id: int, custom_id: str) -> str:
        """A user presses the button `custom_id` under a message (a component interaction). Returns its token."""
        from tests.support.fake_discord.rest import _public

        msg = self.messages[message_id]
        ids = [c.get("custom_id") for row in msg.get("components") or [] for c in row.get("components", [])]
        assert custom_id in ids, f"no button {custom_id} under message {message_id}: {ids}"
        token, payload = self._interaction(
            user_id,
            int(msg["channel_id"]),
            3,
            {"custom_id": custom_id, "component_type": 2},
            message=_public(msg),
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    async def submit_modal(
        self, user_id: int, channel_id: int, custom_id: str, values: dict[str, str]
    ) -> str:
        """A user submits the modal `custom_id` with text-input values (a modal-submit interaction)."""
        rows = [
            {"type": 1, "components": [{"type": 4, "custom_id": k, "value": v}]} for k, v in values.items()
        ]
        token, payload = self._interaction(
            user_id, channel_id, 5, {"custom_id": custom_id, "components": rows}
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    def buttons(self, message_id: int) -> list[str]:
        """The custom_ids of the buttons currently under a message."""
        msg = self.messages[message_id]
        return [c.get("custom_id") for row in msg.get("components") or [] for c in row.get("components", [])]

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
