"""What `arca-bot replay` refuses before any case runs (cases can take minutes): a report file that could
not be written, no transcripts, `-k` matching nothing, a user turn without a script in scripted mode."""

from __future__ import annotations

import os
from pathlib import Path

from bot.replay.command import load_cases
from bot.replay.format import collect_transcripts, require_scripts


class NothingToRun(Exception):
    """The arguments select no case; one line for the operator (nothing ran is not a pass)."""


def report_problem(report: Path) -> str | None:
    """Why `--report FILE` could not be written, or None."""
    if report.is_dir():
        return "is a folder"
    if not report.parent.is_dir():
        return f"folder {report.parent} does not exist"
    if not os.access(report.parent, os.W_OK) or (report.exists() and not os.access(report, os.W_OK)):
        return "is not writable"
    return None


def check_cases(paths: list[Path], *, name_filter: str | None, live: bool) -> None:
    """Raise `NothingToRun` when nothing would run, `TranscriptError` (file:line) for an invalid case."""
    if not collect_transcripts(paths):
        raise NothingToRun(f"no transcripts (*.yaml) in {', '.join(map(str, paths))}: nothing ran")
    cases = load_cases(paths)
    selected = load_cases(paths, name_filter) if name_filter else cases
    if not selected:
        raise NothingToRun(f"no case matches -k {name_filter} ({len(cases)} case(s) found): nothing ran")
    if not live:
        for case in selected:
            require_scripts(case)
