"""ThreadMemory and the engine's persistence: resumable, API-valid histories across runs and restarts."""

from __future__ import annotations

import asyncio

import pytest

from bot.engine import ReActAgent
from bot.engine.context import SUMMARY_PREFIX, summary_note
from bot.llm import ScriptedLLM, validate_history
from bot.llm.base import api_message
from bot.memory import INTERRUPTED_RESULT, ThreadMemory
from bot.store import Store
from tests.support.context import make_ctx
from tests.support.engine import MODES, CouponArgs, OrderArgs
from tools.base import ToolContext, ToolRegistry, ToolResult, tool

T = "test:thread"
LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}


def call_msg(*ids: str) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "lookup_order", "arguments": "{}"}}
            for i in ids
        ],
    }


def valid(messages: list[dict]) -> bool:
    return validate_history([api_message(m) for m in messages]) == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_new_agent_after_a_restart_continues_the_conversation(tools, tmp_path, mode):
    url = f"sqlite+aiosqlite:///{tmp_path / 'restart.db'}"
    store = Store(url)
    await store.open()
    memory = ThreadMemory(store)
    first = await ReActAgent(ScriptedLLM([{"final": "알겠습니다"}], mode=mode), tools).run(
        "내 주문은 ORD001이야", make_ctx(run_id="r1"), memory=memory
    )
    await memory.append_assistant(T, "알겠습니다. ORD001을 기억할게요.", run_id="r1")
    assert first.answer == "알겠습니다"
    await store.close()

    store = Store(url)  # a new process: nothing survives but the database file
    await store.open()
    llm = ScriptedLLM([LOOKUP, {"final": "배송 지연 상태입니다"}], mode=mode)
    result = await ReActAgent(llm, tools).run(
        "그 주문 상태가 뭐야?", make_ctx(run_id="r2"), memory=ThreadMemory(store)
    )
    seen = [m.get("content") for m in llm.requests[0].messages]
    assert "내 주문은 ORD001이야" in seen and "알겠습니다. ORD001을 기억할게요." in seen
    assert seen.index("내 주문은 ORD001이야") < seen.index("그 주문 상태가 뭐야?")
    assert result.answer == "배송 지연 상태입니다" and llm.violations == []
    await store.close()


@pytest.mark.parametrize("mode", MODES)
async def test_engine_persists_every_loop_message_as_appended_but_not_the_final_answer(tools, memory, mode):
    llm = ScriptedLLM([LOOKUP, {"final": "최종 답"}], mode=mode)
    await ReActAgent(llm, tools).run("ORD001?", make_ctx(), memory=memory)
    stored = await memory.load(T)
    assert stored[0]["content"] == "ORD001?" and stored[0]["pinned"] is True
    assert not any("최종 답" in (m.get("content") or "") for m in stored)
    if mode == "native":
        assert [m["role"] for m in stored] == ["user", "assistant", "tool"]
    else:
        assert [m["role"] for m in stored] == ["user", "assistant", "user"]
        assert stored[2]["content"].startswith("Observation from lookup_order: [OK]")
    assert valid(stored)


