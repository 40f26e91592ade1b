"""The fact check's differential run: every answer of both sets (each correct answer, its false twin and
every grounding answer), in `enforce` and `observe` modes, checked with the Korean surface topic test on
(`bot.guards.paraphrase.SURFACE_TOPIC`, Kiwi only when the surface is unclear) and off (Kiwi for every
sentence). Any difference in the delivered text or in a guard decision is printed; so is how many
sentences each way analysed with Kiwi.

    python -m bench.fact_check_diff [--transcripts tests/transcripts]

`--transcripts` also replays the transcripts both ways and compares every turn's answer and guard
decisions (`replay --report`). Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


class _KiwiCounter:
    """Counts the Korean analyses the fact check asks for (`bot.guards.paraphrase.analyze`)."""

    def __init__(self) -> None:
        from bot.guards import paraphrase

        self.calls = 0
        self._paraphrase = paraphrase
        self._analyze = paraphrase.analyze

    def __enter__(self) -> _KiwiCounter:
        def counted(text: str) -> list[str]:
            self.calls += 1
            return self._analyze(text)

        self._paraphrase.analyze = counted
        return self

    def __exit__(self, *exc: object) -> None:
        self._paraphrase.analyze = self._analyze


def _forget() -> None:
    """Each answer as new text; the passages' words stay cached, as run after run (the first way's run
    warms them for the second: the counts below are the answers' analyses)."""
    from bench.fact_check import forget_answer_text

    forget_answer_text()


async def _set_runs(surface: bool) -> tuple[list[dict[str, Any]], int]:
    from bot.guards import paraphrase
    from tests.guards.fact_set import load

    paraphrase.SURFACE_TOPIC = surface
    out: list[dict[str, Any]] = []
    with _KiwiCounter() as kiwi:
        for case in [*load("precision"), *load("grounding")]:
            for which, text in (("answer", case.answer), ("false", case.false)):
                if text is None:
                    continue
                for mode in ("enforce", "observe"):
                    _forget()
                    verdict = await case.check(text, mode=mode)
                    out.append(
                        {
                            "run": f"{case.id}/{which}/{mode}",
                            "text": verdict.text,
                            "facts": verdict.facts,
                            "replaced": verdict.replaced,
                        }
                    )
    return out, kiwi.calls


def _replay(surface: bool, path: str) -> tuple[list[Any], int, str]:
    from bot.cli import main as cli
    from bot.guards import paraphrase

    paraphrase.SURFACE_TOPIC = surface
    _forget()
    with tempfile.TemporaryDirectory() as tmp, _KiwiCounter() as kiwi:
        report = Path(tmp) / "report.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            cli(["replay", path, "--report", str(report)])
        data = json.loads(report.read_text(encoding="utf-8"))
    passed = f"{data['passed']} passed, {data['failed']} failed"
    turns = [
        {
            "run": f"{c['name']} [{c.get('mode')}] #{i}",
            "answer": t.get("answer"),
            "decisions": t.get("decisions"),
        }
        for c in data["cases"]
        for i, t in enumerate(c["turns"])
    ]
    return turns, kiwi.calls, passed


def _differences(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    if len(a) != len(b):
        return [f"{len(a)} runs against {len(b)}"]
    return [x["run"] for x, y in zip(a, b, strict=True) if x != y]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", help="also replay this directory both ways and compare")
    args = parser.parse_args(argv)
    asyncio.run(_set_runs(surface=False))  # warms the passages' words
    kiwi_only, kiwi_calls = asyncio.run(_set_runs(surface=False))
    surface, surface_calls = asyncio.run(_set_runs(surface=True))
    differ = _differences(kiwi_only, surface)
    print(f"{'set_runs':<40}{len(surface):>8}")
    print(f"{'set_runs_differing':<40}{len(differ):>8}")
    print(f"{'set_kiwi_analyses_without_surface_test':<40}{kiwi_calls:>8}")
    print(f"{'set_kiwi_analyses_with_surface_test':<40}{surface_calls:>8}")
    if args.transcripts:
        before, before_calls, before_passed = _replay(False, args.transcripts)
        after, after_calls, after_passed = _replay(True, args.transcripts)
        turns_differ = _differences(before, after)
        differ += turns_differ
        print(f"{'transcripts_without_surface_test':<40}{before_passed:>24}")
        print(f"{'transcripts_with_surface_test':<40}{after_passed:>24}")
        print(f"{'transcript_turns':<40}{len(after):>8}")
        print(f"{'transcript_turns_differing':<40}{len(turns_differ):>8}")
        print(f"{'transcript_kiwi_analyses_without':<40}{before_calls:>8}")
        print(f"{'transcript_kiwi_analyses_with':<40}{after_calls:>8}")
    for run in differ:
        print("DIFFERS", run)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
