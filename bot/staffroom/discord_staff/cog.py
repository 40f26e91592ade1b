"""Staff slash commands: one Cog generated from the `StaffRegistry`, the tree's error handler, and sync.
(The staff channel's posts are `bot.staffroom.discord_staff.channel`.)

Each slash command is built with discord.py's public `app_commands` API from the registry's typed
parameters, and its options reach `StaffRegistry.dispatch_values` typed, so the role check, auditing and
replies are exactly the console's. Replies are ephemeral; a command that takes a while is deferred first.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.conversations.renderer import DISCORD_LIMIT, split_message
from bot.discord_kit.members import role_names
from bot.discord_kit.posting import NO_MENTIONS
from bot.staff import Param, StaffCommand, StaffRegistry, StaffReply
from bot.staff.incidents import PREVIEW_CARD
from bot.vocabulary import ThreadId

if TYPE_CHECKING:
    from bot.conversations import Conversations

log = logging.getLogger(__name__)


GROUP_DESCRIPTIONS = {
    "coupon": "쿠폰 관리 / coupons (staff)",
    "thread": "대화 기록 / conversations (staff)",
    "policy": "정책 / policies (staff)",
    "replies": "저장 답변 / saved replies (staff)",
}

DEFER_AFTER = 2.0
"""A command not declared `slow` that has not answered after this many seconds is deferred (Discord
allows 3 s); a slow one is deferred at once."""

DEFAULT_PERMISSIONS = discord.Permissions(manage_messages=True)
"""Only a hint for the Discord UI (server admins can change it); the staff role is checked in code."""


def thread_id_of_interaction(interaction: discord.Interaction) -> str:
    """The conversation the command was typed in: `discord:<channel_id>`, or `dm:<user_id>` in a DM."""
    if interaction.guild_id is None:
        return ThreadId.dm(interaction.user.id)
    return ThreadId.discord(interaction.channel_id or "")


def slash_values(cmd: StaffCommand, options: dict[str, Any]) -> dict[str, Any]:
    """The slash options as the registry takes them: a channel option becomes its thread id, every
    other value stays as discord.py typed it (an `int` option is an `int`)."""
    values: dict[str, Any] = {}
    for param in cmd.params:
        value = options.get(param.name)
        if param.channel and value is not None:
            value = ThreadId.discord(value.id)
        values[param.name] = value
    return values


def _annotation(param: Param) -> Any:
    if param.channel:
        base: Any = discord.TextChannel | discord.Thread
    elif param.kind is int:
        base = int if param.minimum is None else app_commands.Range[int, param.minimum, None]
    else:
        base = str
    return base | None if param.optional else base


def _describe(text: str, fallback: str) -> str:
    text = (text or fallback).strip() or fallback
    return text if len(text) <= 100 else text[:99] + "…"


async def reply_ephemeral(
    interaction: discord.Interaction, text: str, attachment: tuple[str, str] | None = None
) -> None:
    """Send `text` only to the invoker: the initial response if still open, then followups (≤2,000 chars
    each); an `attachment` (file name, text) — e.g. a long ops draft — goes with the last chunk."""
    chunks = split_message(text or "…", DISCORD_LIMIT)
    for index, chunk in enumerate(chunks):
        extra: dict[str, Any] = {}
        if attachment is not None and index == len(chunks) - 1:
            name, body = attachment
            extra["file"] = discord.File(io.BytesIO(body.encode("utf-8")), filename=name)
        if not interaction.response.is_done():
            await interaction.response.send_message(
                chunk, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra
            )
        else:
            await interaction.followup.send(chunk, ephemeral=True, allowed_mentions=NO_MENTIONS, **extra)


class StaffCommands(commands.Cog, name="Staff"):
    """The staff slash commands, one per registry entry (groups become `app_commands.Group`s), added to
    the bot's command tree when the Cog loads and removed when it unloads."""

    def __init__(
        self,
        bot: commands.Bot,
        conversations: Conversations,
        registry: StaffRegistry | None = None,
        *,
        guilds: Sequence[discord.abc.Snowflake] = (),
        defer_after: float = DEFER_AFTER,
    ) -> None:
        self.bot = bot
        self.conversations = conversations
        self.registry = registry if registry is not None else conversations.staff
        if self.registry is None:
            raise ValueError("Conversations has no staff registry")
        self.guilds = list(guilds)
        self.defer_after = defer_after
        self.slash_commands = self._build()
        """The top-level commands and groups, as added to the tree."""

    async def cog_load(self) -> None:
        for command in self.slash_commands:
            if self.guilds:
                self.bot.tree.add_command(command, guilds=self.guilds)
            else:
                self.bot.tree.add_command(command)

    async def cog_unload(self) -> None:
        for command in self.slash_commands:
            for guild in self.guilds or [None]:
                self.bot.tree.remove_command(command.name, guild=guild)

    # ---- generation -------------------------------------------------------------------------

    def _build(self) -> list[app_commands.Command[Any, ..., Any] | app_commands.Group]:
        groups: dict[str, app_commands.Group] = {}
        top: list[app_commands.Command[Any, ..., Any] | app_commands.Group] = []
        for cmd in self.registry.commands.values():
            _check_order(cmd)
            group = None
            if cmd.group is not None:
                group = groups.get(cmd.group)
                if group is None:
                    group = app_commands.Group(
                        name=cmd.group,
                        description=GROUP_DESCRIPTIONS.get(cmd.group, f"{cmd.group} (staff)"),
                        guild_only=True,
                        default_permissions=DEFAULT_PERMISSIONS,
                    )
                    groups[cmd.group] = group
                    top.append(group)
            command = app_commands.Command(
                name=cmd.leaf,
                description=_describe(cmd.help, cmd.name),
                callback=self._callback(cmd),
                parent=group,
            )
            app_commands.describe(**{p.name: _describe(p.help, p.name) for p in cmd.params})(command)
            for p in cmd.params:
                if p.complete is not None:
                    command.autocomplete(p.name)(self._completer(p))
            if group is None:
                app_commands.guild_only(command)
                if cmd.staff_only and not cmd.open_without_args:  # members see `/link`, `/unlink`
                    app_commands.default_permissions(manage_messages=True)(command)
                top.append(command)
            else:
                group.add_command(command)
        return top

    def _callback(self, cmd: StaffCommand) -> Callable[..., Awaitable[None]]:
        """A callback whose signature declares the registry's parameters: discord.py reads the options
        (their types, which are required) from it."""
        cog = self

        async def callback(interaction: discord.Interaction, **options: Any) -> None:
            await cog.invoke(interaction, cmd, slash_values(cmd, options))

        params = [
            inspect.Parameter(
                "interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=discord.Interaction
            )
        ]
        for p in cmd.params:
            params.append(
                inspect.Parameter(
                    p.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=None if p.optional else inspect.Parameter.empty,
                    annotation=_annotation(p),
                )
            )
        callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return callback

    def _completer(self, param: Param) -> Callable[..., Awaitable[list[app_commands.Choice[str]]]]:
        """Discord's autocomplete for `param`: the registry's suggestions, shown to staff only."""
        cog = self

        async def complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
            user = interaction.user
            actor = await cog.conversations.resolve_actor(str(user.id), role_names(user), user.display_name)
            if not actor.is_staff or param.complete is None:
                return []
            values = await param.complete(cog.conversations, current or "")
            return [app_commands.Choice(name=v[:100], value=v[:100]) for v in values[:25]]

        return complete

    # ---- invocation -------------------------------------------------------------------------

    async def invoke(
        self, interaction: discord.Interaction, cmd: StaffCommand, values: dict[str, Any]
    ) -> None:
        """Run the command with its typed values through the registry; reply ephemerally, deferring when
        slow."""
        work = asyncio.ensure_future(self._dispatch(interaction, cmd, values))
        if cmd.slow:
            await interaction.response.defer(ephemeral=True, thinking=True)
        else:
            done, _ = await asyncio.wait({work}, timeout=self.defer_after)
            if not done:
                await interaction.response.defer(ephemeral=True, thinking=True)
        reply = await work
        await reply_ephemeral(interaction, reply.text, (reply.data or {}).get("attachment"))
        if (reply.data or {}).get("card") == PREVIEW_CARD:
            from bot.staffroom.discord_staff.incidents import post_preview_card  # it imports this module

            await post_preview_card(interaction.channel, reply.data)

    async def _dispatch(
        self, interaction: discord.Interaction, cmd: StaffCommand, values: dict[str, Any]
    ) -> StaffReply:
        user = interaction.user
        actor = await self.conversations.resolve_actor(str(user.id), role_names(user), user.display_name)
        return await self.registry.dispatch_values(
            cmd,
            values,
            actor=actor,
            channel=thread_id_of_interaction(interaction),
            conversations=self.conversations,
        )


