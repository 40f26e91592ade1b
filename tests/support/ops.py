"""What tests under tests/ops/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.app import App, build_app
from bot.conversations import Incoming, TurnOutcome
from bot.llm.scripted import ScriptedLLM
from bot.store import Store
from tests.support.surface import RecordingSurface
from tools.base import Actor

FIXED_NOW = datetime.fromisoformat("2026-12-01T10:00:00+09:00")
STAFF_ROLE = "Support Staff"
CHANNEL = "console:ops"

REQUEST = "배송 지연 사태 공지문과 보상안 초안 작성 (영향 주문 수, 예산 포함)"
PLAN = "1. 영향 주문 수 조회 (order_stats)\n2. 공지문 작성\n3. 보상안 작성\n4. 예산 산출 (coupon_totals)"
DRAFT_1 = "## 공지문\n배송 지연으로 불편을 드려 죄송합니다.\n## 보상안\n지연 주문에 쿠폰 지급"
DRAFT_2 = DRAFT_1 + "\n## 영향 주문 수\n6건\n## 예산\n6건 × 10,000원 = 60,000원"

ACCEPT = {"accepted": True, "missing": [], "feedback": "모든 항목 충족"}
REJECT = {
    "accepted": False,
    "missing": ["영향 주문 수", "예산"],
    "feedback": "영향 주문 수와 예산이 없습니다.",
}


def staff_actor() -> Actor:
    return Actor(discord_id="42", roles=frozenset({STAFF_ROLE}), is_staff=True, display_name="운영자")


def planner(plan: str = PLAN, **kw: Any) -> ScriptedLLM:
    return ScriptedLLM([{"raw": plan}], **kw)


def worker(*steps: dict[str, Any], **kw: Any) -> ScriptedLLM:
    return ScriptedLLM(list(steps), **kw)


def reviewer(verdict: dict[str, Any], **kw: Any) -> ScriptedLLM:
    return ScriptedLLM([], structured=verdict, **kw)


@dataclass
class ModelQueue:
    """An `llm_factory` that hands out the queued models in order, one per call (one per step)."""

    queue: list[Any] = field(default_factory=list)
    served: list[Any] = field(default_factory=list)

    def __call__(self) -> Any:
        if not self.queue:
            raise AssertionError("a step asked for a model but none was queued")
        llm = self.queue.pop(0)
        self.served.append(llm)
        return llm

    def add(self, *llms: Any) -> None:
        self.queue.extend(llms)


@dataclass
class OpsHarness:
    app: App
    models: ModelQueue

    @property
    def conv(self) -> Any:
        return self.app.conversations

    async def say(
        self, text: str, *, staff: bool = True, surface: RecordingSurface | None = None
    ) -> TurnOutcome:
        if staff:
            actor = await self.conv.resolve_actor("42", {STAFF_ROLE})
        else:
            actor = await self.conv.resolve_actor("9001", set())
        return await self.conv.handle(Incoming(CHANNEL, actor, text), surface or RecordingSurface())

    async def with_registry(self, registry: Any) -> OpsHarness:
        """An app on the same store and queue whose `/ops draft` steps take their models from `registry`."""
        app = await _ops_build(
            self.app.settings, self.app.store, self.app.policy_index, self.models, registry
        )
        return OpsHarness(app=app, models=self.models)


async def _ops_build(
    settings: Any, store: Store, policy_index: Any, models: ModelQueue, registry: Any
) -> App:
    return await build_app(
        settings,
        llm_factory=models,
        store=store,
        policy_index=policy_index,
        clock=lambda: FIXED_NOW,
        models=registry,
    )
