"""The whole planner → worker → reflection graph with scripted models: accepted, sent back, capped,
failing steps, and a step running on its own model."""

from __future__ import annotations

import pytest

from bot.llm import ModelRequest, around
from bot.llm.registry import ModelRegistry
from bot.llm.scripted import ScriptedLLM
from bot.ops.graph import OpsGraph
from bot.ops.prompts import PLANNER_SYSTEM, REFLECTION_SYSTEM, WORKER_SYSTEM
from bot.ops.state import OpsState
from bot.ops.steps import OpsConfig
from tests.support.ops import ACCEPT, DRAFT_1, DRAFT_2, PLAN, REJECT, REQUEST, planner, reviewer, worker


def _calls(llms: list[ScriptedLLM]) -> int:
    return sum(sum(llm.calls.values()) for llm in llms)


def _system_prompts(llm: ScriptedLLM) -> set[str]:
    return {str(r.messages[0]["content"]).split("\n", 1)[0] for r in llm.requests}


async def test_a_draft_accepted_at_once_takes_three_steps(make_env, models) -> None:
    models.add(planner(), worker({"final": DRAFT_2}), reviewer(ACCEPT))
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env())
    assert state.status == "accepted"
    assert (state.plan, state.draft, state.reflection_count) == (PLAN, DRAFT_2, 1)
    assert [r.step for r in state.history] == ["planner", "worker", "reflection"]
    assert models.queue == [] and _calls(models.served) == 3


async def test_sent_back_once_then_capped_delivers_the_second_draft(make_env, models) -> None:
    second_worker = worker({"final": DRAFT_2})
    models.add(planner(), worker({"final": DRAFT_1}), reviewer(REJECT), second_worker, reviewer(REJECT))
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(config=OpsConfig(max_reflections=1)))
    assert state.status == "capped"
    assert state.reflection_count == 2
    assert state.draft == DRAFT_2, "the latest draft is delivered even though it was not accepted"
    assert state.missing == ("영향 주문 수", "예산")
    assert [r.step for r in state.history] == ["planner", "worker", "reflection", "worker", "reflection"]
    revision_query = second_worker.requests[0].messages[-1]["content"]
    assert DRAFT_1 in revision_query and "- 예산" in revision_query
    assert models.queue == []


async def test_sent_back_once_then_accepted(make_env, models) -> None:
    models.add(
        planner(), worker({"final": DRAFT_1}), reviewer(REJECT), worker({"final": DRAFT_2}), reviewer(ACCEPT)
    )
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(config=OpsConfig(max_reflections=1)))
    assert (state.status, state.reflection_count, state.draft, state.missing) == ("accepted", 2, DRAFT_2, ())


async def test_a_reviewer_that_never_accepts_stops_at_the_cap_with_the_expected_calls(
    make_env, models
) -> None:
    rounds = [(worker({"final": f"초안 {i}"}), reviewer(REJECT)) for i in range(1, 4)]
    never_used = reviewer(REJECT)
    models.add(planner(), *[llm for pair in rounds for llm in pair], never_used)
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(config=OpsConfig(max_reflections=2)))
    assert state.status == "capped"
    assert state.reflection_count == 3  # two send-backs, then the cap
    assert state.draft == "초안 3"
    # planner 1 + (worker 1 + reflection 1) × 3 rounds; the fourth reviewer was never asked.
    assert models.queue == [never_used] and never_used.requests == []
    assert _calls(models.served) == 7
    assert [r.step for r in state.history].count("worker") == 3


async def test_max_reflections_zero_never_sends_a_draft_back(make_env, models) -> None:
    models.add(planner(), worker({"final": DRAFT_1}), reviewer(REJECT))
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(config=OpsConfig(max_reflections=0)))
    assert (state.status, state.reflection_count, state.draft) == ("capped", 1, DRAFT_1)


async def test_each_step_runs_on_the_model_its_hint_names(make_env) -> None:
    small = planner()
    big = ScriptedLLM([{"final": DRAFT_2}], structured=ACCEPT)
    registry = ModelRegistry()
    registry.register("small", small, roles=["fast"])
    registry.register("big", big, roles=["main"])
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(registry=registry))
    assert state.status == "accepted"
    assert small.calls == {"loop": 1}
    assert _system_prompts(small) == {PLANNER_SYSTEM.split("\n", 1)[0]}
    assert big.calls == {"loop": 1, "structured": 1}
    first_lines = {p.split("\n", 1)[0] for p in (PLANNER_SYSTEM, WORKER_SYSTEM, REFLECTION_SYSTEM)}
    big_prompts = {line for line in _system_prompts(big) if line in first_lines}
    assert PLANNER_SYSTEM.split("\n", 1)[0] not in big_prompts


