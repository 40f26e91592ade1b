"""`arca-bot chat` runs the desk watch too: an escalation about to miss its first-response target gets its
SLA reminder (audited, shown to the console's staff) while a person sits at the console, with no Discord
process to leave it to."""

from __future__ import annotations

import asyncio
import io
import shutil
import socket
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

import bot.channels.console as console
from bot.app import PROJECT_ROOT, build_app
from bot.cli import main
from bot.config import load_settings
from bot.desk.sla import REMINDER_ACTION
from bot.store import AuditEntry, Escalation


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_console_sends_a_due_sla_reminder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    for name in ("coupon_rules.yaml", "delivery.md"):
        shutil.copy(PROJECT_ROOT / "policies" / name, policies / name)
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(policies))
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_MODEL", "m")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))

    async def seed() -> None:  # an escalation 55 minutes old: its 60-minute first-response target is near
        app = await build_app(load_settings())
        async with app.store.session() as s, s.begin():
            s.add(
                Escalation(
                    thread_id="console:desk",
                    player_id="P100",
                    summary="환불 문의",
                    status="open",
                    created_at=datetime.now(UTC) - timedelta(minutes=55),
                )
            )
        await app.store.close()

    asyncio.run(seed())
    seen: list[int] = []

    async def a_person_at_the_console(conversations, **_: object) -> int:
        """Stays at the console until the reminder is recorded (at most 30 s), then quits."""
        for _ in range(300):
            async with conversations.store.session() as s:
                rows = (await s.execute(select(AuditEntry).where(AuditEntry.action == REMINDER_ACTION))).all()
            if rows:
                seen.append(len(rows))
                return 0
            await asyncio.sleep(0.1)
        return 0

    monkeypatch.setattr(console, "run_console", a_person_at_the_console)
    assert main(["chat"]) == 0
    assert seen == [1], "the console process sent the due reminder once"
