"""Each ops step alone, driven with a hand-built state: it does its one job and returns only what it changes."""

from __future__ import annotations

import pytest

from bot.ops.graph import END, after_reflection
from bot.ops.prompts import PLANNER_SYSTEM
from bot.ops.state import OpsState, merge
from bot.ops.steps import OpsConfig, StepFailed, plan_step, reflect_step, work_step
from tests.support.ops import ACCEPT, DRAFT_1, DRAFT_2, PLAN, REJECT, REQUEST, planner, reviewer, worker


async def test_planner_returns_only_the_plan(make_env, models) -> None:
    llm = planner()
    models.add(llm)
    changes = await plan_step(OpsState(request=REQUEST), make_env())
    assert changes == {"plan": PLAN}
    sent = llm.requests[0].messages
    assert sent[0]["content"] == PLANNER_SYSTEM and "Do NOT write the document" in PLANNER_SYSTEM
    assert REQUEST in sent[1]["content"]
    assert llm.requests[0].tools is None, "the planner plans; it gets no tools to do the work with"


async def test_planner_unwraps_a_json_final_answer(make_env, models) -> None:
    # Without tools the scripted model (like some local ones) answers in the engine's JSON action form.
    models.add(worker({"final": PLAN}))
    changes = await plan_step(OpsState(request=REQUEST), make_env())
    assert changes == {"plan": PLAN}


async def test_an_empty_plan_fails_the_planner(make_env, models) -> None:
    models.add(planner("   "))
    with pytest.raises(StepFailed, match="empty plan"):
        await plan_step(OpsState(request=REQUEST), make_env())


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_worker_returns_the_draft_and_the_figures_it_looked_up(make_env, models, mode) -> None:
    llm = worker({"tool": "order_stats", "args": {"status": "delayed"}}, {"final": DRAFT_2}, mode=mode)
    models.add(llm)
    env = make_env(config=OpsConfig(use_native_tools=mode == "native"))
    state = OpsState(request=REQUEST, plan=PLAN)
    changes = await work_step(state, env)
    assert set(changes) == {"draft", "evidence"}
    assert changes["draft"] == DRAFT_2
    (evidence,) = changes["evidence"]
    assert evidence.startswith('order_stats({"status": "delayed"}) → [OK]') and "배송 지연" in evidence
    assert PLAN in llm.requests[0].messages[-1]["content"]


async def test_worker_without_look_ups_changes_only_the_draft(make_env, models) -> None:
    models.add(worker({"final": DRAFT_1}))
    changes = await work_step(OpsState(request=REQUEST, plan=PLAN), make_env())
    assert changes == {"draft": DRAFT_1}


async def test_a_revision_shows_the_worker_its_draft_and_what_is_missing(make_env, models) -> None:
    llm = worker({"final": DRAFT_2})
    models.add(llm)
    state = OpsState(
        request=REQUEST,
        plan=PLAN,
        draft=DRAFT_1,
        missing=("영향 주문 수", "예산"),
        reflection="예산이 없습니다.",
        reflection_count=1,
    )
    changes = await work_step(state, make_env())
    assert changes == {"draft": DRAFT_2}
    query = llm.requests[0].messages[-1]["content"]
    assert DRAFT_1 in query and "- 예산" in query and "예산이 없습니다." in query


async def test_a_worker_whose_model_fails_raises_step_failed(make_env, models) -> None:
    models.add(worker({"error": "upstream 503"}))
    with pytest.raises(StepFailed, match="llm_error"):
        await work_step(OpsState(request=REQUEST, plan=PLAN), make_env())


async def test_reflection_increments_the_counter_and_returns_only_its_keys(make_env, models) -> None:
    llm = reviewer(REJECT)
    models.add(llm)
    state = OpsState(request=REQUEST, plan=PLAN, draft=DRAFT_1, reflection_count=2)
    changes = await reflect_step(state, make_env())
    assert changes == {
        "reflection": REJECT["feedback"],
        "accepted": False,
        "missing": ("영향 주문 수", "예산"),
        "reflection_count": 3,
    }
    assert llm.calls["structured"] == 1
    prompt = llm.requests[0].messages[-1]["content"]
    assert REQUEST in prompt and DRAFT_1 in prompt


async def test_reflection_starts_counting_from_zero(make_env, models) -> None:
    models.add(reviewer(ACCEPT))
    changes = await reflect_step(OpsState(request=REQUEST, plan=PLAN, draft=DRAFT_2), make_env())
    assert changes["reflection_count"] == 1 and changes["accepted"] is True and changes["missing"] == ()


async def test_an_accepted_verdict_that_lists_missing_items_is_not_accepted(make_env, models) -> None:
    models.add(reviewer({"accepted": True, "missing": ["예산"], "feedback": ""}))
    changes = await reflect_step(OpsState(request=REQUEST, plan=PLAN, draft=DRAFT_1), make_env())
    assert changes["accepted"] is False and changes["missing"] == ("예산",)


async def test_an_unreadable_verdict_fails_the_reflection(make_env, models) -> None:
    models.add(reviewer({"verdict": "looks fine"}))
    with pytest.raises(StepFailed, match="verdict could not be read"):
        await reflect_step(OpsState(request=REQUEST, plan=PLAN, draft=DRAFT_1), make_env())


def test_the_cap_ends_the_loop_whatever_the_verdict_says() -> None:
    config = OpsConfig(max_reflections=1)
    first_rejection = OpsState(request=REQUEST, reflection_count=1, accepted=False)
    assert after_reflection(first_rejection, config) == "worker"
    assert after_reflection(merge(first_rejection, {"accepted": True}), config) == END
    assert after_reflection(merge(first_rejection, {"reflection_count": 2}), config) == END
    assert (
        after_reflection(OpsState(request=REQUEST, reflection_count=1), OpsConfig(max_reflections=0)) == END
    )


def test_merge_rejects_a_key_the_state_does_not_have() -> None:
    with pytest.raises(KeyError, match="paln"):
        merge(OpsState(request=REQUEST), {"paln": PLAN})