def _check_order(cmd: StaffCommand) -> None:
    """Positional text form: once a parameter is optional, every later one must be too."""
    seen_optional = False
    for p in cmd.params:
        if seen_optional and not p.optional:
            raise ValueError(f"/{cmd.name}: required <{p.name}> follows an optional parameter")
        seen_optional = seen_optional or p.optional


class ArcaCommandTree(app_commands.CommandTree):
    """The one place app-command failures end up: a clear ephemeral message, details in the log."""

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        if isinstance(error, app_commands.TransformerError):
            text = (
                f"⚠ 옵션 값을 읽을 수 없습니다({error.value!r}). 다시 선택해 주세요. "
                f"/ Could not read the option value {error.value!r}; pick it again."
            )
        elif isinstance(error, app_commands.CheckFailure):
            text = "⛔ 이 명령을 여기서 실행할 권한이 없습니다. / You cannot run this command here."
        elif isinstance(error, app_commands.CommandNotFound | app_commands.CommandSignatureMismatch):
            text = (
                "⚠ 이 명령은 봇과 동기화되지 않았습니다. 잠시 후 다시 시도해 주세요. "
                "/ This command is out of date with the bot; try again in a minute."
            )
        else:
            original = getattr(error, "original", error)
            log.error(
                "slash command %s failed",
                interaction.command.qualified_name if interaction.command else "?",
                exc_info=original,
            )
            text = (
                f"⚠ 명령을 처리하지 못했습니다 ({type(original).__name__}). 기록을 남겼습니다. "
                f"/ The command failed ({type(original).__name__}); it was logged."
            )
        try:
            await reply_ephemeral(interaction, text)
        except discord.HTTPException:
            log.warning("could not report a slash command error to the user")


async def install_staff_commands(
    bot: commands.Bot, conversations: Conversations, guild_ids: Sequence[int]
) -> StaffCommands:
    """Add the Cog (as guild commands when guilds are configured) and sync once.

    Called from `setup_hook`, which runs once per login, so a reconnect does not re-sync.
    """
    guilds = [discord.Object(id=g) for g in guild_ids]
    cog = StaffCommands(bot, conversations, guilds=guilds)
    await bot.add_cog(cog)
    try:
        if guilds:
            for guild in guilds:
                synced = await bot.tree.sync(guild=guild)
                log.info("synced %d slash commands to guild %s", len(synced), guild.id)
        else:
            synced = await bot.tree.sync()
            log.info("synced %d global slash commands (may take up to an hour to appear)", len(synced))
    except discord.Forbidden:
        log.error(
            "could not sync slash commands: invite the bot with the applications.commands scope "
            '(docs/deploy/discord.md, "1. Create the Discord application") and check ARCA_GUILD_IDS'
        )
    except discord.HTTPException as exc:
        log.error("could not sync slash commands: %s", exc)
    return cog
