"""The fake guild's world: ids, users, roles, channels and the payloads discord.py reads them from."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

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


class FakeWorld:
    """The fixed guild (ids as class attributes) and its users; mixed into `FakeDiscord`."""

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

    users: dict[int, FakeUser]
    bot_user: FakeUser
    _ids: Any
    threads: dict[int, dict[str, Any]]
    FORUM_CHANNEL: int

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
        if cid in self.threads:  # threads and forum posts made through the API (`threads.py`)
            return dict(self.threads[cid])
        if cid == self.FORUM_CHANNEL:
            return self._forum_channel()
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
                self._forum_channel(),
            ],
            "threads": [self._thread(), *self._active_threads()],
            "members": members,
            "presences": [],
            "voice_states": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }
