"""ContextGuard: offline estimate, calibration, compaction that keeps pinned messages and tool pairs."""

from __future__ import annotations

import pytest

from bot.engine import ContextGuard, ReActAgent, estimate_tokens
from bot.engine.context import SUMMARY_PREFIX, TRUNCATION_NOTE
from bot.llm import LLMError, ModelRequest, ScriptedLLM, around, validate_history
from bot.llm.base import LLMResult, ToolCall, Usage, api_message
from tests.support.context import make_ctx
from tests.support.engine import MODES, queued

LOOKUP = {"tool": "lookup_order", "args": {"order_id": "ORD001"}}


def old_history(turns: int = 12) -> list[dict]:
    """Earlier conversation: each turn mentions an exact id and amount that a summary must keep."""
    history = []
    for i in range(turns):
        history.append(
            {
                "role": "user",
                "content": f"Earlier question {i} about ORD7{i:02d}, amount 1{i},000 KRW. " + "filler " * 40,
            }
        )
        history.append({"role": "assistant", "content": f"Earlier answer {i}. " + "words " * 40})
    return history


def tool_pair(n: int) -> list[dict]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{n}", "type": "function", "function": {"name": "lookup_order", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": f"c{n}", "content": "result " * 60},
    ]


def test_estimate_weights_hangul_heavier_than_ascii_and_counts_tool_schemas():
    ascii_msg = [{"role": "user", "content": "a" * 400}]
    hangul_msg = [{"role": "user", "content": "가" * 400}]
    assert estimate_tokens(hangul_msg) > 3 * estimate_tokens(ascii_msg)
    tools = [{"type": "function", "function": {"name": "x", "description": "d" * 400}}]
    assert estimate_tokens(ascii_msg, tools) > estimate_tokens(ascii_msg) + 90


def test_calibration_follows_the_reported_prompt_tokens():
    guard = ContextGuard(10_000)
    msgs = [{"role": "user", "content": "hello world " * 50}]
    raw = guard.estimate(msgs)
    guard.calibrate(raw, raw * 2)
    assert guard.estimate(msgs) == pytest.approx(raw * 2, rel=0.02)
    guard.calibrate(raw, 0)  # no usage reported: no change
    assert guard.estimate(msgs) == pytest.approx(raw * 2, rel=0.02)


async def test_compaction_never_separates_tool_calls_from_their_results():
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q", "pinned": True}]
    for n in range(8):
        messages += tool_pair(n)
    guard = ContextGuard(1_000)
    compaction = await guard.compact(messages, ScriptedLLM())
    assert compaction is not None and compaction.kept_messages < compaction.original_messages
    kept = [api_message(m) for m in compaction.messages]
    assert validate_history(kept) == []
    assert kept[0]["content"] == "sys" and kept[1]["content"].startswith(SUMMARY_PREFIX)
    assert any(m.get("content") == "q" for m in kept)  # pinned survives


@pytest.mark.parametrize("mode", MODES)
async def test_compaction_summarises_old_messages_keeps_ids_pinned_query_and_emits_event(tools, mode):
    llm = ScriptedLLM([LOOKUP, LOOKUP, {"final": "ok"}], mode=mode)
    events = []
    agent = ReActAgent(llm, tools, context_window=1_500)
    result = await agent.run(
        "현재 질문: ORD001 상태?", make_ctx(), history=old_history(), on_event=events.append
    )
    compacts = [e for e in events if e.type == "compact"]
    assert compacts and compacts[0].original_messages > compacts[0].kept_messages and compacts[0].summarized
    assert llm.calls["compact"] >= 1 and llm.violations == []
    summary = next(
        m["content"] for m in result.messages if (m.get("content") or "").startswith(SUMMARY_PREFIX)
    )
    assert "ORD700" in summary and "10,000" in summary
    assert any(m.get("content") == "현재 질문: ORD001 상태?" and m.get("pinned") for m in result.messages)
    assert not any(
        "Earlier question 0 " in (m.get("content") or "")
        for m in result.messages
        if m["role"] == "user" and not m["content"].startswith(SUMMARY_PREFIX)
    )
    assert result.stopped_reason == "final_answer"


def summary_down(request: ModelRequest) -> None:
    if request.purpose == "compact":
        raise LLMError("summary model down")


@pytest.mark.parametrize("mode", MODES)
async def test_failed_summary_falls_back_to_truncation_and_the_run_goes_on(tools, mode):
    script = ScriptedLLM([LOOKUP, {"final": "ok"}], mode=mode)
    llm = around(script, summary_down)
    events = []
    result = await ReActAgent(llm, tools, context_window=1_500).run(
        "q", make_ctx(), history=old_history(), on_event=events.append
    )
    compact = next(e for e in events if e.type == "compact")
    assert compact.summarized is False
    assert any(m.get("content") == TRUNCATION_NOTE for m in result.messages)
    assert result.answer == "ok" and script.violations == []


