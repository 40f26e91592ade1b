"""`arca-bot replay`: run transcript cases through the real `Conversations` and check expectations.

Each case runs once per mode (native, json), each time in a fresh temporary SQLite store loaded with
its fixtures, all turns in the case's channel `replay:<case>`. User turns and interrupts enter
through `Conversations.handle` exactly like channel messages. Interrupts `after_step: N` are delivered
inside the engine's `iteration`-done callback of scripted step N (for a step without tool calls: its
`thinking`-done callback), synchronously, before the next `chat` call. The optional
`fixtures.coupon_rules` of a case overrides the project's coupon rules for that case only.
"""

from __future__ import annotations

import re
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.config import Settings
from bot.conversations import Incoming
from bot.conversations.recording import RecordingSurface
from bot.conversations.surface import Surface
from bot.guards.fact_check import OBSERVE
from bot.llm.scripted import ScriptedLLM
from bot.replay.decisions import call_decisions, guard_decisions
from bot.replay.expectations import TurnRecord, active_coupons, check_expectations, sent_text
from bot.replay.fact_records import fact_counts, last_audit_id, unbacked_details, would_deliver
from bot.replay.format import (
    Transcript,
    Turn,
)
from bot.replay.recorders import LoopInputs, recording
from bot.replay.turn_observer import TurnObserver
from bot.store import Store
from bot.store.coupon_codes import seeded_codes
from bot.store.seed import SeedData, apply_seed
from bot.vocabulary import ThreadId
from bot.vocabulary.language import HANGUL_RANGE
from tools.coupon_rules import CouponRules, load_coupon_rules

MODES = ("native", "json")


@dataclass
class CaseResult:
    name: str
    path: str
    mode: str
    trial: int
    passed: bool
    failures: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    facts_unbacked: int = 0
    """Delivered answer sentences that carried an unbacked fact (`ARCA_FACT_CHECK=observe` lets them through)."""
    facts_withheld: int = 0
    """Answer sentences the fact check withheld (replaced or dropped)."""
    checked_passed: bool | None = None
    """Observing (`ARCA_FACT_CHECK=observe`): whether the case passes on the text the fact check would have
    delivered from this same run (its unbacked sentences replaced). None when the check enforced."""
    checked_failures: list[str] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    """What each turn showed (answer or reply), the tools it called with their codes, and (observing) the
    sentences the fact check let through with what enforcing would have put in their place: the report's
    record of what a live model actually said."""


