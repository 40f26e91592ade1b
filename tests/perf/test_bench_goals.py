"""`make bench`'s goals table (`bench.run_all.print_goals`): each goal judged on the run's own figure, the
machine's idle lag printed beside them."""

from __future__ import annotations

import pytest

from bench.run_all import GOALS, print_goals


def test_each_goal_is_judged_met_or_missed_and_the_idle_lag_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    results = {key: goal for key, _label, _op, goal in GOALS}  # every figure exactly on its goal: met
    results["concurrency_conversations_per_s"] = 90.0  # below 150: missed
    results["concurrency_idle_loop_max_lag_ms"] = 12.5
    del results["policy_search_vs_raw_chroma_ratio"]  # not measured: neither

    print_goals(results)
    out = capsys.readouterr().out

    assert "idle loop lag in this run: 12.5 ms" in out
    lines = {
        line.split("  ")[0].strip(): line for line in out.splitlines() if line.endswith(("yes", "NO", "—"))
    }
    assert lines["burst of 200 at 50 ms model, conv/s"].endswith("NO")
    assert lines["guarded issues/s (SQLite)"].endswith("yes")
    assert lines["race: coupons of 100 attempts"].endswith("yes")
    assert lines["policy search ÷ raw Chroma"].endswith("—")
