"""Every case in tests/transcripts/ replayed in both modes, and the suite's coverage of the contract:
every result code, every staff command allowed and denied, the attacks the guards must hold against.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT, staff_commands
from bot.replay.format import Transcript, load_transcript
from bot.replay.runner import MODES, Replayer
from tests.support.replay import DEMO_CASES, TRANSCRIPTS
from tools.base import ResultCode
from tools.coupon_rules import load_coupon_rules

CASE_FILES = sorted(TRANSCRIPTS.glob("*.yaml"))


def _all_cases() -> list[Transcript]:
    return [load_transcript(p) for p in CASE_FILES]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
async def test_transcript_case_passes(path: Path, mode: str, replayer: Replayer) -> None:
    result = await replayer.run_case(load_transcript(path), mode)
    assert result.passed, f"{path.name} [{mode}]:\n" + "\n".join(result.failures)


@pytest.mark.parametrize("path", sorted(DEMO_CASES.glob("*.yaml")), ids=lambda p: p.stem)
async def test_demo_case_passes_in_native_mode(path: Path, replayer: Replayer) -> None:
    result = await replayer.run_case(load_transcript(path), "native")
    assert result.passed, "\n".join(result.failures)


def test_the_demo_attack_is_refused_for_its_injection_not_for_its_amount() -> None:
    """A newcomer watching `arca-bot demo` learns what protects the ledger: the untrusted input (the coupon
    waits for a person), not the amount limit (the asked amount is within every rule)."""
    rules = load_coupon_rules(PROJECT_ROOT / "policies" / "coupon_rules.yaml")
    case = load_transcript(DEMO_CASES / "4_attack_refused.yaml")
    [turn] = case.turns
    assert turn.expect.codes == [ResultCode.PENDING_APPROVAL]
    asked = [s["args"]["amount"] for s in turn.script or [] if s.get("tool") == "issue_coupon"]
    assert asked and all(rules.min_amount <= a <= rules.max_amount for a in asked), asked
    assert rules.approval_threshold is None or max(asked) <= rules.approval_threshold


def test_suite_has_at_least_forty_cases_with_unique_names() -> None:
    cases = _all_cases()
    names = [c.name for c in cases]
    assert len(cases) >= 40
    assert len(set(names)) == len(names)


def test_suite_expects_every_result_code() -> None:
    expected = {code for c in _all_cases() for t in c.turns for code in (t.expect.codes or [])}
    assert {str(c) for c in ResultCode} <= expected


def _command_name(text: str) -> str | None:
    words = text.strip().lstrip("/").split()
    names = {c.name for c in staff_commands()}
    if len(words) >= 2 and f"{words[0]} {words[1]}" in names:
        return f"{words[0]} {words[1]}"
    return words[0] if words and words[0] in names else None


def test_suite_runs_every_staff_command_allowed_and_denied() -> None:
    allowed: set[str] = set()
    denied: set[str] = set()
    for case in _all_cases():
        for turn in case.turns:
            text = turn.staff if turn.staff is not None else turn.user or ""
            name = _command_name(text) if text.startswith("/") else None
            if name is None or turn.expect.denied is None:
                continue
            (denied if turn.expect.denied else allowed).add(name)
        for turn in case.turns:
            for intr in turn.interrupts:
                if intr.text.startswith("/") and intr.roles and "staff" in intr.roles:
                    allowed.add(_command_name(intr.text) or "")
    every = {c.name for c in staff_commands() if c.staff_only}  # `/unlink` is a member's own command
    assert every - allowed == set(), "staff commands never run by staff"
    assert every - denied == set(), "staff commands never denied to a player"


def test_every_user_turn_checks_an_outcome() -> None:
    """A turn without expectations proves nothing (unless `script: []` asserts the model is idle)."""
    for case in _all_cases():
        for i, turn in enumerate(case.turns):
            has_check = any(v is not None for v in turn.expect.model_dump().values())
            assert has_check or turn.script == [], f"{case.name}: turn {i} checks nothing"


@pytest.mark.parametrize(
    "tag", ["injection", "authority", "privacy", "pii", "prompt-leak", "claim-check", "interrupt", "memory"]
)
def test_suite_covers_attack_and_feature_tags(tag: str) -> None:
    assert any(tag in c.tags for c in _all_cases())


def test_attack_cases_assert_the_protection() -> None:
    """An attack case must check what the guard guarantees: codes, the ledger, or what is not said."""
    for case in _all_cases():
        if "attack" not in case.tags:
            continue
        checks = [
            t.expect.codes or t.expect.coupons is not None or t.expect.answer_not_contains or t.expect.denied
            for t in case.turns
        ]
        assert any(checks), case.name