def _closed_loopback_url() -> str:
    """A loopback URL nothing listens on: a port the kernel just handed out and that was closed again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _case_settings(settings: Settings, case: Transcript) -> Settings:
    """The settings one case runs with: `fixtures.game_backend: down` points the order source at a game
    backend that cannot be reached (connection refused, no retry), so its reads are SOURCE_UNAVAILABLE."""
    if not case.game_backend_down:
        return settings
    return settings.model_copy(
        update={
            "order_source": "http",
            "game_api_url": _closed_loopback_url(),
            "game_api_token": SecretStr("replay"),
            "game_api_retries": 0,
            "game_api_timeout_s": 1.0,
        }
    )


def _fixtures_for_source(seed: SeedData | None, order_source: str) -> SeedData | None:
    """The fixtures to load for the configured order source: all of them for the builtin table; with
    the studio's backend (`http`) the orders come from it, so the fixtures' orders are left out — but
    for those a fixture coupon names, kept so the ledger's rows stay valid (the reads still go to the
    backend)."""
    if seed is None or order_source == "builtin":
        return seed
    named = {c.order_id for c in seed.coupons}
    return seed.model_copy(update={"orders": [o for o in seed.orders if o.id in named]})


def _slug(name: str) -> str:
    return re.sub(f"[^\\w{HANGUL_RANGE}-]+", "-", name.strip().lower()).strip("-")[:60] or "case"


class Replayer:
    """Runs cases; one policy index shared (read-only) by every case."""

    def __init__(
        self,
        settings: Settings,
        *,
        policy_index: Any = None,
        live_llm_factory: Callable[[], Any] | None = None,
        surface_factory: Callable[[], Surface] | None = None,
        announce: Callable[[Turn], None] | None = None,
        edit_interval: float = 0.0,
    ) -> None:
        self.settings = settings
        self._index = policy_index
        self.live_llm_factory = live_llm_factory
        self.surface_factory = surface_factory
        self.announce = announce
        self.edit_interval = edit_interval

    @property
    def policy_index(self) -> Any:
        if self._index is None:
            from bot.app import make_policy_index

            self._index = make_policy_index(self.settings)
        return self._index

    def _coupon_rules(self, case: Transcript) -> CouponRules | None:
        """The project's coupon rules with the case's `fixtures.coupon_rules` on top (None: no override)."""
        if not case.coupon_rules:
            return None
        from bot.app import coupon_rules_path

        base = load_coupon_rules(coupon_rules_path(self.settings))
        return CouponRules.model_validate({**base.model_dump(), **case.coupon_rules})

    async def run_case(self, case: Transcript, mode: str, trial: int = 1) -> CaseResult:
        from bot.app import build_app

        started = time.perf_counter()
        failures: list[str] = []
        checked_failures: list[str] = []
        # Codes from a generator seeded with the case's name: a transcript can expect a new coupon's code.
        with tempfile.TemporaryDirectory(prefix="arca-replay-") as tmp, seeded_codes(case.name):
            store = Store(f"sqlite+aiosqlite:///{Path(tmp) / 'case.db'}")
            await store.open()
            try:
                fixed = case.clock
                settings = _case_settings(self.settings, case).model_copy(
                    update={"edit_interval": self.edit_interval}
                )
                seed = _fixtures_for_source(case.seed, settings.order_source)
                if seed is not None:
                    await apply_seed(store, seed, now=fixed or datetime.now(UTC))
                current: dict[str, Any] = {"llm": None, "turns": []}
                app = await build_app(
                    settings,
                    llm_factory=lambda: current["llm"],
                    store=store,
                    policy_index=self.policy_index,
                    clock=(lambda: fixed) if fixed is not None else None,
                    use_native_tools=True,
                    coupon_rules=self._coupon_rules(case),
                )
                conv = app.conversations
                thread = ThreadId.replay(_slug(case.name))
                first_player = (
                    next((p.discord_id for p in case.seed.players if p.discord_id), None)
                    if case.seed
                    else None
                )
                for index, turn in enumerate(case.turns):
                    try:
                        problems, checked = await self._run_turn(
                            conv, store, thread, turn, mode, first_player, current
                        )
                    except Exception as exc:  # a crash is a failed case with its reason, never an aborted run
                        problems = checked = [f"crashed: {type(exc).__name__}: {exc}"]
                    failures.extend(f"turn {index}: {p}" for p in problems)
                    checked_failures.extend(f"turn {index}: {p}" for p in checked)
                unbacked, withheld = await fact_counts(store)
                await app.conversations.services.orders.close()
            finally:
                await store.close()
        return CaseResult(
            name=case.name,
            path=case.path,
            mode=mode,
            trial=trial,
            passed=not failures,
            failures=failures,
            elapsed=time.perf_counter() - started,
            facts_unbacked=unbacked,
            facts_withheld=withheld,
            checked_passed=not checked_failures if self.settings.fact_check == OBSERVE else None,
            checked_failures=checked_failures if self.settings.fact_check == OBSERVE else [],
            turns=current["turns"],
        )

    async def _run_turn(
        self,
        conv: Any,
        store: Store,
        thread: str,
        turn: Turn,
        mode: str,
        first_player: str | None,
        current: dict[str, Any],
    ) -> tuple[list[str], list[str]]:
        """The turn's problems as delivered, and (observing) as the fact check would have delivered it."""
        staff_role = self.settings.staff_role
        roles = {staff_role if r == "staff" else r for r in turn.roles}
        actor = await conv.resolve_actor(turn.as_ or first_player, roles)
        loop_inputs: LoopInputs = []
        replies: list[str] = []
        scripted: ScriptedLLM | None = None
        if self.live_llm_factory is not None:
            current["llm"] = recording(self.live_llm_factory(), loop_inputs, lambda n: n, replies)
        else:
            scripted = ScriptedLLM(turn.script or [], mode=mode, structured=turn.structured)
            current["llm"] = recording(scripted, loop_inputs, lambda _n: scripted.current_step)
        rec = TurnRecord()
        surface: Surface = self.surface_factory() if self.surface_factory is not None else RecordingSurface()
        if self.announce is not None:
            self.announce(turn)
        observer = TurnObserver(
            conv=conv,
            thread=thread,
            turn=turn,
            rec=rec,
            surface=surface,
            scripted=scripted,
            roles=roles,
            staff_role=staff_role,
            first_player=first_player,
        )
        audit_mark = await last_audit_id(store)
        text = turn.user if turn.user is not None else turn.staff
        # The turn's observer watches this thread while the turn lasts (its runs and its `/ops draft`).
        with conv.watch(thread, observer):
            outcome = await conv.handle(Incoming(thread, actor, text or "", ref="turn"), surface)
            await conv.wait_idle(thread)
        surface.end_turn()
        answers = [r.answer if r.delivered_answer is None else r.delivered_answer for r in outcome.runs]
        rec.answer = "\n".join(a for a in answers if a) if answers else outcome.answer
        if outcome.reply is not None:
            rec.reply = outcome.reply.text
            rec.denied = outcome.reply.denied
        elif outcome.kind == "refused":
            rec.reply = shown_text(surface)
        elif outcome.kind == "stopped" and rec.answer is None:
            rec.answer = shown_text(surface)
        rec.model_inputs = [(step, sent_text(msgs)) for step, msgs in loop_inputs]
        problems: list[str] = []
        if observer.pending:
            steps = [i.after_step for i in observer.pending]
            problems.append(f"interrupts never delivered (after_step {steps})")
        if scripted is not None:
            for v in scripted.violations:
                problems.append(f"script: {v}")
            unused = scripted.unused_steps
            if unused and not scripted.violations:
                problems.append(f"script: steps {unused} were never used (the run ended earlier)")
            if turn.script == [] and sum(scripted.calls.values()):
                problems.append(f"script: [] but the model was called {dict(scripted.calls)}")
        coupons = await active_coupons(store)
        checked = list(problems)
        problems += check_expectations(turn, rec, coupons)
        shown = {
            "answer": rec.answer,
            "reply": rec.reply,
            "tools": list(zip(rec.tools, rec.codes, strict=False)),
        }
        if self.live_llm_factory is not None:  # what a live model wrote, each loop reply cut at 600
            shown["model_replies"] = [r[:600] for r in replies]
        shown["decisions"] = [
            *call_decisions(outcome.runs),
            *await guard_decisions(store, after_id=audit_mark),
        ]
        current["turns"].append(shown)
        if self.settings.fact_check != OBSERVE:
            return problems, problems
        details = await unbacked_details(store, after_id=audit_mark)
        shown["unbacked"] = [
            {k: d.get(k) for k in ("kind", "fact", "removed", "replacement")} for d in details
        ]
        would = would_deliver(rec.answer, details)
        checked += check_expectations(turn, replace(rec, answer=would), coupons)
        return problems, checked


def shown_text(surface: Surface) -> str | None:
    """What the turn's channel showed, where the surface keeps it (the demo's console only prints it)."""
    return surface.text if isinstance(surface, RecordingSurface) else None
