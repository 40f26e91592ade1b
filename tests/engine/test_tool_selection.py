"""Tool selection above the threshold: compact catalogue, at most six tools, fallback to the full set."""

from __future__ import annotations

import pytest

from bot.engine import ReActAgent
from bot.llm import LLMError, ModelRequest, ScriptedLLM, around
from tests.support.context import make_ctx
from tests.support.engine import MODES, make_many_tools

PICK = {"tool": "tool_07", "args": {"text": "x"}}


async def run(llm, registry, **kw):
    events = []
    result = await ReActAgent(llm, registry, **kw).run("7번 일을 해줘", make_ctx(), on_event=events.append)
    return result, events


def offered(llm) -> list[str]:
    first = next(r for r in llm.requests if r.purpose == "loop")
    if first.tools:
        return [t["function"]["name"] for t in first.tools]
    return [
        line.split(":")[0][2:]
        for line in first.messages[0]["content"].splitlines()
        if line.startswith("- tool_")
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_more_tools_than_the_threshold_selects_at_most_six_with_a_phase_event(mode):
    registry = make_many_tools(15)
    llm = ScriptedLLM([PICK, {"final": "ok"}], mode=mode)
    result, events = await run(llm, registry)
    phase = next(e for e in events if e.type == "phase")
    assert (phase.phase, phase.total_tools) == ("selecting_tools", 15)
    select = next(r for r in llm.requests if r.purpose == "select_tools")
    prompt = next(m["content"] for m in select.messages if m["content"].startswith("Tool catalogue"))
    catalogue = [line for line in prompt.splitlines() if line.startswith("tool_")]
    assert len(catalogue) == 15 and all(len(line) <= 80 for line in catalogue)
    names = offered(llm)
    assert "tool_07" in names and len(names) <= 6
    assert set(result.selected_tools) == set(names)
    assert result.codes == ["OK"]


async def test_at_or_below_the_threshold_no_selection_call_is_made():
    registry = make_many_tools(12)
    llm = ScriptedLLM([PICK, {"final": "ok"}])
    result, events = await run(llm, registry)
    assert llm.calls["select_tools"] == 0 and not any(e.type == "phase" for e in events)
    assert len(offered(llm)) == 12 and result.selected_tools is None


@pytest.mark.parametrize("mode", MODES)
async def test_selection_with_only_invalid_names_falls_back_to_the_full_set(mode):
    llm = ScriptedLLM([PICK, {"final": "ok"}], mode=mode, select=["no_such_tool", "also_not"])
    result, _ = await run(llm, make_many_tools(15))
    assert len(offered(llm)) == 15 and result.codes == ["OK"]


def selection_down(request: ModelRequest) -> None:
    if request.purpose == "select_tools":
        raise LLMError("selection model timed out")


@pytest.mark.parametrize("mode", MODES)
async def test_selection_failure_falls_back_to_the_full_set(mode):
    llm = around(ScriptedLLM([PICK, {"final": "ok"}], mode=mode), selection_down)
    result, _ = await run(llm, make_many_tools(15))
    assert len(offered(llm)) == 15 and result.stopped_reason == "final_answer"


async def test_selection_caps_a_greedy_pick_at_six():
    names = [f"tool_{i:02d}" for i in range(10)]
    llm = ScriptedLLM([PICK, {"final": "ok"}], select=names)
    await run(llm, make_many_tools(15))
    assert len(offered(llm)) == 6
