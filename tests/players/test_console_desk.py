"""`arca-bot chat` runs the desk watch too: an escalation about to miss its first-response target gets its
SLA reminder (audited, shown to the console's staff) while a person sits at the console, with no Discord
process to leave it to."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

import bot.players.terminal as console
from bot.app import build_app
from bot.cli import main
from bot.config import load_settings
from bot.desk.sla import REMINDER_ACTION
from bot.store import AuditEntry, Escalation
from tests.support.console import chat_env


def test_the_console_sends_a_due_sla_reminder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat_env(tmp_path, monkeypatch)
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)

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
