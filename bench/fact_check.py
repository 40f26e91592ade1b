"""The output guard's fact check: how right it is and what it costs.

Right: precision on the precision set (correct answers of a strong model that must reach the player
untouched) and recall on its false twins and on the grounding set (invented or contradicted facts that
must be withheld), from `tests/guards/sets/` (issue 50).
Cost: µs per sentence (p50/p95) with the check on and off, over the sets' answer sentences and one long
answer, each sentence's caches emptied first (`forget_answer_text`); the evidence built once per run before the answer streams;
and the time from the model's first delta to the first released text of a streamed answer with and
without the check (`first_text_ratio`: the guard releases sentence by sentence; the check must not add
waiting), and the same time counted from before the evidence is built. A/B interleaved in one run: the
mode that goes first alternates round by round.

    python -m bench.fact_check [--rounds 300] [--compare-surface] [--slowest 20]

`--compare-surface` prints the cost figures with the Korean surface topic test and without it (Kiwi for
every sentence whose topic is weighed; `bot.guards.paraphrase.SURFACE_TOPIC`), in stints that alternate
(on, off, off, on, …) in one run; `python -m bench.fact_check_diff` checks both decide alike.

`--slowest N` prints, after the figures, the N sentences of the sets that cost the most (the median of
`--rounds / 30` rounds, each sentence's caches emptied) with each stage's share: the coupon claim check,
the voice rules, the fact check (and the Kiwi analyses inside it) and the personal-data clean-up.

Figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ANSWER = (
    "확인했습니다. 주문 ORD101(전설 탈것 상자, 45,000원)은 현재 배송 중입니다. "
    "보상 쿠폰은 하루에 최대 3장, 합계 50,000원까지 받을 수 있습니다 [보상 정책 §4 1일 발급 한도]. "
    "쿠폰 1장은 1,000원 이상 20,000원 이하이며 발급 후 30일 동안 쓸 수 있습니다. "
    "환불은 구매 후 45일 이내에 신청하시면 됩니다. "
    "배송이 늦어져 불편을 드려 죄송합니다. 더 궁금한 점이 있으면 말씀해 주세요."
)


def _outcomes() -> list[Any]:
    from tools.base import ResultCode, ToolResult

    passage = (
        "플레이어 1명이 하루에 받을 수 있는 보상 쿠폰은 최대 3장, 합계 50,000원입니다. 하루는 한국 시간(Asia/Seoul) "
        "자정부터 다음 자정까지의 달력 날짜 기준입니다. 한도에 도달하면 다음 날 0시 이후에 다시 신청할 수 있습니다."
    )
    return [
        (
            "lookup_order",
            ToolResult(
                True,
                ResultCode.OK,
                "주문 ORD101: 전설 탈것 상자, 45,000원, 상태 배송 중 (shipping), 주문일 2026-03-01. 이 주문에 발급된 쿠폰은 없습니다.",
                {"order": {"id": "ORD101", "item": "전설 탈것 상자", "amount": 45000, "status": "shipping"}},
            ),
        ),
        (
            "search_policy",
            ToolResult(
                True,
                ResultCode.OK,
                "1. [보상 정책 §4 1일 발급 한도] " + passage,
                {"hits": [{"citation": "[보상 정책 §4 1일 발급 한도]", "text": passage}] * 3},
            ),
        ),
    ]


def _context(mode: str) -> Any:
    from bot.guards.evidence import catalogue_texts, rules_text
    from bot.guards.output import FactContext
    from tools.coupon_rules import default_coupon_rules

    return FactContext(
        player_texts=("ORD101 주문 어떻게 됐어요? 쿠폰은 하루 몇 장까지 받을 수 있나요?",) * 4,
        earlier_observations=tuple(o[1].message for o in _outcomes()) * 5,
        fixed_texts=(rules_text(default_coupon_rules()), *catalogue_texts()),
        mode=mode,
        run_id="bench",
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def forget_answer_text() -> None:
    """Empty the caches an answer's sentences fill (facts, model notes, content words, weekdays,
    squashed text): a new answer's sentences are new text, so each is measured as the first time it is
    seen. The evidence's own caches (passages, rules, the catalogue) are left warm, as run after run."""
    from bot.guards import dates, evidence, fact_check, facts, paraphrase

    facts._extract.cache_clear()
    fact_check.is_model_note.cache_clear()
    paraphrase.content_words.cache_clear()
    paraphrase.is_english.cache_clear()
    dates._named_weekdays.cache_clear()
    evidence.squash.cache_clear()