async def test_agent_calibrates_its_estimate_against_reported_usage(tools):
    def replies(prompt_tokens: int) -> list:
        call = LLMResult(
            tool_calls=[ToolCall("c1", "lookup_order", '{"order_id": "ORD001"}')],
            usage=Usage(prompt_tokens, 5),
        )
        return [call, "summary ORD001", "done"]

    history = old_history(3)
    # The endpoint says the prompt is far bigger than our estimate: the guard must believe it and compact.
    big = queued(replies(50_000))
    events = []
    await ReActAgent(big, tools, context_window=4_000).run(
        "q", make_ctx(), history=history, on_event=events.append
    )
    assert any(e.type == "compact" for e in events)
    assert [c.purpose for c in big.requests] == ["loop", "compact", "loop"]
    # Same run with honest usage: no compaction.
    honest = queued([*replies(800)[:1], "done"])
    events = []
    await ReActAgent(honest, tools, context_window=4_000).run(
        "q", make_ctx(), history=history, on_event=events.append
    )
    assert not any(e.type == "compact" for e in events)


async def test_compaction_summary_is_persisted_and_starts_the_next_load(tools, memory):
    for i in range(6):
        # Stored pinned, as the engine stores every query: pins only protect the run that made them.
        await memory.append(
            "test:thread",
            {"role": "user", "content": f"old ORD9{i:02d} " + "filler " * 60},
            pinned=True,
            kind="query",
        )
        await memory.append_assistant("test:thread", "answer " * 60)
    llm = ScriptedLLM([LOOKUP, {"final": "ok"}])
    await ReActAgent(llm, tools, context_window=1_500).run("new question", make_ctx(), memory=memory)
    loaded = await memory.load("test:thread")
    assert loaded[0]["content"].startswith(SUMMARY_PREFIX) and "ORD900" in loaded[0]["content"]
    assert any(m.get("content") == "new question" for m in loaded)
    assert not any((m.get("content") or "").startswith("old ORD900") for m in loaded)


def test_a_run_estimates_its_tool_schemas_once_and_gets_the_same_figure():
    from bot.engine.context import tools_tokens

    msgs = [{"role": "user", "content": "주문 ORD001 배송이 늦어요"}]
    tools = [{"type": "function", "function": {"name": "x", "description": "설명 " * 50}}]
    once = tools_tokens(tools)
    assert estimate_tokens(msgs, tools_estimate=once) == estimate_tokens(msgs, tools)
    assert estimate_tokens(msgs, tools_estimate=0.0) == estimate_tokens(msgs)


async def test_a_request_built_from_cached_messages_is_estimated_as_a_fresh_one(tools, monkeypatch):
    """The run reuses the API copies and token shares of messages an earlier request sent: every loop
    request's estimate must still equal `estimate_tokens` of that request, across a compaction too."""
    from bot.engine.context import tools_tokens

    raw: list[int] = []
    calibrate = ContextGuard.calibrate

    def noted(self: ContextGuard, estimate: int, prompt_tokens: int) -> None:
        raw.append(estimate)
        calibrate(self, estimate, prompt_tokens)

    monkeypatch.setattr(ContextGuard, "calibrate", noted)
    llm = ScriptedLLM([LOOKUP, LOOKUP, {"final": "ok"}])
    recorded = around(llm, lambda request: None)
    await ReActAgent(recorded, tools, context_window=1_500).run(
        "ORD001 상태?", make_ctx(), history=old_history()
    )
    loops = [r for r in recorded.requests if r.purpose == "loop"]
    assert len(loops) == len(raw) >= 3 and any(r.purpose == "compact" for r in recorded.requests)
    for request, estimate in zip(loops, raw, strict=True):
        assert estimate == estimate_tokens(request.messages, tools_estimate=tools_tokens(request.tools))


def test_offered_schemas_follow_the_registry_s_tools(tools):
    """The schemas a run offers are built once per set of tool objects: the same tools in a new registry
    give the same list and figure as fresh ones, and a registry with other tools gets its own."""
    from bot.engine.context import offered_schemas, tools_tokens
    from tools.base import ToolRegistry

    schemas, estimate = offered_schemas(tools)
    again, again_estimate = offered_schemas(ToolRegistry(tools))
    assert schemas == again == tools.schemas() and estimate == again_estimate == tools_tokens(tools.schemas())
    fewer = tools.subset(tools.names[:1])
    fewer_schemas, fewer_estimate = offered_schemas(fewer)
    assert fewer_schemas == fewer.schemas() and fewer_estimate == tools_tokens(fewer.schemas())
    assert len(fewer_schemas) == 1 < len(schemas) and fewer_estimate < estimate
