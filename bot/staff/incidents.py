"""`/incident open|update|close|list|show|report` and `/incident compensate <id> <plan|approve|cancel>`
(DESIGN.md §8, issue 25): staff declare an incident, keep its notice current, preview and approve its
bulk compensation, and read its report. This module is the command: its parameters and its bilingual
replies. What a command does lives in the domain (`bot.incidents`: scope, plan, preview, approval, run,
report) and its storage in `store.incidents`."""

from __future__ import annotations

from typing import Any

from bot.game.orders import SourceUnavailable
from bot.incidents import Limits, ScopeError, parse_plan, parse_scope
from bot.incidents.compensation import Preview, Progress, approve, cancel, propose
from bot.incidents.notice import split_notice
from bot.incidents.report import build_report, format_report
from bot.staff.registry import Invocation, Param, StaffCommand, StaffReply
from bot.store.incidents import IncidentRecord
from bot.vocabulary.dates import zoned_text
from bot.vocabulary.particles import particle

PREVIEW_CARD = "incident_preview"
"""`data["card"]` of a compensation preview: a surface shows it as a card with Approve / Cancel."""


def describe(i: IncidentRecord, zone: str) -> str:
    plan = f" · 보상 {i.comp_amount:,}원/{i.comp_per} ({i.comp_state})" if i.comp_amount is not None else ""
    lines = [
        f"#{i.id} [{i.status}] {i.title} · 시작 {zoned_text(i.started_at, 'ko', zone)}{plan}",
        f"  ko (v{i.notice_version}): {i.notice_ko}",
    ]
    if i.notice_en:
        lines.append(f"  en: {i.notice_en}")
    return "\n".join(lines)


def _missing(incident_id: int) -> StaffReply:
    return StaffReply(
        f"장애 {particle(f'#{incident_id}', '을/를')} 찾을 수 없습니다. / No incident #{incident_id}.",
        ok=False,
    )


