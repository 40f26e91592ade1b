"""The fake REST API: every request recorded with its arrival time, injected faults (429 with `Via`,
5xx), and the routes discord.py uses for messages, reactions, channels, commands and interactions."""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from tests.support.fake_discord.world import EPHEMERAL, Call, _iso


class RestMixin:
    """The HTTP side of `FakeDiscord`."""

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
        if (routed := self._thread_route(method, path, body)) is not None:
            return routed
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
            guild = (
                cid
                in (
                    self.SUPPORT_CHANNEL,
                    self.GENERAL_CHANNEL,
                    self.STAFF_CHANNEL,
                    self.SUPPORT_THREAD,
                )
                or cid in self.threads
            )
            msg = self._message(cid, self.bot_user, (body or {}).get("content") or "", guild=guild)
            self._thread_message_sent(cid, body or {})
            msg["sent_payload"] = body
            msg["components"] = (body or {}).get("components") or []
            msg["embeds"] = (body or {}).get("embeds") or []
            self.messages[int(msg["id"])] = msg
            return 200, _public(msg)
        if method == "PATCH" and (hit := m(r"/channels/(\d+)/messages/(\d+)", path)):
            msg = self.messages[int(hit.group(2))]
            if msg.get("deleted"):
                raise KeyError("Message")
            if "content" in (body or {}):
                msg["content"] = body["content"]
            if "components" in (body or {}):
                msg["components"] = body["components"] or []
            if "embeds" in (body or {}):
                msg["embeds"] = body["embeds"] or []
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
            rec.setdefault("callbacks", []).append(body)
            kind = (body or {}).get("type")
            flags = int(((body or {}).get("data") or {}).get("flags") or 0)
            message = None
            if kind == 4:
                message = self._message(0, self.bot_user, body["data"].get("content") or "", guild=True)
                message["flags"] = flags
                message["webhook_id"] = str(self.APP_ID)
            interaction = {
                "id": str(rec["id"]),
                "type": rec.get("type", 2),
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
