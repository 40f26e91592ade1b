"""`DiscordSurface`: the `Surface` a run shows its reply on in one Discord channel — the status line and
the answer as messages it sends and edits, "typing…" while the status line is shown, ephemeral replies by
DM — and `_discord_call`, which turns Discord's failures into `SurfaceError`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

import aiohttp
import discord

from bot.conversations.renderer import DISCORD_LIMIT, split_message
from bot.conversations.surface import ChannelTraits, SurfaceBase, SurfaceError
from bot.discord_kit.posting import NO_MENTIONS

log = logging.getLogger(__name__)


TYPING_REFRESH = 8.0
"""Discord's typing indicator lasts about 10 s per request."""
TYPING_MAX = 300.0
"""Never show "typing…" longer than this, whatever happens to the run."""

T = TypeVar("T")


async def _discord_call(awaitable: Awaitable[T]) -> T:
    """Turn Discord/network failures into `SurfaceError`, on which the Renderer sends a new message.

    discord.py has already retried 429s (with `Via`) and 500/502/504 by the time an error gets here.
    """
    try:
        return await awaitable
    except discord.HTTPException as exc:
        raise SurfaceError(f"Discord HTTP {exc.status}: {exc.text or exc}") from exc
    except (discord.RateLimited, aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise SurfaceError(f"{type(exc).__name__}: {exc}") from exc


class DiscordSurface(SurfaceBase):
    """The Renderer's Surface over one channel; messages are the handles it edits. While the status line
    is shown (a tool runs), Discord shows "typing…"; answer text ends it.

    `author` is who the incoming message came from: ephemeral replies (text-form staff commands typed
    into a channel) go to them by DM, since a plain channel message cannot be ephemeral.
    """

    traits = ChannelTraits(max_chars=DISCORD_LIMIT, buttons=True, ephemeral=True, deletes=True)

    def __init__(
        self,
        channel: discord.abc.Messageable,
        *,
        author: discord.abc.User | None = None,
        typing: bool = True,
    ) -> None:
        self.channel = channel
        self.author = author
        self.typing = typing
        self._typing_task: asyncio.Task[None] | None = None
        self.last_sent: tuple[Any, str] | None = None

    async def status(self, text: str, handle: Any | None) -> discord.Message:
        self._start_typing()
        return await self._post(text, handle)

    async def send(self, text: str) -> discord.Message:
        self.stop_typing()
        return await self._post(text, None)

    async def edit(self, handle: Any, text: str) -> None:
        self.stop_typing()
        await self._post(text, handle)

    async def _post(self, text: str, handle: Any | None) -> discord.Message:
        """A new message when `handle` is None, else an edit of it."""
        if handle is None:
            handle = await _discord_call(self.channel.send(text, allowed_mentions=NO_MENTIONS))
        else:
            await _discord_call(handle.edit(content=text, allowed_mentions=NO_MENTIONS))
        self.last_sent = (handle, text)  # the feedback buttons go under the answer's last message
        return handle

    async def delete(self, handle: Any) -> None:
        await _discord_call(handle.delete())

    async def react(self, ref: Any, emoji: str) -> None:
        if isinstance(ref, discord.Message):
            await _discord_call(ref.add_reaction(emoji))

    async def ephemeral(self, text: str) -> None:
        chunks = split_message(text or "…", DISCORD_LIMIT)
        if self.author is not None and not isinstance(self.channel, discord.DMChannel):
            try:
                for chunk in chunks:
                    await self.author.send(chunk, allowed_mentions=NO_MENTIONS)
                return
            except discord.Forbidden:
                log.info("DMs closed for %s; replying in the channel instead", self.author.id)
            except discord.HTTPException as exc:
                raise SurfaceError(f"Discord HTTP {exc.status}: {exc.text or exc}") from exc
        for chunk in chunks:
            await _discord_call(self.channel.send(chunk, allowed_mentions=NO_MENTIONS))

    def _start_typing(self) -> None:
        if self.typing and (self._typing_task is None or self._typing_task.done()):
            self._typing_task = asyncio.create_task(self._keep_typing())

    async def _keep_typing(self) -> None:
        for _ in range(int(TYPING_MAX // TYPING_REFRESH)):
            try:
                await self.channel.typing()
            except (discord.HTTPException, aiohttp.ClientError, OSError) as exc:
                log.debug("typing indicator failed: %s", exc)
            await asyncio.sleep(TYPING_REFRESH)

    @property
    def is_typing(self) -> bool:
        """Discord shows "typing…" for this reply now (a status line is shown)."""
        return self._typing_task is not None and not self._typing_task.done()

    def stop_typing(self) -> None:
        if self._typing_task is not None:
            self._typing_task.cancel()
            self._typing_task = None
