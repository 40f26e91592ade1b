"""`arca-bot replay`: run transcript cases through the real `Conversations` and check expectations.

Each case runs once per mode (native, json), each time in a fresh temporary SQLite store loaded with
its fixtures, all turns in the case's channel `replay:<case>`. User turns and interrupts enter
through `Conversations.handle` exactly like channel messages. Interrupts `after_step: N` are delivered
inside the engine's `iteration`-done callback of scripted step N (for a step without tool calls: its
`thinking`-done callback), synchronously, before the next `chat` call. The optional
`fixtures.coupon_rules` of a case overrides the project's coupon rules for that case only.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bot.channels.recording import RecordingSurface
from bot.config import Settings
from bot.conversations import Incoming
from bot.conversations.surface import Surface
from bot.guards.fact_check import FACT_UNBACKED, FACT_WITHHELD, OBSERVE
from bot.llm.scripted import ScriptedLLM
from bot.replay.expectations import TurnRecord, active_coupons, check_expectations, sent_text
from bot.replay.format import (
    Transcript,
    TranscriptError,
    Turn,
    collect_transcripts,
    load_transcript,
)
from bot.replay.recorders import LoopInputs, recording
from bot.store import AuditEntry, Store
from bot.store.seed import apply_seed
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
        with tempfile.TemporaryDirectory(prefix="arca-replay-") as tmp:
            store = Store(f"sqlite+aiosqlite:///{Path(tmp) / 'case.db'}")
            await store.open()
            try:
                fixed = case.clock
                if case.seed is not None:
                    await apply_seed(store, case.seed, now=fixed or datetime.now(UTC))
                current: dict[str, Any] = {"llm": None, "hook": None, "turns": []}

                async def hook(event: Any) -> None:
                    if current["hook"] is not None:
                        await current["hook"](event)

                app = await build_app(
                    self.settings.model_copy(update={"edit_interval": self.edit_interval}),
                    llm_factory=lambda: current["llm"],
                    store=store,
                    policy_index=self.policy_index,
                    clock=(lambda: fixed) if fixed is not None else None,
                    use_native_tools=True,
                    event_hook=hook,
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
        scripted: ScriptedLLM | None = None
        if self.live_llm_factory is not None:
            current["llm"] = recording(self.live_llm_factory(), loop_inputs, lambda n: n)
        else:
            scripted = ScriptedLLM(turn.script or [], mode=mode, structured=turn.structured)
            current["llm"] = recording(scripted, loop_inputs, lambda _n: scripted.current_step)
        rec = TurnRecord()
        surface: Surface = self.surface_factory() if self.surface_factory is not None else RecordingSurface()
        if self.announce is not None:
            self.announce(turn)
        pending = sorted(turn.interrupts, key=lambda i: i.after_step)
        loop_responses = {"n": -1}

        async def deliver(step: int) -> None:
            while pending and pending[0].after_step <= step:
                intr = pending.pop(0)
                if intr.roles is not None:
                    who_roles = {staff_role if r == "staff" else r for r in intr.roles}
                else:
                    who_roles = roles if intr.as_ is None else set()
                who = await conv.resolve_actor(intr.as_ or turn.as_ or first_player, who_roles)
                # Its own task, as a channel message would be: a staff `/stop` cancels the run this
                # callback belongs to, and the command must still finish (reply, audit).
                delivery = asyncio.ensure_future(
                    conv.handle(Incoming(thread, who, intr.text, ref=f"interrupt:{intr.after_step}"), surface)
                )
                await asyncio.shield(delivery)

        async def hook(event: Any) -> None:
            kind = getattr(event, "type", "")
            status = getattr(event, "status", None)
            rec.events.append(kind)
            if kind == "iteration" and status == "done":
                # From the events, not the run results: a stopped run has no result but did call tools.
                rec.tools.append(str(getattr(event, "tool_name", "")))
                rec.codes.append(str(getattr(event, "code", "")))
                rec.observations.append(str(getattr(event, "observation", "") or ""))
            if not pending:
                return
            if scripted is None:
                if kind == "thinking" and status == "done":
                    loop_responses["n"] += 1
                if (kind == "iteration" and status == "done") or (kind == "thinking" and status == "done"):
                    await deliver(loop_responses["n"])
                return
            step = scripted.current_step
            if step is None:
                return
            spec = scripted.steps[step]
            no_tools = "final" in spec or "raw" in spec
            if kind == "iteration" and status == "done" and not no_tools:
                if scripted.pending_calls_in_step == 0:
                    await deliver(step)
            elif kind == "thinking" and status == "done" and no_tools:
                await deliver(step)

        current["hook"] = hook
        audit_mark = await last_audit_id(store)
        text = turn.user if turn.user is not None else turn.staff
        outcome = await conv.handle(Incoming(thread, actor, text or "", ref="turn"), surface)
        await conv.wait_idle(thread)
        surface.end_turn()
        answers = [r.delivered_answer or r.answer for r in outcome.runs]
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
        if pending:
            problems.append(f"interrupts never delivered (after_step {[i.after_step for i in pending]})")
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


async def last_audit_id(store: Store) -> int:
    async with store.session() as s:
        return (await s.execute(select(func.max(AuditEntry.id)))).scalar() or 0


async def unbacked_details(store: Store, *, after_id: int) -> list[dict[str, Any]]:
    """What the observing fact check found since audit row `after_id`: each sentence let through and
    what enforcing would have put in its place."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.detail)
                .where(AuditEntry.id > after_id, AuditEntry.action == FACT_UNBACKED)
                .order_by(AuditEntry.id)
            )
        ).scalars()
        return [json.loads(d) for d in rows if d]


