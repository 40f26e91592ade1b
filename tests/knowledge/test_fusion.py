"""Fusion of the dense and lexical rankings, the abstain evidence and its calibration (no embedder)."""

from __future__ import annotations

import numpy as np
import pytest

from bot.knowledge.evaluation import (
    EvalCase,
    calibrate_abstain,
    calibrate_abstain_by_pair,
    cross_validate_margins,
    evaluate_explained,
)
from bot.knowledge.fusion import DEFAULT_FUSION, Candidate, Evidence, _standardised, fuse


def _candidate(cid: str, dense: float, lexical: float) -> Candidate:
    return Candidate(cid, {"source": f"{cid}.md", "section": "1. s"}, "text", dense, lexical)


def _others() -> list[Candidate]:
    """The rest of a query's candidates: dense 0.80–0.87, little lexical evidence."""
    return [_candidate(f"o{i}", 0.80 + 0.01 * i, 0.5 * (i % 3)) for i in range(8)]


def test_a_strong_lexical_match_breaks_a_near_tie_of_the_dense_ranking() -> None:
    near_tie = [_candidate("a", 0.901, 0.0), _candidate("b", 0.900, 9.0), *_others()]
    linear = DEFAULT_FUSION.with_(method="linear", lexical_weight=0.02)
    for params in (DEFAULT_FUSION, linear):
        assert [r.candidate.chunk_id for r in fuse(near_tie, params)][:2] == ["b", "a"], params
    far = [_candidate("a", 0.95, 0.0), _candidate("b", 0.85, 9.0), *_others()]
    for params in (DEFAULT_FUSION, linear, DEFAULT_FUSION.with_(method="rrf", rrf_k=1.0)):
        order = [r.candidate.chunk_id for r in fuse(far, params)]
        assert order[0] == "a" and order.index("b") > 0, params


def test_zscore_fusion_does_not_depend_on_either_score_scale() -> None:
    candidates = [_candidate("a", 0.91, 2.0), _candidate("b", 0.90, 9.0), *_others()]
    scaled = [_candidate(c.chunk_id, c.dense * 0.5, c.lexical * 40) for c in candidates]
    order = [r.candidate.chunk_id for r in fuse(candidates, DEFAULT_FUSION)]
    assert [r.candidate.chunk_id for r in fuse(scaled, DEFAULT_FUSION)] == order
    assert DEFAULT_FUSION.method == "zscore"
    # no lexical evidence at all: the dense order stands
    dense_only = [_candidate(c.chunk_id, c.dense, 0.0) for c in candidates]
    fused = [r.candidate.chunk_id for r in fuse(dense_only, DEFAULT_FUSION)]
    assert fused == [c.chunk_id for c in sorted(dense_only, key=lambda c: -c.dense)]


def test_evidence_is_the_policy_similarity_over_the_background() -> None:
    about_policy = Evidence(dense_top=0.90, dense_margin=0.05, coverage=0.5, background_top=0.82)
    small_talk = Evidence(dense_top=0.82, dense_margin=0.02, coverage=0.3, background_top=0.90)
    assert about_policy.score(DEFAULT_FUSION) >= DEFAULT_FUSION.abstain_below
    assert small_talk.score(DEFAULT_FUSION) < DEFAULT_FUSION.abstain_below


def test_calibration_keeps_wrong_abstentions_within_the_allowance() -> None:
    on = [EvalCase(f"q{i}", "ko", "a.md", "1. s") for i in range(10)]
    off = [EvalCase(f"o{i}", "ko", None, None, "off_topic") for i in range(4)]
    hit = [_hit()]
    explained = [(c, hit, Evidence(0.9, 0.0, 0.0, 0.9 - 0.01 * i)) for i, c in enumerate(on)]
    explained += [(c, hit, Evidence(0.8, 0.0, 0.0, 0.9)) for c in off]
    params = DEFAULT_FUSION.with_(coverage_weight=0.0)
    params = params.with_(abstain_below=calibrate_abstain([explained], params, 0.1))
    report = evaluate_explained(explained, params)
    assert report.wrongly_abstained == 1 and report.off_topic_abstain_rate == 1.0
    assert report.recall_at_1() == 0.9


def _hit():  # type: ignore[no-untyped-def]
    from bot.knowledge.hits import PolicyHit

    return PolicyHit("a.md", "a", "t", "1. s", 1.0, "text", "ko")


