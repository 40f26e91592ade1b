"""The incident compensation card in Discord: `/incident compensate <id> <plan>` posts the preview as an
embed (players, orders, total, exclusions by reason, the rules the grant overrides) with persistent
Approve / Cancel buttons. Approve runs the resumable bulk grant through the staff registry and the card
is edited with its progress (read from the store, `bot.incidents.progress`) at a paced interval, then
with the final figures. The buttons keep their state in the custom_id, so a press works after a restart;
only staff may press them, and the ledger's keys make a second press issue nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any

import discord

from bot.discord_kit.members import actor_of, refuse_staff_only
from bot.discord_kit.posting import NO_MENTIONS
from bot.incidents import RunProgress, progress
from bot.store.incident_grant import EXCLUSION_REASONS
from bot.vocabulary import ThreadId
from bot.vocabulary.rule_names import coupon_rule_words

log = logging.getLogger(__name__)

PROGRESS_FIELD = "진행 / Progress"
MIN_EDIT_INTERVAL = 0.1
"""Seconds between two progress edits at the least (the pace is twice the answer-stream edit interval)."""
COLOR_PREVIEW, COLOR_RUNNING, COLOR_DONE, COLOR_CANCELLED = 0x5865F2, 0xFEE75C, 0x57F287, 0x99AAB5


def progress_lines(step: RunProgress) -> str:
    return f"{step.bar()}\n{step.text()}"


def preview_embed(data: dict[str, Any]) -> discord.Embed:
    """The preview card from the command's reply data (`bot.staff.incidents.cmd_compensate`)."""
    per = "주문당 / per order" if data.get("per") == "order" else "플레이어당 / per player"
    embed = discord.Embed(
        title=f"🛠 장애 #{data['id']} 보상 미리보기 / Compensation preview",
        description=f"{data.get('title') or ''}\n{data['amount']:,}원 {per}",
        color=COLOR_PREVIEW,
    )
    embed.add_field(name="플레이어 / Players", value=f"{data['players']:,}")
    embed.add_field(name="주문 / Orders", value=f"{data['orders']:,}")
    embed.add_field(name="합계 / Total", value=f"{data['total']:,}원")
    if data.get("budget") is not None:
        embed.add_field(name="예산 / Budget", value=f"{data['budget']:,}원")
    if data.get("player_cap") is not None:
        embed.add_field(name="플레이어당 한도 / Per-player cap", value=f"{data['player_cap']:,}원")
    excluded = data.get("excluded") or {}
    lines = [
        f"{n:,} · {EXCLUSION_REASONS.get(r, r)}" for r, n in sorted(excluded.items(), key=lambda x: -x[1])
    ]
    embed.add_field(name="제외 / Excluded", value="\n".join(lines) or "없음 / none", inline=False)
    overrides = data.get("overrides") or []
    embed.add_field(
        name="적용하지 않는 규칙 / Rules overridden",
        value=", ".join(f"{coupon_rule_words(o, 'ko')} (`{o}`)" for o in overrides) or "없음 / none",
        inline=False,
    )
    if data.get("refused"):
        embed.add_field(name="승인 불가 / Cannot approve", value=str(data["refused"]), inline=False)
    embed.set_footer(text="승인 대기 / waiting for approval")
    return embed


def with_progress(
    embed: discord.Embed, text: str, *, footer: str | None = None, color: int | None = None
) -> discord.Embed:
    """The card with its progress field set to `text` (added once, then replaced)."""
    out = embed.copy()
    for index, f in enumerate(out.fields):
        if f.name == PROGRESS_FIELD:
            out.set_field_at(index, name=PROGRESS_FIELD, value=text, inline=False)
            break
    else:
        out.add_field(name=PROGRESS_FIELD, value=text, inline=False)
    if footer is not None:
        out.set_footer(text=footer)
    if color is not None:
        out.colour = discord.Colour(color)
    return out


class IncidentButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"arca:inc:(?P<act>ok|no):(?P<id>[0-9]{1,12})"
):
    """Approve (`ok`) or Cancel (`no`) the previewed compensation of incident `id`."""

    def __init__(self, act: str, incident_id: int, label: str | None = None) -> None:
        approve_it = act == "ok"
        super().__init__(
            discord.ui.Button(
                label=label or ("승인 / Approve" if approve_it else "취소 / Cancel"),
                style=discord.ButtonStyle.success if approve_it else discord.ButtonStyle.secondary,
                custom_id=f"arca:inc:{act}:{incident_id}",
            )
        )
        self.act, self.incident_id = act, incident_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str], /
    ) -> IncidentButton:
        return cls(match["act"], int(match["id"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        conv = interaction.client.conversations  # type: ignore[attr-defined]
        user = interaction.user
        actor = await actor_of(interaction)
        channel = ThreadId.discord(interaction.channel_id or "")
        if not actor.is_staff:
            await refuse_staff_only(interaction, actor, "incident compensate", channel)
            return
        await interaction.response.defer()
        message = interaction.message
        card = message.embeds[0] if message is not None and message.embeds else discord.Embed()
        plan = "approve" if self.act == "ok" else "cancel"
        run = asyncio.ensure_future(
            conv.staff.dispatch_values(
                conv.staff.commands["incident compensate"],
                {"id": self.incident_id, "plan": plan},
                actor=actor,
                channel=channel,
                conversations=conv,
                on_card=True,
            )
        )
        if self.act == "no":
            reply = await run
            if reply.ok and message is not None:
                done = with_progress(
                    card,
                    f"❌ 취소됨 / Cancelled — <@{user.id}>",
                    footer="취소됨 / cancelled",
                    color=COLOR_CANCELLED,
                )
                await _edit(message, embed=done, view=None)
            await interaction.followup.send(reply.text, ephemeral=True, allowed_mentions=NO_MENTIONS)
            return
        if message is not None:  # while the run goes on, only Resume stays (a crash mid-run is resumed here)
            running = with_progress(
                card, f"⏳ 승인됨 — <@{user.id}>", footer="발급 중 / issuing", color=COLOR_RUNNING
            )
            await _edit(message, embed=running, view=resume_view(self.incident_id))
            card = running
        interval = max(2 * conv.edit_interval, MIN_EDIT_INTERVAL)
        while not run.done():
            await asyncio.wait({run}, timeout=interval)
            if run.done() or message is None:
                break
            step = await progress(conv.store, self.incident_id)
            if step is not None:
                card = with_progress(card, progress_lines(step))
                await _edit(message, embed=card)
        reply = await run
        step = await progress(conv.store, self.incident_id)
        if message is not None and step is not None:
            final = with_progress(
                card,
                f"{progress_lines(step)}\n{reply.text}"[:1024],
                footer=("완료 / done" if reply.ok else "실패 / failed")
                + f" · 승인 / approved by {actor.label}",
                color=COLOR_DONE if reply.ok else COLOR_CANCELLED,
            )
            await _edit(message, embed=final, view=None)
        await interaction.followup.send(reply.text[:2000], ephemeral=True, allowed_mentions=NO_MENTIONS)


async def _edit(message: discord.Message, **changes: Any) -> None:
    with contextlib.suppress(discord.HTTPException):  # a lost edit is caught up by the next one
        await message.edit(allowed_mentions=NO_MENTIONS, **changes)


def resume_view(incident_id: int) -> discord.ui.View:
    """Under a running card: pressing it after a crash or a restart resumes the run (the ledger's keys
    keep what was issued; a press while it runs only runs the remainder alongside, issuing nothing twice)."""
    view = discord.ui.View(timeout=None)
    view.add_item(IncidentButton("ok", incident_id, label="재개 / Resume"))
    return view


def preview_view(incident_id: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(IncidentButton("ok", incident_id))
    view.add_item(IncidentButton("no", incident_id))
    return view


async def post_preview_card(channel: Any, data: dict[str, Any]) -> discord.Message | None:
    """Post the preview card (with Approve / Cancel unless the plan cannot be approved) into `channel`."""
    if channel is None:
        return None
    extra: dict[str, Any] = {} if data.get("refused") else {"view": preview_view(int(data["id"]))}
    try:
        return await channel.send(embed=preview_embed(data), allowed_mentions=NO_MENTIONS, **extra)
    except discord.HTTPException:
        log.exception("could not post the preview card of incident %s", data.get("id"))
        return None
