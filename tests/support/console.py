"""What the `arca-bot chat` tests share: a data dir, two policies and a model URL nobody answers."""

from __future__ import annotations

import io
import shutil
import socket
import sys
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chat_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`arca-bot chat` on its own data dir and two policies, an LLM configured at a closed port, and a
    person who quits at once (stdin at end of file)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for name in ("coupon_rules.yaml", "delivery.md"):
        shutil.copy(PROJECT_ROOT / "policies" / name, policies / name)
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(policies))
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{closed_port()}/v1")
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