async def cmd_open(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    try:
        scope = parse_scope(args["scope"], zone=conv.services.timezone)
    except ScopeError as exc:
        return StaffReply(str(exc), ok=False)
    ko, en = split_notice(args["notice"])
    incident = await conv.store.incidents.open(
        title=args["title"], notice_ko=ko, notice_en=en, scope=scope, actor=inv.actor.label, now=conv.clock()
    )
    return StaffReply(
        "장애를 등록했습니다. / Incident opened.\n" + describe(incident, conv.services.timezone),
        data={"id": incident.id},
    )


async def cmd_update(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    ko, en = split_notice(args["notice"])
    incident = await inv.conversations.store.incidents.update_notice(
        args["id"], notice_ko=ko, notice_en=en or None, actor=inv.actor.label
    )
    if incident is None:
        return _missing(args["id"])
    return StaffReply(
        "공지를 갱신했습니다. / Notice updated.\n" + describe(incident, inv.conversations.services.timezone)
    )


async def cmd_close(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    incident = await conv.store.incidents.close(args["id"], actor=inv.actor.label, now=conv.clock())
    if incident is None:
        return _missing(args["id"])
    report = await build_report(conv.store, incident, now=conv.clock())
    return StaffReply(
        "장애를 종료했습니다. / Incident closed.\n" + format_report(report, conv.services.timezone),
        data=report,
    )


async def cmd_list(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    incidents = await inv.conversations.store.incidents.list()
    if not incidents:
        return StaffReply("등록된 장애가 없습니다. / No incidents.")
    return StaffReply("\n".join(describe(i, inv.conversations.services.timezone) for i in incidents[:20]))


async def cmd_show(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    incident = await inv.conversations.store.incidents.get(args["id"])
    if incident is None:
        return _missing(args["id"])
    return StaffReply(
        describe(incident, inv.conversations.services.timezone) + f"\n  scope: {incident.scope.to_json()}"
    )


async def cmd_report(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv = inv.conversations
    incident = await conv.store.incidents.get(args["id"])
    if incident is None:
        return _missing(args["id"])
    report = await build_report(conv.store, incident, now=conv.clock())
    return StaffReply(format_report(report, conv.services.timezone), data=report)


def _unreadable(exc: SourceUnavailable) -> StaffReply:
    """The game's backend could not give the scope's orders (under the http order source)."""
    hint = (
        " 플레이어 CSV로 장애를 선언하세요 / declare the incident with a players CSV."
        if "no order search" in exc.reason
        else " 잠시 후 다시 시도하세요 / try again later."
    )
    return StaffReply(
        f"[SOURCE_UNAVAILABLE] 게임 서버에서 장애 범위의 주문을 읽을 수 없습니다 / the game's backend "
        f"cannot be read for the incident's orders: {exc.reason}.{hint}",
        ok=False,
    )


async def cmd_compensate(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    """A plan → its preview (stored, waiting); `approve` → audited overrides, then the run; `cancel`."""
    try:
        return await _compensate(inv, args)
    except SourceUnavailable as exc:
        return _unreadable(exc)


async def _compensate(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    conv, store, actor = inv.conversations, inv.conversations.store, inv.actor.label
    incident = await store.incidents.get(args["id"])
    if incident is None:
        return _missing(args["id"])
    word = args["plan"].strip().lower()
    rules, orders = conv.services.coupon_rules, conv.services.orders
    if word in ("cancel", "취소"):
        await cancel(store, incident.id, actor=actor)
        return StaffReply(f"장애 #{incident.id} 보상을 취소했습니다. / Compensation cancelled.")
    if word in ("approve", "승인"):

        async def report(step: Progress) -> None:
            if inv.progress is not None:
                sent = inv.progress(
                    f"보상 진행 / progress: {step.done:,}/{step.total:,} · 발급 {step.issued:,}"
                )
                if hasattr(sent, "__await__"):
                    await sent

        approval = await approve(
            store,
            incident,
            Limits.of(rules),
            actor=actor,
            clock=conv.clock,
            orders=orders,
            progress=report,
            valid_days=rules.valid_days,
            timezone=conv.services.timezone,
        )
        if approval.preview is None:
            return StaffReply("승인할 보상 미리보기가 없습니다. / No previewed plan to approve.", ok=False)
        if approval.result is None:
            return StaffReply(approval.preview.text(), ok=False)
        result = approval.result
        text = (
            f"장애 #{incident.id} 보상 완료 / compensation done: 발급 {result.issued:,}건 · "
            f"{result.spent:,}원 · 이미 발급 {result.already:,} · 제외 {result.excluded:,}"
        )
        return StaffReply(
            text,
            ok=result.ok,
            data={
                "issued": result.issued,
                "spent": result.spent,
                "already": result.already,
                "excluded": result.excluded,
            },
        )
    try:
        plan = parse_plan(incident.id, args["plan"], valid_days=rules.valid_days)
    except ScopeError as exc:
        return StaffReply(str(exc), ok=False)
    shown: Preview = await propose(
        store, incident, plan, Limits.of(rules), actor=actor, now=conv.clock(), orders=orders
    )
    return StaffReply(
        shown.text(),
        ok=shown.refused is None,
        data={
            "card": PREVIEW_CARD,
            "id": incident.id,
            "title": incident.title,
            "amount": plan.amount,
            "per": plan.per,
            "budget": plan.budget,
            "player_cap": plan.player_cap,
            "orders": shown.orders,
            "players": shown.players,
            "total": shown.total,
            "excluded": dict(shown.excluded),
            "overrides": shown.overrides,
            "refused": shown.refused,
        },
    )


def _id() -> Param:
    return Param("id", int, minimum=1, help="incident id, e.g. 3")


def incident_commands() -> list[StaffCommand]:
    return [
        StaffCommand(
            "incident open",
            (
                Param("title", help="제목"),
                Param("scope", help="all | status=delayed item=… since=… players=P1,P2"),
                Param("notice", help="한국어 공지 || English notice"),
            ),
            "장애 등록 / declare an incident",
            cmd_open,
        ),
        StaffCommand(
            "incident update",
            (_id(), Param("notice", help="한국어 || English")),
            "장애 공지 갱신 / update the notice",
            cmd_update,
        ),
        StaffCommand("incident close", (_id(),), "장애 종료와 보고서 / close and report", cmd_close),
        StaffCommand("incident list", (), "장애 목록 / list incidents", cmd_list),
        StaffCommand("incident show", (_id(),), "장애 보기 / show an incident", cmd_show),
        StaffCommand("incident report", (_id(),), "장애 보고서 / incident report", cmd_report),
        StaffCommand(
            "incident compensate",
            (_id(), Param("plan", help="5000 per=order budget=1000000 cap=10000 | approve | cancel")),
            "장애 일괄 보상(미리보기→승인) / compensate everyone in scope",
            cmd_compensate,
            slow=True,
        ),
    ]
