"""The "상담원 연결 / Talk to a person" button under every answer: a press escalates the conversation
through `Conversations.request_person` (the same path as the words), with no model call.

A `discord.ui.DynamicItem` whose state (the thread id) is its `custom_id`, so it works after a restart.
"""

from __future__ import annotations

import logging
import re

import discord

from bot.discord_kit.members import role_names
from bot.discord_kit.posting import NO_MENTIONS
from bot.vocabulary.language import detect_language

log = logging.getLogger(__name__)

PERSON_PREFIX = "arca:person:"
REQUEST_WORDS = {"ko": "상담원 연결", "en": "talk to a person"}
"""What the press stands for in the thread's memory and the staff summary, in the answer's language."""


def person_custom_id(thread_id: str) -> str | None:
    """The button's custom_id, or None when the thread id does not fit Discord's 100 characters."""
    custom_id = f"{PERSON_PREFIX}{thread_id}"
    return custom_id if len(custom_id) <= 100 else None


class PersonButton(discord.ui.DynamicItem[discord.ui.Button], template=r"arca:person:(?P<thread>.+)"):
    """Escalate this conversation for whoever pressed it; the notice is posted in the conversation."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label="상담원 연결 / Talk to a person",
                emoji="🙋",
                style=discord.ButtonStyle.secondary,
                custom_id=f"{PERSON_PREFIX}{thread_id}",
            )
        )
        self.thread_id = thread_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> PersonButton:
        return cls(match["thread"])

    async def callback(self, interaction: discord.Interaction) -> None:
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        await interaction.response.defer()  # inside Discord's 3 s; the escalation may take longer
        user = interaction.user
        actor = await conv.resolve_actor(str(user.id), role_names(user), user.display_name)
        answered = interaction.message.content if interaction.message is not None else ""
        words = REQUEST_WORDS[detect_language(answered or "")]
        asked = await conv.request_person(self.thread_id, actor, words)
        try:
            await interaction.followup.send(asked.reply, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException:
            log.exception("could not post the person-request notice in %s", self.thread_id)
