"""`/link` and `/unlink` (DESIGN.md §8, §11.4): one `/link` command whose arguments are optional —
without them any member gets a one-time code to enter in the game (self-service), with them it is
staff's override that moves a link (role-checked by the registry before the arguments are read);
`/unlink` removes the member's own link. Every change is audited."""

from __future__ import annotations

import re
from typing import Any

from bot.game.linking import NOT_IN_DISCORD, code_text, request_code, unlink, unlinked_text
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply
from bot.store import Player
from bot.store.game_events import write_session
from bot.store.link_codes import link_account
from bot.vocabulary import ThreadId
from bot.vocabulary.particles import particle

_DISCORD_USER = re.compile(r"<@!?([0-9]{1,20})>|([0-9]{1,20})")
"""A mention or a bare id, in ASCII digits (`²³` and `٩٠٠٢` are digits to Python, not Discord ids)."""

_DISCORD_KINDS = ("discord", "dm")
"""Threads typed in from Discord: only there does the actor's Discord id belong to the person typing."""


async def cmd_link(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    """Without arguments: the member's own one-time code. With them: staff's override."""
    if args.get("discord_user_id") is None and args.get("player_id") is None:
        return await self_service_code(inv)
    if args.get("discord_user_id") is None or args.get("player_id") is None:
        return StaffReply(f"⚠ missing <discord_user_id> or <player_id>. Usage: {inv.command.usage}", ok=False)
    return await staff_link(inv, args["discord_user_id"], args["player_id"])


async def self_service_code(inv: Invocation) -> StaffReply:
    conv = inv.conversations
    discord_id = inv.actor.discord_id
    if discord_id is None or ThreadId(inv.channel).kind not in _DISCORD_KINDS:
        return StaffReply(NOT_IN_DISCORD, ok=False)
    issued = await request_code(conv.store, discord_id, inv.channel, conv.clock())
    await conv.store.audit(
        actor=inv.actor.label,
        action="link.code_requested",
        thread_id=inv.channel,
        target=discord_id,
        code="OK" if issued.code is not None else "RATE_LIMITED",
    )
    return StaffReply(code_text(issued), ok=issued.code is not None)


async def staff_link(inv: Invocation, raw_user: str, raw_player: str) -> StaffReply:
    """Link a Discord user to a player, moving an existing link (staff only: the registry checked)."""
    conv = inv.conversations
    raw, pid = raw_user.strip(), raw_player.strip()
    match = _DISCORD_USER.fullmatch(raw)
    if match is None:
        return StaffReply(
            f"⚠ <discord_user_id> must be a Discord user id (digits 0-9), got {raw!r}", ok=False
        )
    discord_id = match.group(1) or match.group(2)
    async with write_session(conv.store) as s:
        if await s.get(Player, pid) is None:  # staff link known players; the game's events create them
            return StaffReply(
                f"플레이어 {particle(pid, '을/를')} 찾을 수 없습니다. / No player {pid}.", ok=False
            )
        change = await link_account(s, discord_id, pid)
        await conv.store.audit(
            actor=inv.actor.label,
            action="link",
            thread_id=inv.channel,
            target=pid,
            code="OK",
            detail={
                "discord_id": discord_id,
                "moved_from_player": change.moved_from,
                "replaced_discord_id": change.replaced_discord_id,
            },
            session=s,
        )
    notes = []
    if change.moved_from is not None:
        notes.append(f"{change.moved_from}에서 이동 / moved from {change.moved_from}")
    if change.replaced_discord_id is not None:
        notes.append(
            f"기존 디스코드 {change.replaced_discord_id} 연동 해제 / replaced Discord {change.replaced_discord_id}"
        )
    changed = f" ({'; '.join(notes)})" if notes else ""
    return StaffReply(f"디스코드 {discord_id} ↔ 플레이어 {pid} 연동 완료{changed}. / Linked.")


async def cmd_unlink(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    """The member's own link, removed."""
    conv = inv.conversations
    discord_id = inv.actor.discord_id
    if discord_id is None or ThreadId(inv.channel).kind not in _DISCORD_KINDS:
        return StaffReply(NOT_IN_DISCORD, ok=False)
    player_id = await unlink(conv.store, discord_id)
    if player_id is not None:
        await conv.store.audit(
            actor=inv.actor.label,
            action="unlink",
            thread_id=inv.channel,
            target=player_id,
            code="OK",
            detail={"discord_id": discord_id},
        )
    return StaffReply(unlinked_text(player_id), ok=player_id is not None)


def link_commands() -> list[StaffCommand]:
    """`/link [discord_user_id] [player_id]` and `/unlink`."""
    return [
        StaffCommand(
            "link",
            (
                Param(
                    "discord_user_id", optional=True, help="staff: the Discord user to link (id or mention)"
                ),
                Param("player_id", optional=True, help="staff: the game account, e.g. P100"),
            ),
            "계정 연동 코드 받기 (운영진: 연동 이동) / get an account link code (staff: move a link)",
            cmd_link,
            open_without_args=True,
        ),
        StaffCommand(
            "unlink",
            (),
            "내 디스코드 계정 연동 해제 / unlink my Discord account",
            cmd_unlink,
            staff_only=False,
        ),
    ]
