"""The README is the front door: short, with the two quick-start commands exactly as a newcomer types
them, pictures that exist, and every link pointing at a file in the repository (the depth is in docs/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
QUICK_START = [
    "scripts/run     # set up, create + seed the demo database, check the deployment, start the bot",
    "scripts/test    # set up with every extra (torch CPU build first) and run the whole test suite",
]


def _text() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_stays_short() -> None:
    assert len(_text().splitlines()) <= 250, "the README is a front door: move depth into docs/"


def test_the_quick_start_names_the_run_and_test_commands_in_one_code_block() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", _text(), flags=re.S)
    assert any(all(line in block.splitlines() for line in QUICK_START) for block in blocks), (
        "the quick start's two commands (scripts/run, scripts/test) must stay as they are"
    )
    for script in ("scripts/run", "scripts/test"):
        assert (ROOT / script).is_file()


def test_every_relative_link_and_picture_points_at_a_file() -> None:
    targets = re.findall(r"\]\(([^)\s]+)\)", _text())
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+://", t) and not t.startswith("#")]
    assert "docs/configuration.md" in local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_screenshots_are_real_pictures() -> None:
    pictures = re.findall(r"!\[[^\]]+\]\(([^)]+\.png)\)", _text())
    assert len(pictures) >= 2
    for picture in pictures:
        data = (ROOT / picture).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, picture
