"""The staff commands' handlers (DESIGN.md §8) and their declarations; `bot.app` adds the `/ops` ones."""

from __future__ import annotations

from typing import Any

from bot.attachments.texts import attachment_lines
from bot.game.orders import SourceUnavailable
from bot.guard_rules import action_words, rule_of, rule_words
from bot.loop_share import to_background_thread
from bot.staff.linking import link_commands
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply
from bot.store import ORDER_STATUSES
from bot.vocabulary.dates import zoned_text
from bot.vocabulary.particles import particle
from tools import coupon_staff, ledger
from tools.base import ToolContext
from tools.money import format_krw

ORDERS_SHOWN = 50
"""`/orders` lists at most this many of a player's orders, newest first, and says how many more there
are (or, when the game's API gives no total, that there are more)."""


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
    player = await inv.conversations.store.players.by_id(pid)
    try:
        # One more than shown: whether there are more, even when the game's API gives no total.
        page = await _ctx(inv).orders.player_orders(pid, limit=ORDERS_SHOWN + 1)
    except SourceUnavailable as exc:
        return StaffReply(
            f"[SOURCE_UNAVAILABLE] 게임 서버에서 주문을 읽을 수 없습니다 / the game backend cannot be read: {exc.reason}",
            ok=False,
        )
    if player is None and not page.orders:
        return StaffReply(f"플레이어 {particle(pid, '을/를')} 찾을 수 없습니다. / No player {pid}.", ok=False)
    name = f"{player.name} (discord {player.discord_id or '-'})" if player is not None else "(-)"
    shown = page.orders[:ORDERS_SHOWN]
    more = len(page.orders) > ORDERS_SHOWN
    if page.total is not None:
        count: str = f"{page.total:,}"
    else:
        count = f"{len(shown)}+" if more else str(len(shown))
    lines = [f"{pid} {name}: 주문 {count}건"]
    for o in shown:
        lines.append(
            f"- {o.id} · {o.item} · {format_krw(o.amount, 'ko')} · {ORDER_STATUSES[o.status]} ({o.status})"
        )
    if page.total is not None and page.total > len(shown):
        left = page.total - len(shown)
        lines.append(
            f"… 외 {left:,}건 더 (최근 {len(shown)}건만 표시, `/order <주문번호>`로 조회) / "
            f"… {left:,} more (newest {len(shown)} shown; `/order <order_id>` for one)"
        )
    elif page.total is None and more:
        lines.append(
            f"… 더 있음 (최근 {len(shown)}건만 표시, `/order <주문번호>`로 조회) / "
            f"… more (newest {len(shown)} shown; `/order <order_id>` for one)"
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
        orders=conv.services.orders,
    )
    return _result_reply(result)


async def cmd_coupon_revoke(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    result = await coupon_staff.revoke(
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
    result = await coupon_staff.approve(
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
    result = await coupon_staff.list_coupons(
        conv.store, args.get("player_id"), timezone=conv.services.timezone
    )
    return _result_reply(result)


async def cmd_thread_show(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    rows = await inv.conversations.memory.recent(thread, limit=20)
    if not rows:
        return StaffReply(f"{thread}: 대화 기록이 없습니다. / No messages.")
    lines = [f"{thread} — 최근 메시지 {len(rows)}개"]
    for r in rows:
        text = (r.content or "").replace("\n", " ")
        lines.append(f"[{r.role}] {text[:300]}")
    lines += await attachment_lines(inv.conversations.attachments, thread)
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
    report = await to_background_thread(index.reindex)
    return StaffReply(f"정책 색인 갱신 완료 / reindexed: {report}")


async def cmd_audit(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    limit = args.get("limit") or 20
    limit = max(1, min(int(limit), 200))
    rows = await inv.conversations.store.recent_audit(limit)
    lines = [f"감사 기록 최근 {len(rows)}건 / last {len(rows)} audit rows:"]
    for r in rows:
        at = zoned_text(r.at, inv.locale, inv.conversations.services.timezone)
        rule = rule_of(r.detail)
        said = f" ({rule_words(rule, inv.locale)})" if rule else ""
        lines.append(
            f"{at} {r.actor} {action_words(r.action, inv.locale)}{said} {r.target or ''} {r.code or ''}".rstrip()
        )
    return StaffReply("\n".join(lines))


async def cmd_handoff(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    thread = args["channel"]
    await inv.conversations.stop(thread)
    await inv.conversations.set_handoff(thread, True, by=inv.actor.label)
    # Staff see who took which conversation; in Discord the card carries a Hand back button.
    notice: dict[str, Any] = {"thread_id": thread, "by": inv.actor.label}
    if inv.on_card:
        notice["on_card"] = True  # the Take over card shows it: no second card in the staff channel
    await inv.conversations.notify_staff("handoff", notice)
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
    """The staff layer's own commands; `bot.app.staff_commands` adds `/stats` and the `/ops` ones."""
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
        *link_commands(),  # `/link` (a member's code, or staff's override) and `/unlink`
        StaffCommand("thread show", (_channel(),), "대화 기록 보기 / show the conversation", cmd_thread_show),
        StaffCommand("thread reset", (_channel(),), "대화 초기화 / reset the conversation", cmd_thread_reset),
        StaffCommand(
            "policy search", (Param("query"),), "정책 검색 / search policies", cmd_policy_search, slow=True
        ),
        StaffCommand(
            "policy reindex", (), "정책 색인 갱신 / rebuild the policy index", cmd_policy_reindex, slow=True
        ),
        StaffCommand(
            "audit", (Param("limit", int, optional=True, minimum=1),), "감사 기록 / audit log", cmd_audit
        ),
        StaffCommand("handoff", (_channel(),), "상담원 전환(봇 일시정지) / pause the bot", cmd_handoff),
        StaffCommand("resume", (_channel(),), "봇 재개 / resume the bot", cmd_resume),
        StaffCommand("stop", (_channel(),), "진행 중 실행 중단 / stop the running answer", cmd_stop),
    ]
