"""`/reply [name] [values]` and `/replies save|delete` (DESIGN.md §8, issue 26): staff keep named replies
and send one, filled, into the conversation they are in. Rules: `bot.desk.saved_replies`; storage:
`bot.store.saved_replies`. Sending is audited (`reply.used`); saving and deleting are audited by the store.

A sent reply goes through `bot.desk.staff_reply`, as one typed in the staff web console: kept in the
conversation's memory as a staff answer (the bot reads it later) and, in a Discord or web conversation,
queued in the staff outbox, which the process owning the channel posts. In a terminal or a transcript the
reply is printed."""

from __future__ import annotations

from typing import Any

from bot.desk.saved_replies import (
    ReplyError,
    check_name,
    conversation_facts,
    fill,
    parse_texts,
    parse_values,
)
from bot.desk.staff_reply import posted_by_outbox, send_staff_reply
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply
from bot.store.saved_replies import delete_reply, get_reply, list_replies, save_reply
from bot.vocabulary.particles import particle

MAX_CHOICES = 25
"""Discord shows at most 25 autocomplete choices."""


async def reply_names(conversations: Any, typed: str) -> list[str]:
    """Saved reply names starting with what was typed (Discord's autocomplete for `/reply`)."""
    records = await list_replies(conversations.store, typed.strip().lower(), limit=MAX_CHOICES)
    return [r.name for r in records]


def _preview(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


async def listing(inv: Invocation) -> StaffReply:
    records = await list_replies(inv.conversations.store)
    if not records:
        return StaffReply(
            "저장된 답변이 없습니다. `/replies save 이름 한국어 || English` 로 만드세요. "
            "/ No saved replies yet; make one with `/replies save NAME 한국어 || English`."
        )
    lines = [f"저장된 답변 {len(records)}개 / {len(records)} saved replies — `/reply NAME [name=value …]`:"]
    for r in records:
        langs = "+".join(lang for lang, text in (("ko", r.text_ko), ("en", r.text_en)) if text)
        lines.append(f"- {r.name} [{langs}] {_preview(r.text_ko or r.text_en)}")
    return StaffReply("\n".join(lines), data={"names": [r.name for r in records]})


async def cmd_reply(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    if not args.get("name"):
        return await listing(inv)
    conv = inv.conversations
    try:
        name = check_name(args["name"])
        record = await get_reply(conv.store, name)
        if record is None:
            near = await reply_names(conv, name[:1])
            hint = f" 비슷한 이름 / similar: {', '.join(near[:5])}" if near else ""
            return StaffReply(f"'{name}' 답변이 없습니다. / No saved reply '{name}'.{hint}", ok=False)
        locale, known = await conversation_facts(conv.store, inv.channel)
        values = {**known, "staff": inv.actor.display_name or "", **parse_values(args.get("values"))}
        text = fill(record, locale, values)
    except ReplyError as exc:
        return StaffReply(f"⚠ {exc}", ok=False)
    staff = inv.actor.display_name or inv.actor.label
    # Queued only where a process posts it (a Discord or web thread), on purpose: typed in a terminal
    # (`console:`) or a transcript (`replay:`), the command's printed reply is how that channel shows it, and
    # a queued copy would only wait `REPLY_TTL` to be given up. Sent from the console's conversation page
    # (`shows_delivery`) it is queued for every kind, as that page's reply box does
    # (bot/staffroom/console/routes.py): the page shows one nobody posts as not delivered.
    posted = posted_by_outbox(inv.channel)
    await send_staff_reply(
        conv.memory,
        conv.store,
        inv.channel,
        text,
        author=inv.actor.discord_id or staff,
        signed=staff,
        queue=posted or inv.shows_delivery,
    )
    await conv.store.audit(
        actor=inv.actor.label,
        action="reply.used",
        thread_id=inv.channel,
        target=name,
        code="OK",
        detail={"locale": locale, "chars": len(text)},
    )
    head = "보냈습니다 / sent" if posted else "상담원 답변 / staff reply"
    return StaffReply(f"{head} ({name}, {locale}):\n{text}", data={"sent": text, "locale": locale})


async def cmd_save(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    try:
        name = check_name(args["name"])
        texts = parse_texts(args["text"])
    except ReplyError as exc:
        return StaffReply(f"⚠ {exc}", ok=False)
    created = await save_reply(
        inv.conversations.store,
        name=name,
        text_ko=texts.ko,
        text_en=texts.en,
        actor=inv.actor.label,
        now=inv.conversations.clock(),
    )
    langs = "+".join(lang for lang, text in (("ko", texts.ko), ("en", texts.en)) if text)
    done = ("만들었습니다", "created") if created else ("고쳤습니다", "updated")
    return StaffReply(
        f"답변 {particle(repr_name(name), '을/를')} {done[0]} [{langs}]. / Saved reply '{name}' {done[1]} [{langs}].",
        data={"name": name, "created": created},
    )


def repr_name(name: str) -> str:
    return f"'{name}'"


async def cmd_delete(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    try:
        name = check_name(args["name"])
    except ReplyError as exc:
        return StaffReply(f"⚠ {exc}", ok=False)
    if await delete_reply(inv.conversations.store, name, actor=inv.actor.label):
        return StaffReply(f"답변 {particle(repr_name(name), '을/를')} 지웠습니다. / Deleted '{name}'.")
    return StaffReply(f"'{name}' 답변이 없습니다. / No saved reply '{name}'.", ok=False)


def reply_commands() -> list[StaffCommand]:
    return [
        StaffCommand(
            "reply",
            (
                Param(
                    "name", optional=True, help="saved reply name (empty: list them)", complete=reply_names
                ),
                Param("values", optional=True, help="name=value …, e.g. order=ORD123"),
            ),
            "저장된 답변 보내기 / send a saved reply",
            cmd_reply,
        ),
        StaffCommand(
            "replies save",
            (
                Param("name", help="e.g. refund-delay"),
                Param("text", help="한국어 || English, {player} {order} …"),
            ),
            "저장 답변 만들기·고치기 / create or edit a saved reply",
            cmd_save,
        ),
        StaffCommand(
            "replies delete",
            (Param("name", complete=reply_names),),
            "저장 답변 지우기 / delete a saved reply",
            cmd_delete,
        ),
    ]