async def test_a_hint_naming_a_model_overrides_the_role(make_env) -> None:
    small = ScriptedLLM([{"raw": PLAN}, {"final": DRAFT_2}], structured=ACCEPT)
    big = ScriptedLLM([])
    registry = ModelRegistry()
    registry.register("big", big, roles=["main"])
    registry.register("small", small, roles=["fast"])
    config = OpsConfig(planner_model="small", worker_model="small", reflection_model="fast")
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(registry=registry, config=config))
    assert state.status == "accepted"
    assert big.requests == [] and small.calls == {"loop": 2, "structured": 1}


async def test_a_failing_planner_ends_the_run_and_names_the_step(make_env, models) -> None:
    unused = worker({"final": DRAFT_1})
    models.add(worker({"error": "upstream 503"}), unused)
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env())
    assert (state.status, state.failed_step, state.draft) == ("failed", "planner", "")
    assert "LLMError" in (state.error or "") and "upstream 503" in (state.error or "")
    assert models.queue == [unused]


async def test_a_worker_failing_on_the_revision_keeps_the_best_draft(make_env, models) -> None:
    models.add(planner(), worker({"final": DRAFT_1}), reviewer(REJECT), worker({"error": "timeout"}))
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(config=OpsConfig(max_reflections=1)))
    assert (state.status, state.failed_step, state.draft) == ("failed", "worker", DRAFT_1)
    assert state.reflection_count == 1
    assert "worker" in state.history[-1].text


def adapter_bug(request: ModelRequest) -> None:
    """Structured calls raise something other than LLMError (a broken adapter)."""
    if request.purpose == "structured":
        raise RuntimeError("adapter bug")


async def test_a_reflection_that_raises_keeps_the_draft_and_names_the_step(make_env, models) -> None:
    models.add(planner(), worker({"final": DRAFT_1}), around(ScriptedLLM([]), adapter_bug))
    state = await OpsGraph().run(OpsState(request=REQUEST), make_env())
    assert (state.status, state.failed_step, state.draft) == ("failed", "reflection", DRAFT_1)
    assert state.error == "RuntimeError: adapter bug"


async def test_progress_streams_the_plan_each_review_and_the_end(make_env, models) -> None:
    models.add(
        planner(), worker({"final": DRAFT_1}), reviewer(REJECT), worker({"final": DRAFT_2}), reviewer(ACCEPT)
    )
    lines: list[str] = []

    async def sink(line: str) -> None:
        lines.append(line)

    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(), progress=sink)
    finished = [line for line in lines if not line.startswith("⏳")]
    assert finished == [r.text for r in state.history]
    assert PLAN in finished[0]
    assert finished[1].startswith("✍ 초안 1차 완성") and finished[3].startswith("✍ 초안 2차 완성")
    assert finished[2].startswith("↩ 검토 1회차") and "예산" in finished[2]
    assert finished[4].startswith("✅ 검토 2회차")
    assert sum(line.startswith("⏳") for line in lines) == 5


async def test_a_broken_progress_sink_does_not_lose_the_draft(make_env, models) -> None:
    models.add(planner(), worker({"final": DRAFT_2}), reviewer(ACCEPT))

    def sink(line: str) -> None:
        raise OSError("display gone")

    state = await OpsGraph().run(OpsState(request=REQUEST), make_env(), progress=sink)
    assert (state.status, state.draft) == ("accepted", DRAFT_2)


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_the_graph_runs_in_both_tool_modes(make_env, models, mode) -> None:
    models.add(
        planner(mode=mode),
        worker({"tool": "coupon_totals", "args": {}}, {"final": DRAFT_2}, mode=mode),
        reviewer(ACCEPT, mode=mode),
    )
    state = await OpsGraph().run(
        OpsState(request=REQUEST), make_env(config=OpsConfig(use_native_tools=mode == "native"))
    )
    assert (state.status, state.draft) == ("accepted", DRAFT_2)
    assert state.evidence and state.evidence[0].startswith("coupon_totals({}) → [OK]")
