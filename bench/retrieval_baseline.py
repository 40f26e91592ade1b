"""Policy retrieval of an earlier commit against today's, on the same held-out questions.

    python bench/retrieval_baseline.py [--commit a6f5064]

Issue 24's goal "R@1 no worse than today's 0.81" was a figure of the held-out set of its day; the held-out
sets written since are harder (other writers, slangier questions, other businesses' support desks), so
their figures cannot be set beside 0.81. This measures like for like instead: the commit (default: the
last one before issue 24's work, `a6f5064`) is checked out in a temporary git worktree and its own search
runs every held-out set on the shipped corpus and its Korean-only copy, then today's search runs the same
questions. Before issue 24 a hit carried no neighbouring section, so its R@3 is its answer-bearing R@3.

Prints one row per held-out set and language pair with both figures, and `name=value` lines; `main()`
returns them as a dict. Needs the repository's history (a shallow clone lacks the commit: it says so).
Takes about 8 minutes on 2 cores. Not in `make bench`: it builds four indexes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from bench.retrieval import HELDOUT_FILE, HELDOUT_MORE_FILE, HELDOUT_THIRD_FILE  # noqa: E402

BEFORE_ISSUE_24 = "a6f5064"
"""The last commit before issue 24's retrieval work (48d8302 is its first)."""
HELDOUT_SETS = {"first": HELDOUT_FILE, "second": HELDOUT_MORE_FILE, "third": HELDOUT_THIRD_FILE}
CORPORA = ("ko+en", "ko")
LANGUAGES = ("ko", "en")
Row = dict[str, float | str]
"""One set, corpus and query language's figures: r1, ab3 (answer-bearing R@3), wrong, off (abstained)."""

# Run inside the old commit's worktree, with only the API that commit already had (load_eval_cases,
# evaluate, write_korean_only_copy, E5Embedder, PolicyIndex.build): one JSON line per set, corpus, language.
_THEN = """
import json, sys, tempfile
from pathlib import Path
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import evaluate, load_eval_cases, write_korean_only_copy
from bot.knowledge.index import PolicyIndex

sets = json.loads(sys.argv[1])
e5 = E5Embedder()
with tempfile.TemporaryDirectory() as tmp:
    t = Path(tmp)
    corpora = {"ko+en": Path("policies"), "ko": write_korean_only_copy(Path("policies"), t / "ko")}
    for corpus, policies in corpora.items():
        index = PolicyIndex(e5, chroma_dir=t / ("chroma-" + ("ko" if corpus == "ko" else "koen")))
        index.build(policies)
        for name, path in sets.items():
            cases = load_eval_cases(Path(path))
            for lang in ("ko", "en"):
                r = evaluate(index, [c for c in cases if c.lang == lang])
                on = r.totals.get(lang, 0)
                print(json.dumps({
                    "set": name, "corpus": corpus, "lang": lang, "questions": on,
                    "r1": r.hits_at_1.get(lang, 0) / max(on, 1),
                    "ab3": r.hits_at_k.get(lang, 0) / max(on, 1),
                    "wrong": r.wrongly_abstained / max(on, 1),
                    "off": r.off_topic_abstained / max(r.off_topic_total, 1),
                    "off_total": r.off_topic_total,
                }), flush=True)
"""


def figures_then(commit: str) -> list[Row]:
    """The held-out figures of `commit`'s own search, run in a temporary worktree of it."""
    known = subprocess.run(
        ["git", "-C", str(REPO), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True
    )
    if known.returncode != 0:
        raise SystemExit(
            f"commit {commit} is not in this clone (a shallow clone? run `git fetch --unshallow`)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "then"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), commit], check=True
        )
        try:
            env = {**os.environ, "PYTHONPATH": str(tree)}  # its `bot`, not the installed one
            sets = json.dumps({name: str(path) for name, path in HELDOUT_SETS.items()})
            run = subprocess.run(
                [sys.executable, "-c", _THEN, sets], cwd=tree, env=env, capture_output=True, text=True
            )
            if run.returncode != 0:
                raise SystemExit(f"the search of {commit} failed:\n{run.stderr[-2000:]}")
            return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


def figures_now() -> list[Row]:
    """Today's figures on the same sets, corpora and languages (the shipped configuration)."""
    from bench.retrieval import KOREAN_ONLY_QUESTIONS, POLICIES, _build
    from bot.knowledge.embedders import E5Embedder
    from bot.knowledge.evaluation import evaluate, load_eval_cases, write_korean_only_copy
    from bot.knowledge.fusion import DEFAULT_FUSION

    out: list[Row] = []
    e5 = E5Embedder()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        korean_only = write_korean_only_copy(POLICIES, t / "ko", questions_from=KOREAN_ONLY_QUESTIONS)
        for corpus, policies in (("ko+en", POLICIES), ("ko", korean_only)):
            index = _build(e5, policies, t, "koen" if corpus == "ko+en" else "ko")[0]
            for name, path in HELDOUT_SETS.items():
                cases = load_eval_cases(path)
                for lang in LANGUAGES:
                    r = evaluate(index, [c for c in cases if c.lang == lang], fusion=DEFAULT_FUSION)
                    out.append(
                        {
                            "set": name,
                            "corpus": corpus,
                            "lang": lang,
                            "questions": r.totals.get(lang, 0),
                            "r1": r.recall_at_1(),
                            "ab3": r.answer_bearing_recall(),
                            "wrong": r.wrong_abstain_rate,
                            "off": r.off_topic_abstain_rate,
                            "off_total": r.off_topic_total,
                        }
                    )
    return out


def _key(f: Row) -> tuple[str, str, str]:
    return str(f["set"]), str(f["corpus"]), str(f["lang"])


def _order(f: Row) -> tuple[int, int, bool]:
    return list(HELDOUT_SETS).index(str(f["set"])), CORPORA.index(str(f["corpus"])), f["lang"] != "ko"


def compare(then: list[Row], now: list[Row]) -> dict[str, float]:
    """Print the two side by side; the figures as `baseline_<set>_<lang>_to_<corpus>_<figure>_{then,now}`."""
    before = {_key(f): f for f in then}
    print(
        f"{'held-out set, pair':24} {'n':>4}  {'R@1':>11}  {'ans. R@3':>11}  {'wrong abst.':>11}  {'off-topic':>11}"
    )
    figures: dict[str, float] = {}
    for f in sorted(now, key=_order):
        b = before.get(_key(f))
        if b is None:
            continue
        cells = []
        for fig in ("r1", "ab3", "wrong", "off"):
            cells.append(f"{b[fig]:.2f} → {f[fig]:.2f}")
            name = f"baseline_{f['set']}_{f['lang']}_to_{f['corpus'].replace('+', '')}_{fig}"
            figures[f"{name}_then"], figures[f"{name}_now"] = float(b[fig]), float(f[fig])
        label = f"{f['set']}, {f['lang']} → {f['corpus']}"
        print(f"{label:24} {f['questions']:>4}  " + "  ".join(f"{c:>11}" for c in cells))
    for name, value in figures.items():
        print(f"{name}={value:.3f}")
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--commit", default=BEFORE_ISSUE_24, help="the earlier commit (default: %(default)s)")
    args = parser.parse_args(argv)
    then = figures_then(args.commit)
    print(f"{args.commit}: {len(then)} rows measured; today's search on the same questions…", flush=True)
    return compare(then, figures_now())


if __name__ == "__main__":
    main()
