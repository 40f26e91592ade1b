"""Staff commands (DESIGN.md §8): one registry, one definition per command.

The console and transcripts use the text form (`/coupon issue ORD001 5000 사과 보상`); the Discord
Cog builds slash commands from the same definitions. The role is checked before the arguments are
parsed; non-staff get a clear denial and the attempt is audited.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from bot.store import ORDER_STATUSES, Order, Player
from tools import ledger
from tools.base import Actor, ToolContext
from tools.money import format_krw

if TYPE_CHECKING:
    from bot.conversations import Conversations

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Param:
    name: str
    kind: type = str
    optional: bool = False
    help: str = ""
    channel: bool = False
    """An optional `[channel]`: defaults to the channel the command is typed in."""


@dataclass
class StaffReply:
    text: str
    ok: bool = True
    denied: bool = False
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Invocation:
    actor: Actor
    channel: str
    """thread_id of the channel the command was typed in."""
    conversations: Conversations
    command: StaffCommand

    @property
    def locale(self) -> str:
        return "ko"


Handler = Callable[[Invocation, dict[str, Any]], Awaitable[StaffReply]]


@dataclass(frozen=True)
class StaffCommand:
    name: str
    """Words after the slash: `coupon issue`, `order`."""
    params: tuple[Param, ...]
    help: str
    handler: Handler
    staff_only: bool = True

    @property
    def usage(self) -> str:
        parts = [f"/{self.name}"]
        for p in self.params:
            parts.append(f"[{p.name}]" if p.optional else f"<{p.name}>")
        return " ".join(parts)

    @property
    def group(self) -> str | None:
        return self.name.split(" ", 1)[0] if " " in self.name else None

    @property
    def leaf(self) -> str:
        return self.name.split(" ", 1)[-1]


class ArgumentError(ValueError):
    pass


_TOKEN = re.compile(r'\s*(?:"([^"]*)"|\'([^\']*)\'|(\S+))')


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def parse_args(cmd: StaffCommand, rest: str, channel: str) -> dict[str, Any]:
    """Positional arguments; the last parameter takes the rest of the line (quotes optional)."""
    values: dict[str, Any] = {}
    pos = 0
    params = list(cmd.params)
    for i, p in enumerate(params):
        last = i == len(params) - 1
        remaining = rest[pos:].strip()
        if not remaining:
            raw = None
        elif last:
            raw = _unquote(remaining)
            pos = len(rest)
        else:
            m = _TOKEN.match(rest, pos)
            if m is None:
                raw = None
            else:
                raw = next(g for g in m.groups() if g is not None)
                pos = m.end()
        if raw is None or raw == "":
            if p.channel:
                values[p.name] = channel
                continue
            if p.optional:
                values[p.name] = None
                continue
            raise ArgumentError(f"missing <{p.name}>. Usage: {cmd.usage}")
        if p.kind is int:
            digits = raw.replace(",", "").removesuffix("원").removesuffix("KRW").strip()
            if not re.fullmatch(r"-?\d+", digits):
                raise ArgumentError(
                    f"<{p.name}> must be a whole number, e.g. 5000 (got {raw!r}). Usage: {cmd.usage}"
                )
            values[p.name] = int(digits)
        elif p.channel:
            values[p.name] = resolve_channel(raw, channel)
        else:
            values[p.name] = raw
    if pos < len(rest) and rest[pos:].strip():
        raise ArgumentError(f"too many arguments. Usage: {cmd.usage}")
    return values


def resolve_channel(raw: str, current: str) -> str:
    """`<#123>` or `123` → `discord:123`; `kind:name` as is; a bare name → same kind as the current channel."""
    m = re.fullmatch(r"<#(\d+)>", raw.strip())
    if m:
        return f"discord:{m.group(1)}"
    if ":" in raw:
        return raw.strip()
    if raw.isdigit() and current.startswith(("discord:", "dm:")):
        return f"discord:{raw}"
    kind = current.split(":", 1)[0]
    return f"{kind}:{raw.strip()}"


class StaffRegistry:
    """All staff commands; `dispatch` is the text form used by the console and transcripts."""

    def __init__(self, commands: list[StaffCommand]) -> None:
        self.commands: dict[str, StaffCommand] = {}
        for c in commands:
            self.add(c)

    def add(self, cmd: StaffCommand) -> None:
        if cmd.name in self.commands:
            raise ValueError(f"staff command {cmd.name} defined twice")
        self.commands[cmd.name] = cmd

    def find(self, text: str) -> tuple[StaffCommand | None, str, str | None]:
        """(command, rest of line, group name when only a group matched)."""
        body = text.strip()[1:]
        words = body.split(None, 2)
        if not words:
            return None, "", None
        if len(words) >= 2 and f"{words[0]} {words[1]}" in self.commands:
            cmd = self.commands[f"{words[0]} {words[1]}"]
            rest = body.split(None, 2)[2] if len(words) > 2 else ""
            return cmd, rest, None
        if words[0] in self.commands:
            rest = body[len(words[0]) :].strip()
            return self.commands[words[0]], rest, None
        if any(c.group == words[0] for c in self.commands.values()):
            return None, "", words[0]
        return None, "", None

    def matches(self, text: str) -> bool:
        """A line is a staff command when it starts with `/` and names a known command or group."""
        if not text.lstrip().startswith("/"):
            return False
        cmd, _, group = self.find(text)
        return cmd is not None or group is not None

    async def dispatch(
        self, text: str, *, actor: Actor, channel: str, conversations: Conversations
    ) -> StaffReply:
        cmd, rest, group = self.find(text)
        name = cmd.name if cmd else (group or text.split()[0].lstrip("/"))
        if (cmd is None or cmd.staff_only) and not actor.is_staff:
            # The role is checked before the arguments are parsed, and the attempt is audited.
            await conversations.store.audit(
                actor=actor.label, action="staff.denied", thread_id=channel, target=f"/{name}", code="DENIED"
            )
            return StaffReply(
                f"⛔ /{name} 은(는) 운영진({conversations.staff_role}) 전용 명령입니다. "
                f"This command is for staff ({conversations.staff_role}) only.",
                ok=False,
                denied=True,
            )
        if cmd is None:
            subs = ", ".join(c.usage for c in self.commands.values() if c.group == group)
            return StaffReply(f"알 수 없는 하위 명령입니다. 사용법 / usage: {subs}", ok=False)
        try:
            args = parse_args(cmd, rest, channel)
        except ArgumentError as exc:
            return StaffReply(f"⚠ {exc}", ok=False)
        inv = Invocation(actor=actor, channel=channel, conversations=conversations, command=cmd)
        try:
            reply = await cmd.handler(inv, args)
        except Exception as exc:  # a broken command is reported to the staff member, not swallowed
            log.exception("staff command /%s failed", cmd.name)
            reply = StaffReply(f"⚠ /{cmd.name} failed: {type(exc).__name__}: {exc}", ok=False)
        await conversations.store.audit(
            actor=actor.label,
            action=f"staff./{cmd.name}",
            thread_id=channel,
            target=str(next(iter(args.values()), "") or "")[:100],
            code="OK" if reply.ok else "ERROR",
        )
        return reply

    def help_text(self) -> str:
        return "\n".join(f"{c.usage} — {c.help}" for c in self.commands.values())


# ---- command implementations -------------------------------------------------------------


def _result_reply(result: Any) -> StaffReply:
    return StaffReply(f"[{result.code}] {result.message}", ok=result.ok, data=dict(result.data or {}))


def _ctx(inv: Invocation) -> ToolContext:
    conv = inv.conversations
    return ToolContext(
        actor=inv.actor,
        thread_id=inv.channel,
        run_id="staff",
        store=conv.store,
        locale="ko",
        clock=conv.clock,
        services=conv.services,
        tool_call_id=conv.new_id(),
    )


async def cmd_order(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    result = await inv.conversations.tools.execute("lookup_order", {"order_id": args["order_id"]}, _ctx(inv))
    return _result_reply(result)


async def cmd_orders(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    pid = args["player_id"].strip()
    async with inv.conversations.store.session() as s:
        player = await s.get(Player, pid)
        rows = list(
            (
                await s.execute(select(Order).where(Order.player_id == pid).order_by(Order.ordered_at.desc()))
            ).scalars()
        )
    if player is None:
        return StaffReply(f"플레이어 {pid}을(를) 찾을 수 없습니다. / No player {pid}.", ok=False)
    lines = [f"{player.id} {player.name} (discord {player.discord_id or '-'}): 주문 {len(rows)}건"]
    for o in rows:
        lines.append(
            f"- {o.id} · {o.item} · {format_krw(o.amount, 'ko')} · {ORDER_STATUSES[o.status]} ({o.status})"
        )
    return StaffReply("\n".join(lines))


async def cmd_coupon_issue(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    result = await ledger.staff_issue(
        conv.store,
        conv.services.coupon_rules,
        actor=inv.actor,
        order_id=args["order_id"],
        amount=args["amount"],
        reason=args.get("reason"),
        idempotency_key=f"{inv.channel}:staff:{conv.new_id()}",
        thread_id=inv.channel,
        now=conv.clock(),
        timezone=conv.services.timezone,
    )
    return _result_reply(result)


async def cmd_coupon_revoke(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    result = await ledger.revoke(
        conv.store,
        actor=inv.actor,
        order_id=args["order_id"],
        reason=args.get("reason"),
        thread_id=inv.channel,
        now=conv.clock(),
        timezone=conv.services.timezone,
    )
    return _result_reply(result)


async def cmd_coupon_approve(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    result = await ledger.approve(
        conv.store,
        actor=inv.actor,
        order_id=args["order_id"],
        thread_id=inv.channel,
        now=conv.clock(),
        timezone=conv.services.timezone,
    )
    return _result_reply(result)


async def cmd_coupon_list(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    result = await ledger.list_coupons(conv.store, args.get("player_id"), timezone=conv.services.timezone)
    return _result_reply(result)


async def cmd_link(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    discord_id = re.sub(r"[<@!>]", "", args["discord_user_id"]).strip()
    pid = args["player_id"].strip()
    if not discord_id.isdigit():
        return StaffReply(
            f"⚠ <discord_user_id> must be a Discord user id (digits), got {discord_id!r}", ok=False
        )
    async with conv.store.session() as s, s.begin():
        player = await s.get(Player, pid)
        if player is None:
            return StaffReply(f"플레이어 {pid}을(를) 찾을 수 없습니다. / No player {pid}.", ok=False)
        previous = (
            await s.execute(select(Player).where(Player.discord_id == discord_id))
        ).scalar_one_or_none()
        old_discord = player.discord_id
        if previous is not None and previous.id != pid:
            previous.discord_id = None
            await s.flush()
        player.discord_id = discord_id
        await conv.store.audit(
            actor=inv.actor.label,
            action="link",
            thread_id=inv.channel,
            target=pid,
            code="OK",
            detail={
                "discord_id": discord_id,
                "moved_from_player": previous.id if previous is not None and previous.id != pid else None,
                "replaced_discord_id": old_discord,
            },
            session=s,
        )
    moved = (
        f" ({previous.id}에서 이동 / moved from {previous.id})"
        if previous is not None and previous.id != pid
        else ""
    )
    return StaffReply(f"디스코드 {discord_id} ↔ 플레이어 {pid} 연동 완료{moved}. / Linked.")


async def cmd_thread_show(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    rows = await inv.conversations.memory.recent(thread, limit=20)
    if not rows:
        return StaffReply(f"{thread}: 대화 기록이 없습니다. / No messages.")
    lines = [f"{thread} — 최근 메시지 {len(rows)}개"]
    for r in rows:
        text = (r.content or "").replace("\n", " ")
        lines.append(f"[{r.role}] {text[:300]}")
    return StaffReply("\n".join(lines))


async def cmd_thread_reset(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    await inv.conversations.stop(thread)
    await inv.conversations.memory.reset(thread)
    return StaffReply(f"{thread}: 대화 기록을 초기화했습니다 (감사 기록은 유지). / Conversation reset.")


async def cmd_policy_search(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    index = inv.conversations.services.policy_search
    if index is None:
        return StaffReply("정책 검색을 사용할 수 없습니다. / The policy index is not available.", ok=False)
    hits = await index.search(args["query"], 3)
    if not hits:
        return StaffReply("관련 정책을 찾지 못했습니다. / No matching policy.")
    lines = []
    for h in hits:
        lines.append(f"{h.citation} ({h.source}, {h.score:.2f}) {h.text[:200]}")
    return StaffReply("\n".join(lines))


async def cmd_policy_reindex(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    index = inv.conversations.services.policy_search
    if index is None or not hasattr(index, "reindex"):
        return StaffReply("정책 색인을 사용할 수 없습니다. / The policy index is not available.", ok=False)
    report = await asyncio.to_thread(index.reindex)
    return StaffReply(f"정책 색인 갱신 완료 / reindexed: {report}")


async def cmd_audit(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    limit = args.get("limit") or 20
    limit = max(1, min(int(limit), 200))
    rows = await inv.conversations.store.recent_audit(limit)
    lines = [f"감사 기록 최근 {len(rows)}건 / last {len(rows)} audit rows:"]
    for r in rows:
        at = r.at.strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f"{at} {r.actor} {r.action} {r.target or ''} {r.code or ''}".rstrip())
    return StaffReply("\n".join(lines))


async def cmd_handoff(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    await inv.conversations.stop(thread)
    await inv.conversations.set_handoff(thread, True, by=inv.actor.label)
    return StaffReply(
        f"{thread}: 상담원이 이어받았습니다. 봇은 /resume 전까지 답하지 않습니다. / Bot paused."
    )


async def cmd_resume(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    await inv.conversations.set_handoff(thread, False, by=inv.actor.label)
    return StaffReply(f"{thread}: 봇 응답을 다시 시작합니다. / Bot resumed.")


async def cmd_stop(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    stopped = await inv.conversations.stop(thread)
    if stopped:
        return StaffReply(f"{thread}: 진행 중이던 실행을 중단했습니다. / Run stopped.")
    return StaffReply(f"{thread}: 진행 중인 실행이 없습니다. / Nothing is running.")


def _channel() -> Param:
    return Param("channel", optional=True, channel=True, help="channel (default: this one)")


def default_commands() -> list[StaffCommand]:
    """The staff layer's own commands; `bot.app.staff_commands` adds the `/ops` ones."""
    return [
        StaffCommand(
            "order", (Param("order_id", help="e.g. ORD001"),), "주문 상세 / order details", cmd_order
        ),
        StaffCommand(
            "orders",
            (Param("player_id", help="e.g. P100"),),
            "플레이어의 주문 / a player's orders",
            cmd_orders,
        ),
        StaffCommand(
            "coupon issue",
            (Param("order_id"), Param("amount", int, help="KRW"), Param("reason", optional=True)),
            "운영진 쿠폰 발급 / issue a coupon as staff",
            cmd_coupon_issue,
        ),
        StaffCommand(
            "coupon revoke",
            (Param("order_id"), Param("reason", optional=True)),
            "쿠폰 회수 / revoke the order's coupon",
            cmd_coupon_revoke,
        ),
        StaffCommand(
            "coupon approve",
            (Param("order_id"),),
            "승인 대기 쿠폰 승인 / approve a pending coupon",
            cmd_coupon_approve,
        ),
        StaffCommand(
            "coupon list", (Param("player_id", optional=True),), "쿠폰 목록 / list coupons", cmd_coupon_list
        ),
        StaffCommand(
            "link",
            (Param("discord_user_id"), Param("player_id")),
            "디스코드 계정 연동(이동) / link a Discord user to a player",
            cmd_link,
        ),
        StaffCommand("thread show", (_channel(),), "대화 기록 보기 / show the conversation", cmd_thread_show),
        StaffCommand("thread reset", (_channel(),), "대화 초기화 / reset the conversation", cmd_thread_reset),
        StaffCommand("policy search", (Param("query"),), "정책 검색 / search policies", cmd_policy_search),
        StaffCommand("policy reindex", (), "정책 색인 갱신 / rebuild the policy index", cmd_policy_reindex),
        StaffCommand("audit", (Param("limit", int, optional=True),), "감사 기록 / audit log", cmd_audit),
        StaffCommand("handoff", (_channel(),), "상담원 전환(봇 일시정지) / pause the bot", cmd_handoff),
        StaffCommand("resume", (_channel(),), "봇 재개 / resume the bot", cmd_resume),
        StaffCommand("stop", (_channel(),), "진행 중 실행 중단 / stop the running answer", cmd_stop),
    ]
