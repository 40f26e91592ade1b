"""`/ops draft` and `/ops show` end to end: a staff line through `Conversations.handle`, the real store,
tools and policy index, and scripted models handed out one per step by the app's `llm_factory`."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from bot.app import build_app, staff_commands
from bot.config import load_settings
from bot.conversations import Incoming
from bot.conversations.hooks import EventHook
from bot.llm.registry import ModelRegistry
from bot.llm.scripted import ScriptedLLM
from bot.ops.commands import REPLY_LIMIT, cmd_ops_draft, run_ops_draft
from bot.staff import Invocation, StaffRegistry
from bot.store import AuditEntry
from bot.store.models import OpsDraft
from tests.support.ops import (
    ACCEPT,
    CHANNEL,
    DRAFT_1,
    DRAFT_2,
    FIXED_NOW,
    PLAN,
    REJECT,
    REQUEST,
    STAFF_ROLE,
    planner,
    reviewer,
    staff_actor,
    worker,
)
from tests.support.surface import RecordingSurface


async def _rows(store) -> list[OpsDraft]:
    async with store.session() as s:
        return list((await s.execute(select(OpsDraft).order_by(OpsDraft.id))).scalars())


def test_the_ops_commands_are_in_the_staff_registry() -> None:
    registry = StaffRegistry(staff_commands())
    assert registry.commands["ops draft"].staff_only and registry.commands["ops show"].staff_only
    assert registry.commands["ops draft"].usage == "/ops draft <request>"
    assert registry.commands["ops show"].usage == "/ops show [draft_id]"


async def test_a_staff_request_becomes_a_reviewed_stored_draft(ops_app) -> None:
    review = reviewer(ACCEPT)
    ops_app.models.add(
        planner(),
        worker(
            {"tool": "order_stats", "args": {"status": "delayed"}},
            {"tool": "search_policy", "args": {"query": "배송 지연 보상"}},
            {"final": DRAFT_2},
        ),
        review,
    )
    surface = RecordingSurface()
    outcome = await ops_app.say(f"/ops draft {REQUEST}", surface=surface)
    reply = outcome.reply
    assert outcome.kind == "command" and reply.ok and not reply.denied
    assert DRAFT_2 in reply.text and "검토 통과" in reply.text
    assert surface.replies == [reply.text]
    (row,) = await _rows(ops_app.app.store)
    assert (row.request, row.plan, row.draft, row.status) == (REQUEST, PLAN, DRAFT_2, "accepted")
    assert (row.reflection_count, row.failed_step, row.created_by) == (1, None, "staff:42")
    assert reply.data["draft_id"] == row.id
    assert any(PLAN in line for line in reply.data["progress"]) and row.progress == reply.data["progress"]
    # The reviewer checked the draft against the figures the worker really looked up.
    review_prompt = review.requests[0].messages[-1]["content"]
    assert (
        "order_stats" in review_prompt and "배송 지연" in review_prompt and "search_policy" in review_prompt
    )
    async with ops_app.app.store.session() as s:
        actions = set((await s.execute(select(AuditEntry.action))).scalars())
    assert {"ops.draft", "staff./ops draft"} <= actions


async def test_a_player_is_refused_and_no_model_is_called(ops_app) -> None:
    ops_app.models.add(planner())
    outcome = await ops_app.say(f"/ops draft {REQUEST}", staff=False)
    assert outcome.reply.denied and not outcome.reply.ok
    assert ops_app.models.served == []
    assert await _rows(ops_app.app.store) == []
    async with ops_app.app.store.session() as s:
        denied = (
            await s.execute(select(func.count()).where(AuditEntry.action == "staff.denied"))
        ).scalar_one()
    assert denied == 1


async def test_show_is_staff_only_too(ops_app) -> None:
    outcome = await ops_app.say("/ops show", staff=False)
    assert outcome.reply.denied


async def test_an_empty_request_gets_usage_and_runs_nothing(ops_app) -> None:
    outcome = await ops_app.say("/ops draft")
    assert not outcome.reply.ok and not outcome.reply.denied
    assert "<request>" in outcome.reply.text
    direct = await run_ops_draft(ops_app.conv, actor=staff_actor(), channel=CHANNEL, request="   ")
    assert not direct.ok and "비어 있습니다" in direct.text
    assert ops_app.models.served == [] and await _rows(ops_app.app.store) == []


async def test_an_oversized_request_is_refused_with_the_limit(ops_app) -> None:
    outcome = await ops_app.say("/ops draft " + "공지문 " * 600)
    assert not outcome.reply.ok
    assert "2,000자" in outcome.reply.text and "너무 깁니다" in outcome.reply.text
    assert ops_app.models.served == [] and await _rows(ops_app.app.store) == []


async def test_a_capped_draft_is_delivered_and_stored_as_capped(ops_app) -> None:
    ops_app.models.add(
        planner(), worker({"final": DRAFT_1}), reviewer(REJECT), worker({"final": DRAFT_2}), reviewer(REJECT)
    )
    outcome = await ops_app.say(f"/ops draft {REQUEST}")
    assert outcome.reply.ok and DRAFT_2 in outcome.reply.text
    assert "검토 한도" in outcome.reply.text and "예산" in outcome.reply.text
    (row,) = await _rows(ops_app.app.store)
    assert (row.status, row.reflection_count, row.draft, row.missing) == (
        "capped",
        2,
        DRAFT_2,
        ["영향 주문 수", "예산"],
    )


async def test_a_failing_step_returns_the_best_draft_and_names_the_step(ops_app) -> None:
    ops_app.models.add(
        planner(), worker({"final": DRAFT_1}), reviewer(REJECT), worker({"error": "upstream 503"})
    )
    outcome = await ops_app.say(f"/ops draft {REQUEST}")
    reply = outcome.reply
    assert not reply.ok
    assert "worker step failed" in reply.text and "초안 작성 단계 실패" in reply.text
    assert DRAFT_1 in reply.text and "최선 초안" in reply.text
    (row,) = await _rows(ops_app.app.store)
    assert (row.status, row.failed_step, row.draft) == ("failed", "worker", DRAFT_1)
    assert "upstream 503" in (row.error or "")


async def test_a_failing_planner_says_no_draft_was_produced(ops_app) -> None:
    ops_app.models.add(ScriptedLLM([{"error": "connection refused"}]))
    reply = (await ops_app.say(f"/ops draft {REQUEST}")).reply
    assert not reply.ok and "planner step failed" in reply.text and "초안을 만들지 못했습니다" in reply.text
    (row,) = await _rows(ops_app.app.store)
    assert (row.status, row.failed_step, row.draft) == ("failed", "planner", "")


async def test_a_long_draft_goes_into_an_attachment(ops_app) -> None:
    long_draft = "## 공지문\n" + "배송 지연으로 불편을 드려 죄송합니다. " * 120 + "\n## 끝"
    ops_app.models.add(planner(), worker({"final": long_draft}), reviewer(ACCEPT))
    reply = (await ops_app.say(f"/ops draft {REQUEST}")).reply
    assert len(reply.text) <= REPLY_LIMIT and "draft.md" in reply.text
    name, text = reply.data["attachment"]
    assert name == "draft.md" and long_draft in text and PLAN in text


async def test_show_gives_the_latest_draft_or_the_one_asked_for(ops_app) -> None:
    empty = (await ops_app.say("/ops show")).reply
    assert empty.ok and "없습니다" in empty.text
    ops_app.models.add(planner(), worker({"final": DRAFT_1}), reviewer(ACCEPT))
    await ops_app.say(f"/ops draft {REQUEST}")
    ops_app.models.add(
        planner("1. 시즌 일정\n2. 보상 테이블"), worker({"final": "시즌 이벤트 기획안"}), reviewer(ACCEPT)
    )
    await ops_app.say("/ops draft 신규 시즌 이벤트 기획 (일정, 보상 테이블)")
    latest = (await ops_app.say("/ops show")).reply
    assert (
        latest.data["draft_id"] == 2 and "시즌 이벤트 기획안" in latest.text and "보상 테이블" in latest.text
    )
    first = (await ops_app.say("/ops show 1")).reply
    assert first.data["draft_id"] == 1 and DRAFT_1 in first.text and PLAN in first.text
    assert first.data["progress"] and first.data["status"] == "accepted"
    missing = (await ops_app.say("/ops show 99")).reply
    assert not missing.ok and "#99" in missing.text


async def test_an_attached_model_registry_picks_each_steps_model(ops_app) -> None:
    fast = planner()
    main = ScriptedLLM([{"final": DRAFT_2}], structured=ACCEPT)
    registry = ModelRegistry()
    registry.register("main-model", main, roles=["main"])
    registry.register("fast-model", fast, roles=["fast"])
    ops_app = await ops_app.with_registry(registry)
    reply = (await ops_app.say(f"/ops draft {REQUEST}")).reply
    assert reply.ok and DRAFT_2 in reply.text
    assert fast.calls == {"loop": 1} and main.calls == {"loop": 1, "structured": 1}
    assert ops_app.models.served == [], "with a registry the llm_factory is not used"
    assert any("model: fast" in line for line in reply.data["progress"])


async def test_a_channel_can_stream_progress_through_the_invocation(ops_app) -> None:
    ops_app.models.add(planner(), worker({"final": DRAFT_2}), reviewer(ACCEPT))
    shown: list[str] = []
    cmd = ops_app.conv.staff.commands["ops draft"]
    inv = Invocation(
        actor=staff_actor(), channel=CHANNEL, conversations=ops_app.conv, command=cmd, progress=shown.append
    )
    reply = await cmd_ops_draft(inv, {"request": REQUEST})
    assert reply.ok and shown == reply.data["progress"] and len(shown) == 6


async def test_ops_draft_events_reach_who_watches_the_thread_and_never_the_process_hooks(
    seeded_store, policy_index, models, tmp_path
) -> None:
    process: list[Any] = []  # the process's hooks (metrics): conversation runs only, as before
    app = await build_app(
        load_settings(ARCA_DATA_DIR=str(tmp_path)),
        llm_factory=models,
        store=seeded_store,
        policy_index=policy_index,
        clock=lambda: FIXED_NOW,
        hooks=(EventHook(process.append),),
    )
    conv = app.conversations
    staff = await conv.resolve_actor("42", {STAFF_ROLE})

    def queue_draft() -> None:
        models.add(
            planner(),
            worker({"tool": "order_stats", "args": {"status": "delayed"}}, {"final": DRAFT_2}),
            reviewer(ACCEPT),
        )

    watched: list[Any] = []
    queue_draft()
    with conv.watch(CHANNEL, EventHook(watched.append)):
        outcome = await conv.handle(Incoming(CHANNEL, staff, f"/ops draft {REQUEST}"), RecordingSurface())
    assert outcome.kind == "command" and outcome.reply.ok
    tools = [e.tool_name for e in watched if e.type == "iteration" and e.status == "done"]
    assert tools == ["order_stats"]

    seen = len(watched)
    queue_draft()  # nobody watches: the draft is made all the same, and its events go nowhere
    again = await conv.handle(Incoming(CHANNEL, staff, f"/ops draft {REQUEST}"), RecordingSurface())
    assert again.kind == "command" and again.reply.ok
    assert len(watched) == seen and process == []