async def test_cancelling_a_run_mid_tool_leaves_a_valid_resumable_history(tools, memory, probe):
    llm = ScriptedLLM([{"tools": [LOOKUP, {"tool": "blocker"}]}, {"final": "never"}])
    task = asyncio.create_task(ReActAgent(llm, tools).run("ORD001 q", make_ctx(), memory=memory))
    await asyncio.wait_for(probe.blocked_started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stored = await memory.load(T)
    assert valid(stored)
    results = [m["content"] for m in stored if m["role"] == "tool"]
    assert results[0].startswith("[OK] 주문 ORD001") and results[1] == INTERRUPTED_RESULT
    # The next run on the thread works (the scripted model would refuse an invalid history).
    nxt = ScriptedLLM([{"final": "다시 시작"}])
    assert (
        await ReActAgent(nxt, tools).run("계속", make_ctx(run_id="r2"), memory=memory)
    ).answer == "다시 시작"
    assert nxt.violations == []


async def test_a_step_of_reads_is_stored_with_its_results_and_a_step_with_a_side_effect_before_it_runs(
    memory,
):
    seen: dict[str, list[str]] = {}

    async def stored_roles() -> list[str]:
        await asyncio.sleep(0.05)  # time for the thread writer to commit what it was handed
        return [m["role"] for m in await memory.load(T)]

    @tool(name="lookup_order")
    async def lookup_order(args: OrderArgs, ctx: ToolContext) -> ToolResult:
        """Look up an order."""
        seen["read"] = await stored_roles()
        return ToolResult(True, "OK", f"주문 {args.order_id}: 배송 지연")

    @tool(name="issue_coupon", side_effect=True)
    async def issue_coupon(args: CouponArgs, ctx: ToolContext) -> ToolResult:
        """Issue a coupon."""
        seen["side_effect"] = await stored_roles()
        return ToolResult(True, "ISSUED", f"{args.order_id}에 {args.amount:,}원 쿠폰 발급")

    llm = ScriptedLLM(
        [LOOKUP, {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 5000}}, {"final": "발급"}]
    )
    tools = ToolRegistry([lookup_order, issue_coupon])
    result = await ReActAgent(llm, tools).run("ORD001 5000원 쿠폰 주세요", make_ctx(), memory=memory)
    assert result.answer == "발급" and llm.violations == []
    # The read's step is not stored yet while it runs: it goes with its result, in one transaction.
    assert seen["read"] == ["user"]
    # The coupon's step is stored before the coupon is issued (`load` closes it as interrupted meanwhile).
    assert seen["side_effect"] == ["user", "assistant", "tool", "assistant", "tool"]
    stored = await memory.load(T)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant", "tool"]
    assert stored[4]["content"].startswith("[ISSUED]") and valid(stored)


async def test_load_closes_a_dangling_tool_call_left_by_a_crash(memory):
    await memory.append(T, {"role": "user", "content": "q"}, kind="query")
    await memory.append(T, call_msg("c1", "c2"), kind="step")
    await memory.append(T, {"role": "tool", "tool_call_id": "c1", "content": "[OK] done"}, kind="tool_result")
    # crash: c2 never got a result; the next user message arrives
    await memory.append(T, {"role": "user", "content": "still there?"}, kind="query")
    stored = await memory.load(T)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "tool", "user"]
    assert stored[3] == {"role": "tool", "tool_call_id": "c2", "content": INTERRUPTED_RESULT}
    assert valid(stored)


async def test_load_drops_results_whose_call_is_gone_and_repeated_call_ids(memory):
    await memory.append(T, {"role": "tool", "tool_call_id": "ghost", "content": "orphan"})
    await memory.append(T, {"role": "user", "content": "q"})
    await memory.append(T, call_msg("c1"))
    await memory.append(T, {"role": "tool", "tool_call_id": "c1", "content": "one"})
    await memory.append(T, call_msg("c1"))
    await memory.append(T, {"role": "tool", "tool_call_id": "c1", "content": "two"})
    stored = await memory.load(T)
    assert [m.get("content") for m in stored] == ["q", None, "one"]
    assert valid(stored)


async def test_reset_hides_earlier_messages_from_load_and_recent(memory):
    await memory.append(T, {"role": "user", "content": "before"}, kind="query")
    await memory.append_assistant(T, "old answer")
    await memory.reset(T)
    await memory.append(T, {"role": "user", "content": "after"}, kind="query")
    assert [m["content"] for m in await memory.load(T)] == ["after"]
    assert [r.content for r in await memory.recent(T)] == ["after"]
    await memory.reset(T)
    assert await memory.load(T) == []


async def test_recent_lists_only_what_people_wrote_and_read(tools, memory):
    llm = ScriptedLLM([LOOKUP, {"final": "x"}], mode="json")
    await ReActAgent(llm, tools).run("ORD001 알려줘", make_ctx(), memory=memory)
    await memory.append_assistant(T, "ORD001은 배송 지연입니다.")
    rows = await memory.recent(T)
    assert [(r.role, r.content) for r in rows] == [
        ("user", "ORD001 알려줘"),
        ("assistant", "ORD001은 배송 지연입니다."),
    ]
    assert [r.content for r in await memory.recent(T, limit=1)] == ["ORD001은 배송 지연입니다."]