DELTA_CHARS = 4
"""A streamed model delta is a token or two: the first sentence reaches the guard in pieces this long."""


async def run(rounds: int) -> dict[str, Any]:
    return {**await accuracy(), **_figures(await _measure(rounds))}


async def compare(rounds: int, chunks: int = 4) -> dict[str, dict[str, Any]]:
    """The figures with the Korean surface topic test (`bot.guards.paraphrase.SURFACE_TOPIC`) and
    without it (Kiwi for every sentence that needs the topic), in one run: `chunks` stints each way,
    alternating, each of `rounds / chunks` rounds."""
    from bot.guards import paraphrase

    raw: dict[str, dict[str, Any]] = {}
    for i in range(chunks * 2):
        surface = (i % 2 == 0) == (i // 2 % 2 == 0)  # on, off, off, on, on, off, …
        paraphrase.SURFACE_TOPIC = surface
        got = await _measure(max(1, rounds // chunks))
        mine = raw.setdefault("surface_topic" if surface else "kiwi_only", {})
        for key, value in got.items():
            if isinstance(value, list):
                mine[key] = mine.get(key, []) + value
            else:  # the rounds add up; the answer's sentence count is the same each stint
                mine[key] = mine.get(key, 0) + value if key == "rounds" else value
    paraphrase.SURFACE_TOPIC = True
    return {name: _figures(values) for name, values in raw.items()}


async def _measure(rounds: int) -> dict[str, Any]:
    """The raw timings (µs) of `rounds` rounds."""
    from bot.guards import dates, evidence, facts
    from bot.guards.output import OutputGuard
    from bot.vocabulary.sentences import split_sentences

    sentences, rest = split_sentences(ANSWER)
    sentences = [*sentences, rest] if rest else sentences
    outcomes = _outcomes()
    per_sentence: dict[str, list[float]] = {"enforce": [], "off": []}
    cold_us: list[float] = []
    warm_us: list[float] = []
    with_build_us: dict[str, list[float]] = {"enforce": [], "off": []}
    from_delta_us: dict[str, list[float]] = {"enforce": [], "off": []}
    """From the model's first delta to the first text released: the run builds the evidence before it
    asks the model for the answer (`bot.conversations.run`), so what the player waits for after the first
    token is the first sentence's deltas and its checks. `with_build_us` also counts the evidence."""
    for i in range(rounds):
        facts._extract.cache_clear()
        for cached in (
            evidence._trusted_facts,
            evidence._order_items,
            evidence._hit_passages,
            evidence._player_facts,
            evidence.squash,
        ):
            cached.cache_clear()
        dates._calendar_facts.cache_clear()
        for times in (cold_us, warm_us):  # a thread's first run, then the same texts again
            ctx = _context("enforce")
            start = time.perf_counter()
            ctx.evidence(outcomes)
            times.append((time.perf_counter() - start) * 1e6)
        # A/B interleaved: the mode that goes first alternates, so neither inherits the other's warm caches.
        for mode in ("off", "enforce") if i % 2 == 0 else ("enforce", "off"):
            guard = OutputGuard(locale="ko", facts=_context(mode))
            forget_answer_text()
            t0 = time.perf_counter()
            stream = guard.stream(outcomes=outcomes)  # builds the evidence: before the model is asked
            first_delta = time.perf_counter()
            released = ""
            pieces = [sentences[0][j : j + DELTA_CHARS] for j in range(0, len(sentences[0]), DELTA_CHARS)]
            for piece in pieces:
                released = await stream.feed(piece)
            now = time.perf_counter()
            assert released, "the first sentence was not released"
            from_delta_us[mode].append((now - first_delta) * 1e6)
            with_build_us[mode].append((now - t0) * 1e6)
            for sentence in sentences[1:]:
                forget_answer_text()  # an answer's sentences are new text: measure them uncached
                start = time.perf_counter()
                await stream.feed(sentence)
                per_sentence[mode].append((time.perf_counter() - start) * 1e6)
            await stream.finish()
    set_costs = await _set_costs(max(1, rounds // 30))
    return {
        "enforce": per_sentence["enforce"] + set_costs["enforce"],
        "off": per_sentence["off"] + set_costs["off"],
        "cold": cold_us,
        "warm": warm_us,
        "from_delta_enforce": from_delta_us["enforce"],
        "from_delta_off": from_delta_us["off"],
        "with_build_enforce": with_build_us["enforce"],
        "with_build_off": with_build_us["off"],
        "sentences_per_answer": len(sentences),
        "rounds": rounds,
    }


def _figures(raw: dict[str, Any]) -> dict[str, Any]:
    enforce, off, cold_us, warm_us = raw["enforce"], raw["off"], raw["cold"], raw["warm"]
    first_on = statistics.median(raw["from_delta_enforce"])
    first_off = statistics.median(raw["from_delta_off"])
    built_on = statistics.median(raw["with_build_enforce"])
    built_off = statistics.median(raw["with_build_off"])
    return {
        "sentences_per_answer": raw["sentences_per_answer"],
        "rounds": raw["rounds"],
        "sentences_timed": len(enforce),
        "guard_us_per_sentence_p50": round(_pct(enforce, 0.5), 1),
        "guard_us_per_sentence_p95": round(_pct(enforce, 0.95), 1),
        "guard_us_per_sentence_p99": round(_pct(enforce, 0.99), 1),
        "guard_without_fact_check_us_per_sentence_p50": round(_pct(off, 0.5), 1),
        "guard_without_fact_check_us_per_sentence_p95": round(_pct(off, 0.95), 1),
        "evidence_build_cold_us_p50": round(_pct(cold_us, 0.5), 1),
        "evidence_build_warm_us_p50": round(_pct(warm_us, 0.5), 1),
        "evidence_build_warm_us_p95": round(_pct(warm_us, 0.95), 1),
        "first_text_us_p50": round(first_on, 1),
        "first_text_without_fact_check_us_p50": round(first_off, 1),
        "first_text_ratio": round(first_on / first_off, 2) if first_off else None,
        "first_text_with_evidence_build_us_p50": round(built_on, 1),
        "first_text_with_evidence_build_without_fact_check_us_p50": round(built_off, 1),
        "first_text_with_evidence_build_ratio": round(built_on / built_off, 2) if built_off else None,
    }


async def accuracy() -> dict[str, Any]:
    """Precision and recall of the check on both answer sets (`tests/guards/sets`)."""
    from tests.guards.fact_set import accepted, load

    precision_set, grounding = load("precision"), load("grounding")
    correct = [await c.check(c.answer) for c in precision_set]
    passed = sum(accepted(v, c.answer) for v, c in zip(correct, precision_set, strict=True))
    twins = [c for c in precision_set if c.false]
    caught_twins = [not accepted(await c.check(c.false), c.false) for c in twins if c.false]
    caught = [not accepted(await c.check(c.answer), c.answer) for c in grounding]
    return {
        "precision_set_correct_answers": len(precision_set),
        "precision_on_correct_answers": round(passed / len(precision_set), 3),
        "recall_on_false_twins": round(sum(caught_twins) / len(twins), 3),
        "grounding_set_false_answers": len(grounding),
        "recall_on_grounding_set": round(sum(caught) / len(grounding), 3),
    }


async def _set_costs(rounds: int) -> dict[str, list[float]]:
    """µs per sentence over every answer of both sets, streamed sentence by sentence, with and without
    the check (each sentence's caches emptied, as a new answer's are), the mode that goes first alternating."""
    from bot.guards.output import OutputGuard
    from bot.vocabulary.sentences import split_sentences
    from tests.guards.fact_set import load

    out: dict[str, list[float]] = {"enforce": [], "off": []}
    cases = [*load("precision"), *load("grounding")]
    turn = 0
    for _ in range(rounds):
        for case in cases:
            for text in filter(None, (case.answer, case.false)):
                done, rest = split_sentences(text)
                turn += 1
                for mode in ("off", "enforce") if turn % 2 else ("enforce", "off"):
                    stream = OutputGuard(locale=case.lang, facts=case.context(mode)).stream(
                        outcomes=case.outcomes()
                    )
                    for sentence in [*done, rest] if rest else done:
                        forget_answer_text()
                        start = time.perf_counter()
                        await stream.feed(sentence)
                        out[mode].append((time.perf_counter() - start) * 1e6)
                    await stream.finish()
    return out


STAGES = {
    "claims": "checker.check",
    "voice": "_to_the_player",
    "facts": "facts.check",
    "clean": "guard._clean",
}
"""The output guard's steps for one sentence (`bot.guards.output.StreamingOutputGuard._release`), by the
attribute of the stream each is reached through."""


async def slowest(rounds: int, count: int) -> list[dict[str, Any]]:
    """The `count` costliest sentences of both sets with the check on: the median µs of `rounds` rounds
    and, for that round, the µs of each stage (`STAGES`) and of the Kiwi analyses."""
    from bot.guards import paraphrase
    from bot.guards.output import OutputGuard
    from bot.vocabulary.sentences import split_sentences
    from tests.guards.fact_set import load

    spent: dict[str, float] = {}

    def timed(fn: Any, stage: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[stage] = spent.get(stage, 0.0) + (time.perf_counter() - start) * 1e6

        async def run_async(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                spent[stage] = spent.get(stage, 0.0) + (time.perf_counter() - start) * 1e6

        return run_async if asyncio.iscoroutinefunction(fn) else run

    seen: dict[str, list[tuple[float, dict[str, float]]]] = {}
    analyze = paraphrase.analyze
    paraphrase.analyze = timed(analyze, "kiwi")
    try:
        for _ in range(rounds):
            for case in [*load("precision"), *load("grounding")]:
                for text in filter(None, (case.answer, case.false)):
                    done, rest = split_sentences(text)
                    stream = OutputGuard(locale=case.lang, facts=case.context("enforce")).stream(
                        outcomes=case.outcomes()
                    )
                    for stage, path in STAGES.items():
                        owner_name, _, name = path.rpartition(".")
                        owner = getattr(stream, owner_name) if owner_name else stream
                        # Instance attributes shadow the methods for this stream only.
                        setattr(owner, name, timed(getattr(owner, name), stage))
                    for sentence in [*done, rest] if rest else done:
                        forget_answer_text()
                        spent.clear()
                        start = time.perf_counter()
                        await stream.feed(sentence)
                        total = (time.perf_counter() - start) * 1e6
                        seen.setdefault(sentence.strip(), []).append((total, dict(spent)))
                    await stream.finish()
    finally:
        paraphrase.analyze = analyze
    rows = []
    for sentence, runs in seen.items():
        total, stages = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        rows.append(
            {"us": round(total, 1), **{k: round(v, 1) for k, v in stages.items()}, "sentence": sentence}
        )
    rows.sort(key=lambda r: r["us"], reverse=True)
    return rows[:count]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument(
        "--compare-surface",
        action="store_true",
        help="time with and without the Korean surface topic test, alternating, in one run",
    )
    parser.add_argument(
        "--slowest",
        type=int,
        default=0,
        metavar="N",
        help="also print the N costliest sentences of the sets with each stage's µs",
    )
    args = parser.parse_args(argv)
    if args.compare_surface:
        both = asyncio.run(compare(args.rounds))
        names = list(both)
        print(f"{'figure':<46}" + "".join(f"{n:>16}" for n in names))
        for key in both[names[0]]:
            print(f"{key:<46}" + "".join(f"{both[n][key]!s:>16}" for n in names))
        return both
    figures = asyncio.run(run(args.rounds))
    for key, value in figures.items():
        print(f"{key:<46}{value:>12}")
    if args.slowest:
        rows = asyncio.run(slowest(max(3, args.rounds // 30), args.slowest))
        print(f"\nslowest sentences (µs, median of {max(3, args.rounds // 30)} rounds; stages of that round)")
        for row in rows:
            stages = " ".join(f"{k}={row[k]:.0f}" for k in (*STAGES, "kiwi") if k in row)
            print(f"{row['us']:>8.0f}  {stages:<44} {row['sentence'][:90]!r}")
        figures["slowest"] = rows
    return figures


if __name__ == "__main__":
    main()
