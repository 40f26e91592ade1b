"""What tests under tests/replay/ share (helpers and constants; the fixtures are in its conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.app import PROJECT_ROOT

TRANSCRIPTS = PROJECT_ROOT / "tests" / "transcripts"
DEMO_CASES = PROJECT_ROOT / "data" / "demo"


MINIMAL_CASE = """\
name: {name}
fixtures:
  clock: "2026-03-02T10:00:00+09:00"
  players: [{{id: P100, discord_id: "9001", name: 루나}}]
  orders: [{{id: ORD001, player_id: P100, status: delayed, item: 한정판 굿즈 세트, amount: 39000}}]
turns:
  - user: "ORD001 어디쯤 왔어요?"
    script:
      - {{tool: lookup_order, args: {{order_id: ORD001}}}}
      - {{final: "{final}"}}
    expect:
      codes: [OK]
      answer_contains: ["{expected}"]
"""


def minimal_case(
    name: str, *, final: str = "ORD001은 배송 지연 상태입니다.", expected: str = "배송 지연"
) -> str:
    """A one-turn lookup case; pass an `expected` the answer lacks to make it fail."""
    return MINIMAL_CASE.format(name=name, final=final, expected=expected)


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The subprocess environment: no developer configuration, offline, this session's data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARCA_", "OPENAI_", "DISCORD_"))}
    env.update(
        ARCA_DATA_DIR=str(data_dir),
        ARCA_CONFIG="",
        ANONYMIZED_TELEMETRY="False",
        HF_HUB_OFFLINE="1",
        ARCA_LOG_LEVEL="WARNING",
    )
    env.update(extra)
    return env


def run_cli(args: list[str], data_dir: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """`arca-bot <args>` in a subprocess (`python -m bot`, the console script's target)."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=PROJECT_ROOT,
        env=cli_env(data_dir, **extra_env),
        capture_output=True,
        text=True,
        timeout=240,
    )
