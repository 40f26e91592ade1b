"""`bench.fact_check --slowest`: the costliest sentences of the sets, each with its stages' times."""

from __future__ import annotations

from bench.fact_check import STAGES, slowest


async def test_the_slowest_sentences_come_costliest_first_with_every_stage_timed() -> None:
    rows = await slowest(1, 5)
    assert len(rows) == 5
    assert [r["us"] for r in rows] == sorted((r["us"] for r in rows), reverse=True)
    for row in rows:
        assert row["sentence"].strip() == row["sentence"] and row["sentence"]
        assert set(STAGES) <= set(row)  # every sentence went through all four steps
        assert sum(row[stage] for stage in STAGES) <= row["us"]