async def test_a_summary_replaces_the_messages_up_to_its_id(memory):
    first = await memory.append(T, {"role": "user", "content": "old ORD001"})
    upto = await memory.append_assistant(T, "old answer")
    await memory.append(T, {"role": "user", "content": "new"})
    await memory.save_summary(T, upto, summary_note("ORD001 was discussed"))
    stored = await memory.load(T)
    assert stored[0]["content"] == f"{SUMMARY_PREFIX}\nORD001 was discussed"
    assert [m["content"] for m in stored[1:]] == ["new"] and first < upto
    await memory.reset(T)  # a reset also hides the summary
    assert await memory.load(T) == []


async def test_threads_are_isolated(memory):
    await memory.append("a", {"role": "user", "content": "for a"})
    await memory.append("b", {"role": "user", "content": "for b"})
    assert [m["content"] for m in await memory.load("a")] == ["for a"]


async def test_a_memory_that_holds_a_thread_still_sees_what_changed_since_its_last_load(memory, db):
    """`load` reads only the rows after those it holds; what others appended, a reset, a summary and a row
    committed late below the last id it read (PostgreSQL hands ids out before commit) all show."""
    from sqlalchemy import insert

    from bot.store.models import ThreadMessage

    async def row(message_id: int, content: str) -> None:
        async with db.session() as s:
            await s.execute(
                insert(ThreadMessage).values(id=message_id, thread_id=T, role="user", content=content)
            )
            await s.commit()

    await row(10, "ten")
    await row(30, "thirty")
    assert [m["content"] for m in await memory.load(T)] == ["ten", "thirty"]
    await ThreadMemory(db).append(T, {"role": "user", "content": "by another process"})
    await memory.append(T, call_msg("c1"))
    loaded = await memory.load(T)
    assert [m["content"] for m in loaded[:3]] == ["ten", "thirty", "by another process"]
    assert loaded[3]["tool_calls"][0]["id"] == "c1" and loaded[4]["content"] == INTERRUPTED_RESULT
    loaded[0]["content"] = "changed by a run"  # a run's own copy: what the memory holds stays as stored
    await row(20, "committed late")
    assert [m["content"] for m in (await memory.load(T))[:4]] == [
        "ten",
        "committed late",
        "thirty",
        "by another process",
    ]
    last = (await memory.load(T))[-2]["_id"]
    await memory.save_summary(T, last, summary_note("all of it"))
    assert [m["content"] for m in await memory.load(T)] == [f"{SUMMARY_PREFIX}\nall of it"]
    await memory.append(T, {"role": "user", "content": "new"})
    assert [m["content"] for m in await memory.load(T)][1:] == ["new"]
    await ThreadMemory(db).reset(T)
    assert await memory.load(T) == []


async def test_load_with_derives_each_stored_row_once_and_never_a_message_the_repair_rewrote(memory):
    """The engine keeps each loaded message's API form and token estimate with the held thread: a row is
    derived once while the thread is held, a message the repair wrote or changed gets no value, and a
    reset starts over."""
    from bot.engine.context import request_share

    derived: list[str | None] = []

    def share(message: dict) -> tuple[dict, float]:
        derived.append(message.get("content"))
        return request_share(message)

    await memory.append(T, {"role": "user", "content": "q"}, pinned=True)
    await memory.append(T, call_msg("c1", "c1"))  # a repeated call id: the repair rewrites the message
    loaded, values = await memory.load_with(T, share)
    assert [m["role"] for m in loaded] == ["user", "assistant", "tool"]
    assert derived == ["q"]  # the rewritten call and the synthetic result are the run's to estimate
    copy, (api, tokens) = values[id(loaded[0])]
    assert copy is loaded[0] and (api, tokens) == request_share(loaded[0]) and "pinned" not in api
    assert id(loaded[1]) not in values and id(loaded[2]) not in values

    await memory.append(T, {"role": "tool", "tool_call_id": "c1", "content": "[OK] one"})
    await memory.append(T, {"role": "user", "content": "again"})
    loaded, values = await memory.load_with(T, share)
    assert derived == ["q", "[OK] one", "again"]  # only the new rows
    assert [values[id(m)][1] for m in loaded if id(m) in values] == [
        request_share(m) for m in loaded if m["role"] != "assistant"
    ]

    await memory.reset(T)
    await memory.append(T, {"role": "user", "content": "q"})
    await memory.load_with(T, share)
    assert derived == ["q", "[OK] one", "again", "q"]
