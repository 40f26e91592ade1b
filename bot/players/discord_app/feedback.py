"""The player's buttons under every finished answer: 👍 / 👎 (with an optional comment modal after 👎) and
"Talk to a person" (`person`), and the auto-close notice with the same vote. Each button is a persistent
`discord.ui.DynamicItem` whose whole state is in its `custom_id` (registered by the client,
`bot.serving.discord_client.client`), so a press still works after the bot restarted; only the player an
answer was for may rate it.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.analytics.feedback import MAX_COMMENT_CHARS, FeedbackError, record_vote
from bot.discord_kit.members import actor_of
from bot.discord_kit.posting import NO_MENTIONS, tell_thread
from bot.players.discord_app.person import PersonButton, person_custom_id
from tools.base import Actor

if TYPE_CHECKING:
    from bot.players.discord_app.surface import DiscordSurface

log = logging.getLogger(__name__)

CUSTOM_ID_LIMIT = 100


class FeedbackModal(discord.ui.Modal):
    """The optional comment after 👎; the vote itself was stored when the button was pressed."""

    comment: discord.ui.TextInput[FeedbackModal]

    def __init__(self, run_id: str, thread_id: str | None) -> None:
        super().__init__(title="의견 남기기 / Tell us more", custom_id=f"arca:fbm:{run_id}"[:CUSTOM_ID_LIMIT])
        self.run_id, self.thread_id = run_id, thread_id
        self.comment = discord.ui.TextInput(
            label="무엇이 부족했나요? / What was missing?",
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=MAX_COMMENT_CHARS,
            custom_id="comment",
        )
        self.add_item(self.comment)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        actor = await actor_of(interaction)
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        try:
            await record_vote(
                conv.store,
                run_id=self.run_id,
                player=actor.label,
                vote=-1,
                comment=self.comment.value or None,
            )
        except FeedbackError as exc:
            await interaction.response.send_message(f"⚠ {exc}", ephemeral=True)
            return
        await interaction.response.send_message("의견 감사합니다. / Thanks for the feedback.", ephemeral=True)


class FeedbackButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"arca:fb:(?P<vote>up|down):(?P<run>[^:]{1,64})"
):
    """👍 / 👎 on one answer: only the player it was for may vote; pressing again changes the vote."""

    def __init__(self, vote: str, run_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                emoji="👍" if vote == "up" else "👎",
                style=discord.ButtonStyle.secondary,
                custom_id=f"arca:fb:{vote}:{run_id}",
            )
        )
        self.vote, self.run_id = vote, run_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> FeedbackButton:
        return cls(match["vote"], match["run"])

    async def callback(self, interaction: discord.Interaction) -> None:
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        actor = await actor_of(interaction)
        try:
            await record_vote(
                conv.store, run_id=self.run_id, player=actor.label, vote=1 if self.vote == "up" else -1
            )
        except FeedbackError:
            await interaction.response.send_message(
                "이 답변은 질문하신 분만 평가할 수 있습니다. / Only the player who asked can rate this answer.",
                ephemeral=True,
            )
            return
        if self.vote == "down":
            await interaction.response.send_modal(FeedbackModal(self.run_id, None))
            return
        await interaction.response.send_message("평가 감사합니다! / Thanks for the rating!", ephemeral=True)


def feedback_view(run_id: str, thread_id: str | None = None) -> discord.ui.View:
    """👍 / 👎 under an answer, and "Talk to a person" when the thread id fits a custom_id."""
    view = discord.ui.View(timeout=None)
    view.add_item(FeedbackButton("up", run_id))
    view.add_item(FeedbackButton("down", run_id))
    if thread_id is not None and person_custom_id(thread_id) is not None:
        view.add_item(PersonButton(thread_id))
    return view


async def attach_feedback(
    client: Any, surface: DiscordSurface, thread_id: str, actor: Actor, since: Any
) -> None:
    """Put 👍 / 👎 under the last message of each answer delivered to `actor` in `thread_id` since `since`."""
    from bot.store.conversation_views import latest_run_since

    last = surface.last_sent
    if last is None:
        return
    conv = client.conversations
    run_id = await latest_run_since(conv.store, thread_id, actor.label, since)
    if run_id is None:
        return
    handle, text = last
    try:
        await handle.edit(content=text, view=feedback_view(run_id, thread_id), allowed_mentions=NO_MENTIONS)
    except discord.HTTPException:
        log.warning("could not add the feedback buttons to %s", thread_id)


async def tell_closed(client: Any, thread_id: str, text: str) -> bool:
    """The auto-close notice (`bot.desk.auto_close`) with 👍 / 👎 for the conversation's latest answer,
    recorded like the buttons under any answer; without an answer to rate, the notice alone."""
    from bot.desk.auto_close import latest_run

    run_id = await latest_run(client.conversations.store, thread_id)
    view = None
    if run_id is not None:
        view = discord.ui.View(timeout=None)
        view.add_item(FeedbackButton("up", run_id))
        view.add_item(FeedbackButton("down", run_id))
    return await tell_thread(client, thread_id, text, view)
