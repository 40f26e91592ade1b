"""Fusion of the dense and lexical rankings, the abstain evidence and its calibration (no embedder)."""

from __future__ import annotations

from bot.knowledge.evaluation import EvalCase, calibrate_abstain, evaluate_explained
from bot.knowledge.fusion import DEFAULT_FUSION, Candidate, Evidence, fuse


def _candidate(cid: str, dense: float, lexical: float) -> Candidate:
    return Candidate(cid, {"source": f"{cid}.md", "section": "1. s"}, "text", dense, lexical)


def test_a_strong_lexical_match_breaks_a_near_tie_of_the_dense_ranking() -> None:
    near_tie = [_candidate("a", 0.901, 0.0), _candidate("b", 0.900, 9.0)]
    assert [r.candidate.chunk_id for r in fuse(near_tie, DEFAULT_FUSION)] == ["b", "a"]
    far = [_candidate("a", 0.95, 0.0), _candidate("b", 0.85, 9.0)]
    assert [r.candidate.chunk_id for r in fuse(far, DEFAULT_FUSION)] == ["a", "b"]
    assert [r.candidate.chunk_id for r in fuse(far, DEFAULT_FUSION.with_(method="rrf", rrf_k=1.0))] == [
        "a",
        "b",
    ]


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