def test_an_english_pair_keeps_its_margin_below_its_lowest_on_topic_question() -> None:
    hit = [_hit()]
    explained = [
        (EvalCase("쿠폰 한도", "ko", "a.md", "1. s"), hit, Evidence(0.9, 0.0, 0.0, 0.8, pair="ko→ko")),
        (EvalCase("coupon cap", "en", "a.md", "1. s"), hit, Evidence(0.9, 0.0, 0.0, 0.8, pair="en→ko")),
    ]
    params = DEFAULT_FUSION.with_(domain_weight=0.0, abstain_margin_by_language=(("en", 0.04),))
    thresholds = dict(calibrate_abstain_by_pair([explained], params, 0.0))
    assert thresholds["ko→ko"] == pytest.approx(0.1, abs=2e-4)
    assert thresholds["en→ko"] == pytest.approx(0.06, abs=2e-4)


def test_the_second_models_domain_log_odds_count_only_for_the_languages_given_a_weight() -> None:
    params = DEFAULT_FUSION.with_(second_domain_by_language=(("en", 0.05),))
    english = Evidence(0.9, 0.0, 0.0, 0.8, second_domain=-4.0, pair="en→ko")
    korean = Evidence(0.9, 0.0, 0.0, 0.8, second_domain=-4.0, pair="ko→ko")
    without = Evidence(0.9, 0.0, 0.0, 0.8, pair="en→ko")
    assert english.score(params) == pytest.approx(without.score(params) - 0.2)
    assert korean.score(params) == pytest.approx(without.score(params))


def test_cross_validation_judges_each_question_by_thresholds_calibrated_without_it() -> None:
    def row(name: str, lang: str, score: float, pair: str, on_topic: bool = True):  # type: ignore[no-untyped-def]
        case = EvalCase(f"{lang} {score}", lang, "a.md" if on_topic else None, "1. s" if on_topic else None)
        return (name, case, Evidence(score, 0.0, 0.0, 0.0, pair=pair))

    rows = [row("set", "ko", 1.0 + i / 10, "ko→ko") for i in range(10)]
    rows.append(row("set", "ko", 0.5, "ko→ko"))  # the one on-topic question far below the others
    rows += [row("small talk", "ko", 0.45, "ko→ko", False), row("hard", "ko", 0.95, "ko→ko", False)]
    # English questions score lower by nature and have their own pair: its small talk is under them
    rows += [row("set", "en", 0.1 + i / 100, "en→ko") for i in range(10)]
    rows.append(row("small talk", "en", 0.05, "en→ko", False))
    params = DEFAULT_FUSION.with_(domain_weight=0.0, second_standout_weight=0.0)
    out = {(o.language, o.margin): o for o in cross_validate_margins(rows, params, (0.0, 0.3, 0.8))}

    korean = [out["ko", m] for m in (0.0, 0.3, 0.8)]
    # at no margin the low question is abstained whenever it is judged: at least 1 in 11
    assert korean[0].wrongly_abstained >= 1 / 11 - 1e-9
    assert korean[2].wrongly_abstained == 0.0  # a fold holds at most two others: 0.5 is never under 1.2 − 0.8
    assert [o.wrongly_abstained for o in korean] == sorted(
        (o.wrongly_abstained for o in korean), reverse=True
    )
    assert set(korean[0].off_topic_abstained) == {"hard", "small talk"}
    assert korean[0].off_topic_abstained["small talk"] == 1.0
    assert korean[0].off_topic_abstained["hard"] < 1.0  # 0.95 is above 0.5 whenever 0.5 is calibrated on
    assert korean[2].off_topic_abstained["small talk"] < 1.0
    # every English question is under every Korean one: judged by its own pair, most are kept
    english = out["en", 0.0]
    assert english.wrongly_abstained < 0.5 and english.off_topic_abstained == {"small talk": 1.0}
    assert out["en", 0.3].wrongly_abstained == 0.0


def test_standardising_matches_numpys_mean_and_spread_to_the_last_bit() -> None:
    """The fusion's z-scores are computed step by step; they must equal numpy's `mean` and `std` exactly."""
    rng = np.random.default_rng(3)
    for size in (2, 7, 40, 94, 333):
        pool = rng.standard_normal(size) * 5
        values = pool[: max(1, size // 2)]
        expected = (values - pool.mean()) / float(pool.std())
        assert _standardised(values, pool).tobytes() == expected.tobytes()
    assert not _standardised([1.0, 2.0], [3.0, 3.0]).any()  # a flat pool gives zeros
    assert not _standardised([1.0], []).any()
