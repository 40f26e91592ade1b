"""The live check's cases (tests/live/, run by `make live` against a real model): they load, carry no
script, expect only what a real model can be held to, and `replay --live` reports pass^k and the
seconds per run."""

from __future__ import annotations

from pathlib import Path

from bot.app import PROJECT_ROOT
from bot.config import load_settings
from bot.llm import ScriptedLLM
from bot.replay.command import load_cases, replay

LIVE = PROJECT_ROOT / "tests" / "live"
ALLOWED = {"codes", "coupons", "answer_contains", "answer_not_contains"}


def test_live_cases_hold_no_script_and_expect_only_codes_coupons_and_answer_text():
    cases = load_cases([LIVE])
    assert len(cases) >= 10
    for case in cases:
        for turn in case.turns:
            assert turn.script is None, case.name
            used = {k for k, v in turn.expect.model_dump().items() if v is not None}
            assert used and used <= ALLOWED, (case.name, used)
    tags = {t for c in cases for t in c.tags}
    assert {"injection", "link", "interrupt", "privacy", "policy", "english", "korean"} <= tags


async def test_replay_live_prints_pass_k_and_seconds_per_run(tmp_path: Path, policy_index):
    case = LIVE / "delayed_order_compensated_within_limit.yaml"
    steps = [
        {"tool": "lookup_order", "args": {"order_id": "ORD101"}},
        {"tool": "issue_coupon", "args": {"order_id": "ORD101", "amount": 10000}},
        {"final": "ORD101에 10,000원 쿠폰을 발급했습니다."},
    ]
    lines: list[str] = []
    status = await replay(
        load_settings(data_dir=tmp_path / "data"),
        [case],
        live=True,
        trials=2,
        out=lines.append,
        policy_index=policy_index,
        live_llm_factory=lambda: ScriptedLLM(steps, mode="json"),
    )
    assert status == 0, lines
    assert "pass^2: 1/1 cases passed every trial (1.00)" in lines
    assert any(line.startswith("seconds per run: p50 ") and line.endswith("(2 runs)") for line in lines)
