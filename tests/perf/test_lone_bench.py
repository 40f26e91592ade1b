"""`bench/lone.py` runs its own routine here on a few conversations: each ends answered with its own
coupon (the bench's `_round` checks it), and the gaps it reports are the conversation's own path, one
before each of its 5 model calls and one after the last, adding up with the model's waits to its time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import lone

pytestmark = pytest.mark.slow


async def test_the_lone_bench_reports_where_a_conversations_time_goes(
    tmp_path: Path, policy_index: Any
) -> None:
    latency = 0.01
    figures = await lone.run(3, latency, tmp_path, policy_index=policy_index)

    gaps = [figures[f"gap_{k}_ms"] for k in range(6)]
    assert all(g > 0 for g in gaps) and "gap_6_ms" not in figures
    assert figures["model_wait_late_ms"] >= 0.0
    assert figures["above_model_ms_p25"] <= figures["above_model_ms_p50"] <= figures["above_model_ms_p75"]
    assert figures["statements"] > 0 and figures["commits"] > 0
    assert figures["MainThread_cpu_ms"] > 0
