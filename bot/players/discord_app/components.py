"""Persistent Discord buttons: Approve / Reject on a coupon approval request, Take over /
Hand back on an escalation card, Approve / Cancel on an incident's compensation card (`bot.staffroom.discord_staff.incidents`), and 👍 / 👎 (with an optional comment modal) on every finished answer.

Every button is a `discord.ui.DynamicItem` whose whole state is in its `custom_id`, registered in
`setup_hook`, so a press still works after the bot restarted. A press is answered (or deferred) at once,
well inside Discord's 3-second window. Staff-only buttons check the configured staff role in code; anyone
else gets an ephemeral refusal and the attempt is audited (`staff.denied`).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.analytics.feedback import MAX_COMMENT_CHARS, FeedbackError, record_vote
from bot.players.discord_app.person import PersonButton, person_custom_id
from bot.staffroom.discord_staff.cog import role_names
from bot.staffroom.discord_staff.incidents import IncidentButton
from bot.vocabulary import ThreadId
from tools.base import Actor
from tools.coupon_staff import approve, reject

if TYPE_CHECKING:
    from bot.players.discord_app.surface import DiscordSurface

log = logging.getLogger(__name__)

CUSTOM_ID_LIMIT = 100
NO_MENTIONS = discord.AllowedMentions.none()


def _fits(prefix: str, thread_id: str | None) -> str:
    """`prefix:thread` when it fits Discord's 100-character custom_id, else `prefix:` (thread unknown)."""
    full = f"{prefix}:{thread_id or ''}"
    return full if len(full) <= CUSTOM_ID_LIMIT else f"{prefix}:"


async def _actor(interaction: discord.Interaction) -> Actor:
    conv = interaction.client.conversations  # type: ignore[attr-defined]
    user = interaction.user
    return await conv.resolve_actor(str(user.id), role_names(user), user.display_name)


async def _refuse(interaction: discord.Interaction, actor: Actor, name: str, channel: str) -> None:
    conv = interaction.client.conversations  # type: ignore[attr-defined]
    await interaction.response.send_message(
        f"⛔ 이 버튼은 운영진({conv.staff_role}) 전용입니다. / This button is for staff ({conv.staff_role}) only.",
        ephemeral=True,
    )
    # The same audit row as a refused staff command (`staff.denied`).
    await conv.store.audit(
        actor=actor.label, action="staff.denied", thread_id=channel, target=f"/{name}", code="DENIED"
    )


async def tell_thread(
    client: Any, thread_id: str | None, text: str, view: discord.ui.View | None = None
) -> bool:
    """Post `text` into the player's conversation (a Discord channel or DM) and keep it in its memory."""
    if not thread_id:
        return False
    extra: dict[str, Any] = {} if view is None else {"view": view}
    conv = client.conversations
    tid = ThreadId(thread_id)
    ident = tid.snowflake
    try:
        if tid.kind == "discord" and ident is not None:
            channel = client.get_channel(ident) or await client.fetch_channel(ident)
            await channel.send(text, allowed_mentions=NO_MENTIONS, **extra)
        elif tid.kind == "dm" and ident is not None:
            user = client.get_user(ident) or await client.fetch_user(ident)
            await user.send(text, allowed_mentions=NO_MENTIONS, **extra)
    except discord.HTTPException:
        log.exception("could not tell %s the outcome", thread_id)
    await conv.memory.append(thread_id, {"role": "assistant", "content": text}, kind="notice")
    return True


# ---- Approve / Reject -----------------------------------------------------------------------------


class ApprovalButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"arca:ap:(?P<act>ok|no):(?P<order>[^:]{1,40}):(?P<thread>.*)",
):
    """Approve (`ok`) or Reject (`no`) the order's pending coupon; the ledger transition runs once."""

    def __init__(self, act: str, order_id: str, thread_id: str | None) -> None:
        approve_it = act == "ok"
        super().__init__(
            discord.ui.Button(
                label="승인 / Approve" if approve_it else "거절 / Reject",
                style=discord.ButtonStyle.success if approve_it else discord.ButtonStyle.danger,
                custom_id=_fits(f"arca:ap:{act}:{order_id}", thread_id),
            )
        )
        self.act, self.order_id, self.thread_id = act, order_id, thread_id or None

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> ApprovalButton:
        return cls(match["act"], match["order"], match["thread"] or None)

    async def callback(self, interaction: discord.Interaction) -> None:
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        actor = await _actor(interaction)
        name = "coupon approve" if self.act == "ok" else "coupon revoke"
        if not actor.is_staff:
            await _refuse(
                interaction, actor, name, self.thread_id or ThreadId.discord(interaction.channel_id or "")
            )
            return
        await interaction.response.defer()
        change = approve if self.act == "ok" else reject
        kwargs: dict[str, Any] = {} if self.act == "ok" else {"reason": "rejected with the button"}
        result = await change(
            conv.store,
            actor=actor,
            order_id=self.order_id,
            thread_id=self.thread_id,
            now=conv.clock(),
            timezone=conv.services.timezone,
            **kwargs,
        )
        if not result.ok:
            await interaction.followup.send(f"[{result.code}] {result.message}", ephemeral=True)
            return
        # Discord's own timestamp markup: each reader sees it in their time zone and language.
        when = discord.utils.format_dt(conv.clock(), "f")
        verdict = "✅ 승인됨 / Approved" if self.act == "ok" else "❌ 거절됨 / Rejected"
        content = (interaction.message.content if interaction.message else "") or ""
        if interaction.message is not None:
            await interaction.message.edit(
                content=f"{content}\n{verdict} — <@{interaction.user.id}> · {when}",
                view=None,
                allowed_mentions=NO_MENTIONS,
            )
        await interaction.followup.send(f"[{result.code}] {result.message}", ephemeral=True)
        if self.act == "ok":
            told = (
                f"✅ 운영진이 주문 {self.order_id}의 쿠폰을 승인했습니다. 쿠폰함을 확인해 주세요. / "
                f"Staff approved the coupon for order {self.order_id}."
            )
        else:
            told = (
                f"운영진 검토 결과 주문 {self.order_id}의 쿠폰은 발급되지 않았습니다. / "
                f"After review, staff did not approve the coupon for order {self.order_id}."
            )
        await tell_thread(interaction.client, self.thread_id, told)


# ---- Take over / Hand back ------------------------------------------------------------------------


class HandoffButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"arca:ho:(?P<act>take|back):(?P<thread>.+)"
):
    """Take over (= `/handoff <thread>`) or Hand back (= `/resume <thread>`), through the staff registry."""

    def __init__(self, act: str, thread_id: str) -> None:
        take = act == "take"
        super().__init__(
            discord.ui.Button(
                label="이어받기 / Take over" if take else "봇에게 넘기기 / Hand back",
                style=discord.ButtonStyle.primary if take else discord.ButtonStyle.secondary,
                custom_id=f"arca:ho:{act}:{thread_id}",
            )
        )
        self.act, self.thread_id = act, thread_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> HandoffButton:
        return cls(match["act"], match["thread"])

    async def callback(self, interaction: discord.Interaction) -> None:
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        actor = await _actor(interaction)
        name = "handoff" if self.act == "take" else "resume"
        if not actor.is_staff:
            await _refuse(interaction, actor, name, self.thread_id)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        # This card is the handoff's card: the command's notice says so and no second card is posted.
        reply = await conv.staff.dispatch_values(
            conv.staff.commands[name],
            {"channel": self.thread_id},
            actor=actor,
            channel=self.thread_id,
            conversations=conv,
            on_card=True,
        )
        if reply.ok and interaction.message is not None:
            # The card shows who took (or handed back) the conversation and offers the other step.
            content = interaction.message.content or ""
            step = "🙋 이어받음 / Taken over" if self.act == "take" else "🤖 봇에게 넘김 / Handed back"
            next_act = "back" if self.act == "take" else "take"
            view = discord.ui.View(timeout=None)
            view.add_item(HandoffButton(next_act, self.thread_id))
            await interaction.message.edit(
                content=f"{content}\n{step} — <@{interaction.user.id}>"[:2000],
                view=view,
                allowed_mentions=NO_MENTIONS,
            )
        await interaction.followup.send(reply.text, ephemeral=True)


# ---- 👍 / 👎 on answers ---------------------------------------------------------------------------


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
        actor = await _actor(interaction)
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
        actor = await _actor(interaction)
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


# ---- views and registration -------------------------------------------------------------------------

DYNAMIC_ITEMS = (ApprovalButton, HandoffButton, FeedbackButton, PersonButton, IncidentButton)


def register_components(client: discord.Client) -> None:
    """Make every persistent button answer presses, including on messages sent before a restart."""
    client.add_dynamic_items(*DYNAMIC_ITEMS)


def staff_notice_view(kind: str, payload: dict[str, Any]) -> discord.ui.View | None:
    """The buttons under a staff-channel notice: Approve / Reject, or Take over / Hand back."""
    view = discord.ui.View(timeout=None)
    thread_id = payload.get("thread_id")
    if kind == "approval" and payload.get("order_id"):
        order = str(payload["order_id"])
        view.add_item(ApprovalButton("ok", order, thread_id))
        view.add_item(ApprovalButton("no", order, thread_id))
        return view
    if kind == "escalation" and thread_id and len(f"arca:ho:take:{thread_id}") <= CUSTOM_ID_LIMIT:
        view.add_item(HandoffButton("take", thread_id))
        view.add_item(HandoffButton("back", thread_id))
        return view
    if kind == "handoff" and thread_id and len(f"arca:ho:back:{thread_id}") <= CUSTOM_ID_LIMIT:
        view.add_item(HandoffButton("back", thread_id))
        return view
    return None


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
