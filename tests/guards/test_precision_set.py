"""The fact check on its two answer sets (tests/guards/sets): every correct answer of the precision set
reaches the player untouched, its false twin is caught, and every false answer of the grounding set is
still caught. Precision and recall are printed by `python -m bench.fact_check`."""

from __future__ import annotations

import pytest

from tests.guards.fact_set import accepted, load

PRECISION = load("precision")
GROUNDING = load("grounding")
CLASSES = {
    "date_today_window",
    "date_weekday",
    "date_issue_validity",
    "date_player_window",
    "date_next_day",
    "date_timezone",
    "duration_window",
    "duration_player",
    "reworded_number",
    "player_numbers",
    "example_value",
    "order_echo",
}


def test_the_precision_set_covers_every_class_in_both_languages() -> None:
    assert len(PRECISION) >= 40
    assert all(c.false for c in PRECISION), "every correct answer has a false twin"
    seen = {(c.klass, c.lang) for c in PRECISION}
    assert {k for k, _ in seen} == CLASSES
    dates = {c.klass for c in PRECISION if c.klass.startswith("date_")}
    for klass in CLASSES - dates:
        assert {(klass, "ko"), (klass, "en")} <= seen, klass
    assert {c.lang for c in PRECISION if c.klass.startswith("date_")} == {"ko", "en"}
    assert any("\n- " in c.answer or "\n* " in c.answer for c in PRECISION), "Markdown lists"
    assert any("\n1. " in c.answer for c in PRECISION), "numbered lists"


@pytest.mark.parametrize("case", PRECISION, ids=lambda c: c.id)
async def test_a_correct_answer_reaches_the_player_untouched(case) -> None:
    verdict = await case.check(case.answer)
    assert accepted(verdict, case.answer), (verdict.facts, verdict.details, verdict.text)


@pytest.mark.parametrize("case", PRECISION, ids=lambda c: c.id)
async def test_its_false_twin_is_caught(case) -> None:
    verdict = await case.check(case.false)
    assert not accepted(verdict, case.false), verdict.text


@pytest.mark.parametrize("case", GROUNDING, ids=lambda c: c.id)
async def test_an_invented_or_contradicted_fact_is_still_caught(case) -> None:
    assert case.expect_caught
    verdict = await case.check(case.answer)
    assert not accepted(verdict, case.answer), verdict.text


async def test_observe_mode_records_the_false_twin_and_delivers_it() -> None:
    case = next(c for c in PRECISION if c.id == "date-today-plus-refund-window-ko")
    verdict = await case.check(case.false, mode="observe")
    assert verdict.text == case.false and verdict.facts and verdict.facts_withheld == 0
    assert verdict.facts[0]["kind"] == "date"


async def test_a_date_is_computed_in_the_games_timezone_not_the_clocks() -> None:
    """16:30 UTC on March 2 is March 3 in Seoul: the next day after the daily cap is March 4 there; by the
    UTC date it would be March 3, and March 4 is not backed."""
    case = next(c for c in PRECISION if c.id == "date-next-day-timezone-en")
    seoul, utc = case, type(case)(**{**case.__dict__, "timezone": "UTC"})
    text = "You've hit today's limit of 3 coupons; you can ask again on {}."
    assert accepted(await seoul.check(text.format("March 4")), text.format("March 4"))
    assert accepted(await utc.check(text.format("March 3")), text.format("March 3"))
    assert not accepted(await utc.check(text.format("March 4")), text.format("March 4"))


async def test_a_weekday_that_does_not_fall_on_its_date_is_caught() -> None:
    case = next(c for c in PRECISION if c.id == "date-today-maintenance-claim-weekday-en")
    verdict = await case.check(case.false)
    assert verdict.facts[0]["kind"] == "date" and "Monday" in verdict.facts[0]["why"]
