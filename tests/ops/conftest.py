"""Fixtures for ops drafting: a staff actor, step environments over a real seeded store, scripted models,
and a full app (`build_app`) whose `llm_factory` serves queued ScriptedLLMs one per step."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.config import load_settings
from bot.ops.steps import OpsConfig, OpsEnv, StepModels
from bot.store import Store
from tests.support.context import make_ctx
from tests.support.ops import CHANNEL, FIXED_NOW, ModelQueue, OpsHarness, _ops_build, staff_actor
from tools.coupon_rules import CouponRules
from tools.ops_readonly import ops_worker_registry


@pytest.fixture
def models() -> ModelQueue:
    return ModelQueue()


@pytest.fixture
def make_env(seeded_store: Store, models: ModelQueue) -> Callable[..., OpsEnv]:
    """An `OpsEnv` over the seeded store; models from the queue unless a registry is given."""

    def make(*, registry: Any = None, config: OpsConfig | None = None) -> OpsEnv:
        ctx = make_ctx(
            staff_actor(),
            store=seeded_store,
            thread_id=CHANNEL,
            run_id="ops-test",
            clock=lambda: FIXED_NOW,
            rules=CouponRules(),
        )
        return OpsEnv(
            models=StepModels(registry, None if registry is not None else models),
            tools=ops_worker_registry(None),
            ctx=ctx,
            config=config or OpsConfig(),
        )

    return make


@pytest.fixture
async def ops_app(seeded_store: Store, policy_index: Any, models: ModelQueue, tmp_path: Any) -> OpsHarness:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path))
    return OpsHarness(app=await _ops_build(settings, seeded_store, policy_index, models, None), models=models)
