"""Staff commands `/ops draft <request>` and `/ops show [draft_id]`, added to the staff registry.

`run_ops_draft` is the whole command without the registry, for channels that want live progress:
they pass a `progress` sink (console prints each line, Discord edits a message). The reply always
carries the progress lines in `data["progress"]`, and a draft too long for one Discord message in
`data["attachment"] = ("draft.md", text)`.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from bot.conversations.hooks import RunInfo
from bot.ops.drafts import load_draft, save_draft
from bot.ops.graph import STEP_LABELS, OpsGraph, Progress
from bot.ops.state import OpsState
from bot.ops.steps import OpsConfig, OpsEnv, StepModels
from bot.staff import Invocation, Param, StaffCommand, StaffReply
from bot.store.models import OpsDraft
from bot.vocabulary.language import detect_language
from bot.vocabulary.particles import particle
from tools.base import Actor, ToolContext
from tools.ops_readonly import ops_worker_registry

if TYPE_CHECKING:
    from bot.conversations import Conversations

REPLY_LIMIT = 1_900
"""Past this the draft goes into an attachment (Discord's message limit is 2,000 characters)."""
PREVIEW_CHARS = 400
EXAMPLE = "/ops draft 배송 지연 사태 공지문과 보상안 초안 작성 (영향 주문 수, 예산 포함)"


def ops_config_for(conversations: Conversations) -> OpsConfig:
    """The defaults, with the app's tool mode."""
    return OpsConfig(use_native_tools=conversations.use_native_tools)


def check_request(request: str | None, limit: int) -> str | None:
    """Why the request cannot be drafted (a message for the staff member), or None when it is fine."""
    text = (request or "").strip()
    if not text:
        return (
            "⚠ 요청 내용이 비어 있습니다. 무엇을 작성할지 적어 주세요. / The request is empty.\n"
            f"예 / e.g.: {EXAMPLE}"
        )
    if len(text) > limit:
        return (
            f"⚠ 요청이 너무 깁니다: {len(text):,}자 (최대 {limit:,}자). 핵심 항목만 추려 다시 요청해 주세요. "
            f"/ The request is too long ({len(text):,} characters, max {limit:,})."
        )
    return None


async def run_ops_draft(
    conversations: Conversations,
    *,
    actor: Actor,
    channel: str,
    request: str | None,
    progress: Progress | None = None,
    config: OpsConfig | None = None,
) -> StaffReply:
    """Plan, write and review a staff document; store it; reply with the draft (or why not)."""
    if not actor.is_staff:  # the registry checks first; this guards channels that call us directly
        return StaffReply("⛔ /ops 는 운영진 전용 명령입니다. / Staff only.", ok=False, denied=True)
    config = config or ops_config_for(conversations)
    problem = check_request(request, config.max_request_chars)
    if problem is not None:
        return StaffReply(problem, ok=False)
    text = (request or "").strip()
    lines: list[str] = []

    async def collect(line: str) -> None:
        lines.append(line)
        if progress is not None:
            outcome = progress(line)
            if inspect.isawaitable(outcome):
                await outcome

    ctx = ToolContext(
        actor=actor,
        thread_id=channel,
        run_id=f"ops-{conversations.new_id()}",
        store=conversations.store,
        locale=detect_language(text),
        clock=conversations.clock,
        services=conversations.services,
    )
    env = OpsEnv(
        models=StepModels(conversations.models, conversations.llm_factory),
        tools=ops_worker_registry(conversations.tools),
        ctx=ctx,
        config=config,
        # The ops agent is not a conversation run: only who watches this thread sees its events.
        on_event=conversations.deps.watchers.events_for(RunInfo(ctx.run_id, channel, actor, ctx.locale)),
    )
    async with conversations.llm_slots:  # an ops run counts against the same LLM limit as player runs
        state = await OpsGraph().run(OpsState(request=text), env, progress=collect)
    row = await save_draft(
        conversations.store, state, created_by=actor.label, thread_id=channel, progress=lines
    )
    await conversations.store.audit(
        actor=actor.label,
        action="ops.draft",
        thread_id=channel,
        target=f"ops_draft:{row.id}",
        code="ERROR" if state.status == "failed" else "OK",
        detail={
            "status": state.status,
            "reflection_count": state.reflection_count,
            "failed_step": state.failed_step,
        },
    )
    reply = draft_reply(row, with_plan=False)
    reply.data["progress"] = lines
    return reply


def _status_line(row: OpsDraft) -> str:
    if row.status == "accepted":
        return "✅ 검토 통과 / accepted"
    if row.status == "capped":
        lacking = ", ".join(row.missing or []) or "-"
        return f"⏹ 검토 한도 도달, 마지막 초안 전달 / capped — 미충족 / missing: {lacking}"
    step = row.failed_step or "?"
    head = f"⚠ {STEP_LABELS.get(step, step)} 단계 실패 / {step} step failed: {row.error or '-'}"
    if row.draft:
        return head + "\n지금까지의 최선 초안입니다. / The best draft so far follows."
    return head + "\n초안을 만들지 못했습니다. / No draft was produced."


def _document(row: OpsDraft) -> str:
    """The full draft as a Markdown file (request, status, plan, draft)."""
    return (
        f"# 운영 초안 #{row.id}\n\n- 요청 / request: {row.request}\n- 상태 / status: {row.status} · "
        f"검토 {row.reflection_count}회\n\n## 계획 / plan\n\n{row.plan or '-'}\n\n## 초안 / draft\n\n"
        f"{row.draft or '-'}\n"
    )


def draft_reply(row: OpsDraft, *, with_plan: bool) -> StaffReply:
    """The reply for a stored draft; past `REPLY_LIMIT` a short text and the draft as `draft.md`."""
    request = row.request if len(row.request) <= 200 else row.request[:199] + "…"
    head = [
        f"📝 운영 초안 #{row.id} · 검토 {row.reflection_count}회 / {row.reflection_count} review(s)",
        _status_line(row),
        f"요청 / request: {request}",
    ]
    body = []
    if with_plan and row.plan:
        body.append(f"── 계획 / plan ──\n{row.plan}")
    if row.draft:
        body.append(f"── 초안 / draft ──\n{row.draft}")
    data: dict[str, Any] = {
        "draft_id": row.id,
        "status": row.status,
        "reflection_count": row.reflection_count,
        "failed_step": row.failed_step,
        "missing": list(row.missing or []),
    }
    text = "\n".join(head + body)
    if len(text) > REPLY_LIMIT:
        preview = row.draft[:PREVIEW_CHARS].rstrip() + ("…" if len(row.draft) > PREVIEW_CHARS else "")
        text = "\n".join(
            [
                *head,
                f"초안 {len(row.draft):,}자 — 전체는 첨부 파일 draft.md / full draft attached as draft.md",
                f"── 미리보기 / preview ──\n{preview}",
            ]
        )
        data["attachment"] = ("draft.md", _document(row))
    return StaffReply(text, ok=row.status != "failed", data=data)


async def cmd_ops_draft(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    return await run_ops_draft(
        inv.conversations,
        actor=inv.actor,
        channel=inv.channel,
        request=args.get("request"),
        progress=inv.progress,
    )


async def cmd_ops_show(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    draft_id = args.get("draft_id")
    row = await load_draft(inv.conversations.store, draft_id)
    if row is None:
        if draft_id is None:
            return StaffReply(f"저장된 운영 초안이 없습니다. / No drafts yet. 예 / e.g.: {EXAMPLE}")
        return StaffReply(
            f"운영 초안 {particle(f'#{draft_id}', '을/를')} 찾을 수 없습니다. / No draft #{draft_id}.",
            ok=False,
        )
    reply = draft_reply(row, with_plan=True)
    reply.data["progress"] = list(row.progress or [])
    return reply


def ops_commands() -> list[StaffCommand]:
    return [
        StaffCommand(
            "ops draft",
            (Param("request", help="e.g. 배송 지연 공지문과 보상안 초안 (영향 주문 수, 예산 포함)"),),
            "운영 문서 초안 작성(계획·작성·검토) / draft an ops document",
            cmd_ops_draft,
            slow=True,
        ),
        StaffCommand(
            "ops show",
            (Param("draft_id", int, optional=True, help="e.g. 3 (default: the latest)"),),
            "운영 초안 보기 / show a stored ops draft",
            cmd_ops_show,
        ),
    ]
