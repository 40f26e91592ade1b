"""The buttons under staff-channel notices: Approve / Reject on a coupon approval request and Take over /
Hand back on an escalation card. Each is a persistent `discord.ui.DynamicItem` whose whole state is in its
`custom_id` (the client registers them, `bot.serving.discord_client.client`), so a press still works after a
restart. Only staff may press them: anyone else gets an ephemeral refusal, audited as `staff.denied`.
"""

from __future__ import annotations

import re
from typing import Any

import discord

from bot.discord_kit.members import actor_of, refuse_staff_only
from bot.discord_kit.posting import NO_MENTIONS, tell_thread
from bot.vocabulary import ThreadId
from tools.coupon_staff import approve, reject

CUSTOM_ID_LIMIT = 100


def _fits(prefix: str, thread_id: str | None) -> str:
    """`prefix:thread` when it fits Discord's 100-character custom_id, else `prefix:` (thread unknown)."""
    full = f"{prefix}:{thread_id or ''}"
    return full if len(full) <= CUSTOM_ID_LIMIT else f"{prefix}:"


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
        actor = await actor_of(interaction)
        name = "coupon approve" if self.act == "ok" else "coupon revoke"
        if not actor.is_staff:
            await refuse_staff_only(
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
        actor = await actor_of(interaction)
        name = "handoff" if self.act == "take" else "resume"
        if not actor.is_staff:
            await refuse_staff_only(interaction, actor, name, self.thread_id)
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
