"""Threads and forum posts in the fake Discord, in Discord's API shapes: `POST /channels/{id}/threads`
(a thread without a message; in a forum, a post with its starter message), thread members
(`PUT|GET /channels/{id}/thread-members…`), `PATCH /channels/{id}` (rename, archive, lock) with the
THREAD_CREATE / THREAD_UPDATE dispatches the real gateway sends. As in Discord, a message in a private
thread that mentions a user, or a role its allowed mentions let through, adds them to the thread."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from tests.support.fake_discord.world import _iso

PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
FORUM = 15


class ThreadsMixin:
    """Thread state of `FakeDiscord`: `threads` (id → payload) and `thread_members` (id → user ids)."""

    FORUM_CHANNEL = 810_000_000_000_000_005

    threads: dict[int, dict[str, Any]]
    thread_members: dict[int, set[int]]

    def _init_threads(self) -> None:
        self.threads = {}
        self.thread_members = {}

    # ---- what a test reads ----------------------------------------------------------------------

    def threads_in(self, parent_id: int) -> list[dict[str, Any]]:
        """Threads created under a channel (text channel or forum), oldest first."""
        return [t for t in self.threads.values() if int(t["parent_id"]) == parent_id]

    def members_of(self, thread_id: int) -> set[int]:
        return set(self.thread_members.get(thread_id, set()))

    def can_read(self, user_id: int, channel_id: int) -> bool:
        """Whether the user sees the channel: a private thread only its members and staff (Manage Threads)."""
        thread = self.threads.get(channel_id)
        if thread is None or thread["type"] != PRIVATE_THREAD:
            return True
        user = self.users.get(user_id)
        manages = user is not None and self.STAFF_ROLE in user.roles and self.staff_manage_threads
        return user_id in self.thread_members.get(channel_id, set()) or manages

    threads_on_connect = True
    """List active threads in GUILD_CREATE (off: a client that reconnects knows none of them)."""

    staff_manage_threads = False
    """The staff role's Manage Threads permission (off: staff see a private thread only once added)."""

    # ---- traffic a test injects -----------------------------------------------------------------

    async def user_posts_in_forum(self, forum_id: int, user_id: int, title: str, content: str) -> int:
        """A user opens a forum post (THREAD_CREATE, then its starter message, whose id is the post's)."""
        thread = self._new_thread(forum_id, PUBLIC_THREAD, title, owner=user_id)
        thread_id = int(thread["id"])
        await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        author = self.users[user_id]
        msg = self._message(thread_id, author, content, guild=True, extra={"id": str(thread_id)})
        self.messages[thread_id] = msg
        await self.dispatch("MESSAGE_CREATE", {**msg, "member": author.member_payload(with_user=False)})
        return thread_id

    async def staff_archives(self, thread_id: int) -> None:
        """A person archives the thread in the Discord client (THREAD_UPDATE)."""
        thread = self.threads[thread_id]
        thread["thread_metadata"].update(archived=True, archive_timestamp=_iso())
        await self.dispatch("THREAD_UPDATE", dict(thread))

    async def staff_deletes(self, thread_id: int) -> None:
        """A person deletes the thread (THREAD_DELETE)."""
        thread = self.threads.pop(thread_id)
        self.thread_members.pop(thread_id, None)
        await self.dispatch(
            "THREAD_DELETE",
            {k: thread[k] for k in ("id", "guild_id", "parent_id", "type")},
        )

    # ---- REST -----------------------------------------------------------------------------------

    def _thread_route(self, method: str, path: str, body: Any) -> tuple[int, Any] | None:
        m = re.fullmatch
        if method == "POST" and (hit := m(r"/channels/(\d+)/threads", path)):
            parent = int(hit.group(1))
            body = body or {}
            forum = parent == self.FORUM_CHANNEL
            kind = PUBLIC_THREAD if forum else int(body.get("type") or PRIVATE_THREAD)
            thread = self._new_thread(
                parent, kind, str(body.get("name") or ""), owner=self.BOT_ID, invitable=body.get("invitable")
            )
            self._later("THREAD_CREATE", {**thread, "newly_created": True})
            if forum:  # a forum post is created with its starter message
                starter = (body.get("message") or {}).get("content") or ""
                msg = self._message(int(thread["id"]), self.bot_user, starter, guild=True)
                self.messages[int(msg["id"])] = msg
                return 201, {**thread, "message": msg}
            return 201, thread
        if hit := m(r"/channels/(\d+)/thread-members/(\d+|@me)", path):
            tid = int(hit.group(1))
            if tid not in self.threads:
                raise KeyError("Channel")
            uid = self.BOT_ID if hit.group(2) == "@me" else int(hit.group(2))
            if method == "PUT":
                self.thread_members[tid].add(uid)
                return 204, None
            if method == "DELETE":
                self.thread_members[tid].discard(uid)
                return 204, None
        if method == "GET" and (hit := m(r"/channels/(\d+)/thread-members", path)):
            tid = int(hit.group(1))
            return 200, [
                {"id": str(tid), "user_id": str(u), "join_timestamp": _iso(), "flags": 0}
                for u in sorted(self.thread_members[tid])
            ]
        if method == "PATCH" and (hit := m(r"/channels/(\d+)", path)) and int(hit.group(1)) in self.threads:
            thread = self.threads[int(hit.group(1))]
            body = body or {}
            if "name" in body:
                thread["name"] = body["name"]
            meta = thread["thread_metadata"]
            for key in ("archived", "locked", "auto_archive_duration", "invitable"):
                if key in body:
                    meta[key] = body[key]
            if "archived" in body:
                meta["archive_timestamp"] = _iso()
            self._later("THREAD_UPDATE", dict(thread))
            return 200, dict(thread)
        return None

    def _thread_message_sent(self, thread_id: int, body: dict[str, Any]) -> None:
        """Discord's rule: a message in a private thread adds the users and roles it mentions (as far as
        its allowed mentions let them through) to the thread."""
        thread = self.threads.get(thread_id)
        if thread is None or thread["type"] != PRIVATE_THREAD:
            return
        content = body.get("content") or ""
        allowed = body.get("allowed_mentions") or {"parse": ["users", "roles", "everyone"]}
        parse = set(allowed.get("parse") or [])
        roles = {int(r) for r in allowed.get("roles") or []}
        users = {int(u) for u in allowed.get("users") or []}
        for rid in (int(r) for r in re.findall(r"<@&(\d+)>", content)):
            if "roles" in parse or rid in roles:
                self.thread_members[thread_id] |= {u.id for u in self.users.values() if rid in u.roles}
        for uid in (int(u) for u in re.findall(r"<@!?(\d+)>", content)):
            if ("users" in parse or uid in users) and uid in self.users:
                self.thread_members[thread_id].add(uid)

    def _new_thread(
        self, parent: int, kind: int, name: str, *, owner: int, invitable: Any = None
    ) -> dict[str, Any]:
        tid = self.snowflake()
        meta: dict[str, Any] = {
            "archived": False,
            "auto_archive_duration": 10080,
            "archive_timestamp": _iso(),
            "locked": False,
        }
        if kind == PRIVATE_THREAD:
            meta["invitable"] = bool(invitable) if invitable is not None else True
        thread = {
            "id": str(tid),
            "type": kind,
            "guild_id": str(self.GUILD_ID),
            "parent_id": str(parent),
            "owner_id": str(owner),
            "name": name[:100],
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
            "thread_metadata": meta,
        }
        self.threads[tid] = thread
        self.thread_members[tid] = {owner}
        return thread

    def _later(self, event: str, data: dict[str, Any]) -> None:
        """Dispatch after the REST answer, as the real gateway does."""
        if self.sockets:
            asyncio.get_running_loop().create_task(self.dispatch(event, data))

    def _forum_channel(self) -> dict[str, Any]:
        return {
            "id": str(self.FORUM_CHANNEL),
            "type": FORUM,
            "guild_id": str(self.GUILD_ID),
            "name": "tickets",
            "position": 4,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "rate_limit_per_user": 0,
            "last_message_id": None,
            "flags": 0,
            "available_tags": [],
            "default_reaction_emoji": None,
            "default_thread_rate_limit_per_user": 0,
            "default_sort_order": None,
            "default_forum_layout": 0,
        }

    def _active_threads(self) -> list[dict[str, Any]]:
        """Threads GUILD_CREATE lists: active ones the bot can see (a member, or a public thread)."""
        return [
            t
            for t in self.threads.values()
            if self.threads_on_connect
            and not t["thread_metadata"]["archived"]
            and (t["type"] != PRIVATE_THREAD or self.BOT_ID in self.thread_members[int(t["id"])])
        ]