def would_deliver(answer: str | None, details: list[dict[str, Any]]) -> str | None:
    """`answer` as the enforcing fact check would have delivered it: each unbacked sentence replaced (or
    dropped, where enforcing writes nothing in its place). The run is the same either way: the check
    reads the finished answer and never talks back to the model, so one run grades both settings."""
    if answer is None:
        return None
    for d in details:
        removed = d.get("removed") or ""
        if removed and removed in answer:
            answer = answer.replace(removed, (d.get("replacement") or "").strip(), 1)
    return answer


async def fact_counts(store: Store) -> tuple[int, int]:
    """(sentences delivered with an unbacked fact, sentences withheld) in this case's audit log."""
    async with store.session() as s:
        rows = (
            await s.execute(
                select(AuditEntry.action, func.count())
                .where(AuditEntry.action.in_((FACT_UNBACKED, FACT_WITHHELD)))
                .group_by(AuditEntry.action)
            )
        ).all()
    counts = dict(rows)
    return counts.get(FACT_UNBACKED, 0), counts.get(FACT_WITHHELD, 0)


def load_cases(paths: list[Path], name_filter: str | None = None) -> list[Transcript]:
    """Every case, validated up front: an invalid one raises `TranscriptError` (file and line)."""
    cases = [load_transcript(p) for p in collect_transcripts(paths)]
    if name_filter:
        needle = name_filter.lower()
        cases = [c for c in cases if needle in c.name.lower() or needle in Path(c.path).stem.lower()]
    return cases


async def replay(
    settings: Settings,
    paths: list[Path],
    *,
    modes: tuple[str, ...] = MODES,
    live: bool = False,
    trials: int = 1,
    report: Path | None = None,
    name_filter: str | None = None,
    out: Callable[[str], None] = print,
    policy_index: Any = None,
    live_llm_factory: Callable[[], Any] | None = None,
) -> int:
    """Run and print; 0 all passed, 1 a case failed, 2 an invalid transcript."""
    try:
        cases = load_cases(paths, name_filter)
    except TranscriptError as exc:
        print(f"invalid transcript: {exc}", file=sys.stderr)
        return 2
    if live and live_llm_factory is None:
        from bot.app import make_llm_factory

        live_llm_factory = make_llm_factory(settings)
    replayer = Replayer(
        settings, policy_index=policy_index, live_llm_factory=live_llm_factory if live else None
    )
    results: list[CaseResult] = []
    run_modes = ("live",) if live else modes
    for case in cases:
        for mode in run_modes:
            for trial in range(1, max(1, trials) + 1):
                res = await replayer.run_case(case, "native" if mode == "live" else mode, trial)
                res.mode = mode
                results.append(res)
                label = f"[{mode}]" + (f" trial {trial}/{trials}" if trials > 1 else "")
                facts = (
                    f"  facts: {res.facts_unbacked} unbacked delivered, {res.facts_withheld} withheld"
                    if live
                    else ""
                )
                if res.checked_passed is not None:
                    facts += f"  (fact check enforcing: {'PASS' if res.checked_passed else 'FAIL'})"
                out(f"{'PASS' if res.passed else 'FAIL'}  {case.name} {label}  ({res.elapsed:.2f}s){facts}")
                for f in res.failures:
                    out(f"      {f}")
                for f in res.checked_failures:
                    if f not in res.failures:
                        out(f"      enforcing: {f}")
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    observing = settings.fact_check == OBSERVE
    summary: dict[str, Any] = {"passed": passed, "failed": failed, "cases": [asdict(r) for r in results]}
    if trials > 1:
        by_case: dict[tuple[str, str], list[bool]] = {}
        for r in results:
            by_case.setdefault((r.path, r.mode), []).append(r.passed)
        all_ok = sum(all(v) for v in by_case.values())
        summary["pass_k"] = {"k": trials, "cases": len(by_case), "passed_all_trials": all_ok}
        out(
            f"pass^{trials}: {all_ok}/{len(by_case)} cases passed every trial ({all_ok / max(len(by_case), 1):.2f})"
            + (" — as delivered, the fact check observing" if observing else "")
        )
    if observing and results:
        checked_by_case: dict[tuple[str, str], list[bool]] = {}
        for r in results:
            checked_by_case.setdefault((r.path, r.mode), []).append(bool(r.checked_passed))
        checked_runs = sum(bool(r.checked_passed) for r in results)
        checked_all = sum(all(v) for v in checked_by_case.values())
        summary["with_fact_check"] = {
            "runs_passed": checked_runs,
            "runs": len(results),
            "k": trials,
            "cases": len(checked_by_case),
            "passed_all_trials": checked_all,
        }
        out(
            f"with the fact check enforcing on the same runs: {checked_runs}/{len(results)} runs passed, "
            f"pass^{trials} {checked_all}/{len(checked_by_case)}"
        )
    if live and results:
        times = sorted(r.elapsed for r in results)
        p50, p90 = (times[max(0, math.ceil(q * len(times)) - 1)] for q in (0.5, 0.9))
        summary["seconds_per_run"] = {"p50": p50, "p90": p90}
        out(f"seconds per run: p50 {p50:.1f}, p90 {p90:.1f} ({len(times)} runs)")
    if live and results:
        unbacked = sum(r.facts_unbacked for r in results)
        withheld = sum(r.facts_withheld for r in results)
        summary["facts"] = {"unbacked_delivered": unbacked, "withheld": withheld, "runs": len(results)}
        out(
            f"facts: {unbacked} delivered sentences carried an unbacked fact, {withheld} withheld "
            f"({len(results)} runs)"
        )
    if report is not None:
        report.write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    out(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
