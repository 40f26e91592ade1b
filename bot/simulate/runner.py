"""One simulated run: a fresh database with the scenario's fixtures, the bot built as every channel
builds it, the simulated player and the bot taking turns through `Conversations`, then the grading."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.attachments.uploads import Upload
from bot.config import Settings
from bot.conversations import Incoming
from bot.conversations.hooks import RunHooks, RunInfo
from bot.conversations.recording import RecordingSurface
from bot.llm.base import Usage
from bot.simulate.grading import Verdict, grade, source_statuses
from bot.simulate.players import Exchange, ModelPlayer, ScriptedPlayer, SimulatedPlayer
from bot.simulate.recording import RecordedModel
from bot.simulate.scenario import Scenario
from bot.store import Store
from bot.store.end_state import read_end_state
from bot.store.incident_scope import IncidentScope
from bot.store.seed import apply_seed
from bot.vocabulary import ThreadId


@dataclass
class TurnLog:
    """One exchange as the report and a saved transcript show it."""

    player: str
    bot: str
    tools: list[tuple[str, str]] = field(default_factory=list)
    """(tool, result code) of every call the turn made."""
    steps: list[dict[str, Any]] = field(default_factory=list)
    """The bot model's choices, as transcript script steps."""


@dataclass
class RunResult:
    scenario: str
    path: str
    trial: int
    passed: bool
    failures: list[str]
    stopped: str
    """Why the conversation ended: done, gave up, no more lines, turn cap, …"""
    seconds: float
    tokens: dict[str, int]
    rubric: list[dict[str, Any]]
    turns: list[TurnLog]
    end_coupons: list[tuple[str, int]] = field(default_factory=list)
    """(order id, amount) of the active coupons at the end."""


@dataclass
class _ToolWatch(RunHooks):
    calls: list[tuple[str, str]] = field(default_factory=list)

    async def on_event(self, run: RunInfo, event: Any) -> None:
        if getattr(event, "type", "") == "iteration" and getattr(event, "status", None) == "done":
            self.calls.append((str(getattr(event, "tool_name", "")), str(getattr(event, "code", ""))))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c == "-" else "-" for c in text.lower()).strip("-")[:40] or "case"


class Simulator:
    """Runs scenarios. `bot_model_factory()` gives the bot's model for one run (a fresh one, so its
    token count is the run's); `player_model` plays the players and judges rubrics (None: scripted
    players only, rubric lines reported as not judged)."""

    def __init__(
        self,
        settings: Settings,
        *,
        bot_model_factory: Callable[[], Any],
        player_model: Any = None,
        policy_index: Any = None,
    ) -> None:
        self.settings = settings
        self.bot_model_factory = bot_model_factory
        self.player_model = player_model
        self._index = policy_index

    @property
    def policy_index(self) -> Any:
        if self._index is None:
            from bot.app import make_policy_index

            self._index = make_policy_index(self.settings)
        return self._index

    def _player(self, scenario: Scenario) -> SimulatedPlayer:
        if self.player_model is not None:
            return ModelPlayer(scenario.player, self.player_model)
        return ScriptedPlayer(scenario.player)

    def _coupon_rules(self, scenario: Scenario) -> Any:
        if not scenario.coupon_rules:
            return None
        from bot.app import coupon_rules_path
        from tools.coupon_rules import CouponRules, load_coupon_rules

        base = load_coupon_rules(coupon_rules_path(self.settings))
        return CouponRules.model_validate({**base.model_dump(), **scenario.coupon_rules})

    async def run(self, scenario: Scenario, trial: int = 1) -> RunResult:
        from bot.app import build_app

        started = time.perf_counter()
        player = self._player(scenario)
        model = self.bot_model_factory()
        recorded = RecordedModel(model)
        history: list[Exchange] = []
        logs: list[TurnLog] = []
        stopped = "turn cap"
        cap = scenario.player.max_turns or self.settings.sim_max_turns
        with tempfile.TemporaryDirectory(prefix="arca-sim-") as tmp:
            store = Store(f"sqlite+aiosqlite:///{Path(tmp) / 'sim.db'}")
            await store.open()
            try:
                fixed = scenario.clock
                if scenario.seed is not None:
                    await apply_seed(store, scenario.seed, now=fixed or datetime.now(UTC))
                for incident in scenario.incidents:
                    await store.incidents.open(
                        title=incident.title,
                        notice_ko=incident.notice_ko,
                        notice_en=incident.notice_en,
                        scope=IncidentScope(kind="orders", statuses=tuple(incident.statuses))
                        if incident.statuses
                        else IncidentScope(),
                        actor="simulation",
                        now=fixed or datetime.now(UTC),
                    )
                app = await build_app(
                    self.settings.model_copy(update={"edit_interval": 0.0}),
                    llm_factory=lambda: recorded.llm,
                    store=store,
                    policy_index=self.policy_index,
                    clock=(lambda: fixed) if fixed is not None else None,
                    coupon_rules=self._coupon_rules(scenario),
                )
                conv = app.conversations
                thread = ThreadId.replay(f"sim-{_slug(scenario.name)}-{trial}")
                who = scenario.player.as_ or next(
                    (p.discord_id for p in scenario.seed.players if p.discord_id), None
                )
                actor = await conv.resolve_actor(who, set())
                for n in range(cap):
                    move = await player.next_move(history)
                    if move.text is None:
                        stopped = move.stopped
                        break
                    watch = _ToolWatch()
                    surface = RecordingSurface()
                    files = [Upload.of_bytes(p.name, p.read_bytes()) for p in scenario.attachment_paths]
                    incoming = Incoming(
                        thread, actor, move.text, ref=f"sim:{n}", attachments=files if n == 0 else []
                    )
                    with conv.watch(thread, watch):
                        outcome = await conv.handle(incoming, surface)
                        await conv.wait_idle(thread)
                    answers = [
                        r.answer if r.delivered_answer is None else r.delivered_answer for r in outcome.runs
                    ]
                    text = "\n".join(a for a in answers if a) or outcome.answer or ""
                    if not text and outcome.reply is not None:
                        text = outcome.reply.text
                    text = text or surface.text or ""
                    history.append(Exchange(move.text, text))
                    logs.append(TurnLog(move.text, text, watch.calls, recorded.take_steps()))
                end = await read_end_state(store)
                fixture_statuses = {o.id: o.status for o in (scenario.seed.orders if scenario.seed else [])}
                orders = conv.services.orders
                if orders is not None and orders.name != "builtin":  # the table is a mirror: ask the backend
                    try:
                        statuses = await source_statuses(orders, list(fixture_statuses))
                    finally:
                        await orders.close()
                    end = replace(end, order_statuses=statuses)
            finally:
                await store.close()
        judge_usage = Usage()
        verdict: Verdict = await grade(
            scenario.grade,
            end,
            fixture_statuses,
            history,
            judge_model=self.player_model,
            usage=judge_usage,
        )
        bot_usage = getattr(model, "usage", None)
        bot_tokens = bot_usage.total_tokens if isinstance(bot_usage, Usage) else recorded.usage.total_tokens
        return RunResult(
            scenario=scenario.name,
            path=scenario.path,
            trial=trial,
            passed=verdict.passed,
            failures=verdict.failures,
            stopped=stopped,
            seconds=time.perf_counter() - started,
            tokens={
                "bot": bot_tokens,
                "player": player.usage.total_tokens + judge_usage.total_tokens,
            },
            rubric=verdict.rubric,
            turns=logs,
            end_coupons=list(end.active_coupons),
        )
