"""What the players' Discord parts (messages, outbox, link notices, tickets) need of the client that hosts
them: a Protocol, so they are handed the one client (`bot.serving.discord_client`) without importing it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import discord

    from bot.config import Settings
    from bot.conversations import Conversations
    from bot.sharding import ShardPlan


class SupportClient(Protocol):
    """A logged-in Discord client that answers players: its conversations, settings and shard plan."""

    conversations: Conversations
    settings: Settings
    shard_plan: ShardPlan | None

    def get_channel(self, id: int, /) -> Any: ...

    async def fetch_channel(self, channel_id: int, /) -> Any: ...

    async def create_dm(self, user: discord.abc.Snowflake) -> discord.DMChannel: ...

    def add_listener(self, func: Callable[..., Awaitable[Any]], /, name: str = ...) -> None: ...

    @property
    def user(self) -> discord.ClientUser | None: ...
