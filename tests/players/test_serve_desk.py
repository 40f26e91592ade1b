"""The desk watch runs in whatever process serves (`bot.serving.process`): the web channel alone (no Discord)
closes an idle escalated widget conversation with a notice through the staff outbox and records the SLA
reminder a Discord process left unclaimed, with a controlled clock; SIGTERM stops it with the server."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import datetime, timedelta

from sqlalchemy import select

from bot.analytics.record import record_run
from bot.app import build_app
from bot.llm.scripted import ScriptedLLM
from bot.serving.process import serve
from bot.store import AuditEntry, Escalation
from bot.store.models import StaffOutbox
from tests.eventually import eventually
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.discord import make_settings
from tests.support.serving import SECRET, _free_port

NOW = datetime.fromisoformat("2026-03-03T15:00:00+09:00")


async def test_the_web_channel_alone_runs_reminders_and_auto_close_once(tmp_path) -> None:
    settings = make_settings(tmp_path / "var", discord_token=None, web_port=_free_port(), web_secret=SECRET)
    app = await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), policy_index=EmptyPolicyIndex(), clock=lambda: NOW
    )
    async with app.store.session() as s, s.begin():
        s.add(
            Escalation(
                thread_id="web:v-old:main",
                player_id="P100",
                summary="환불",
                created_at=NOW - timedelta(hours=49),
            )
        )
        s.add(
            Escalation(
                thread_id="web:v-new:main",
                player_id="P200",
                summary="배송",
                created_at=NOW - timedelta(minutes=55),
            )
        )
        s.add(
            Escalation(
                thread_id="discord:77", player_id="P300", summary="old", created_at=NOW - timedelta(hours=49)
            )
        )

    await record_run(
        app.store,
        run_id="run-old",
        thread_id="web:v-old:main",
        player="web:v-old",
        started_at=NOW - timedelta(hours=49, seconds=5),
        answered_at=NOW - timedelta(hours=49),
        locale="ko",
        outcomes=(),
    )
    running = asyncio.create_task(serve(settings, discord=False, web=True, app=app, desk_every=0.05))
    try:

        async def actions() -> list[tuple[str, str, str | None]] | None:
            assert not running.done(), running.result()
            async with app.store.session() as s:
                rows = (await s.execute(select(AuditEntry).where(AuditEntry.actor == "desk"))).scalars().all()
            found = sorted((r.action, r.target, r.code) for r in rows)
            return found if len(found) >= 4 else None

        found = await eventually(actions, what="the desk's work")
        await asyncio.sleep(0.3)  # more checks: nothing is done twice
        assert sorted(found) == sorted(await actions())
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
    finally:
        if not running.done():
            running.cancel()
            await asyncio.wait({running}, timeout=10)

    assert found == [
        ("escalation.closed", "escalation:1", None),  # the widget conversation, silent for 49 h
        ("sla.reminder", "escalation:2", "first_response"),  # due 5 min ago, no Discord took it
        ("sla.reminder", "escalation:3", "first_response"),  # reminded; a Discord process closes it
        ("sla.reminder", "escalation:3", "resolution"),
    ]
    async with app.store.session() as s:
        queued = (await s.execute(select(StaffOutbox))).scalars().all()
    assert [r.thread_id for r in queued] == ["web:v-old:main"] and "상담을 종료합니다" in queued[0].text
    [kept] = [m for m in await app.conversations.memory.recent("web:v-old:main") if m.role == "assistant"]
    assert kept.run_id == "run-old"  # the widget's history shows 👍 / 👎 for that answer under the notice
    await app.store.close()


async def test_under_serve_the_discord_channel_is_closed_once_with_rating_buttons(harness, fake) -> None:
    """`arca-bot run`: the serve-level watch (not the client's own) closes a silent Discord conversation,
    posts the notice with 👍 / 👎 through the client, and posts the SLA reminder in the staff channel."""
    from tests.support.fake_discord import FakeDiscord

    support = FakeDiscord.SUPPORT_CHANNEL
    thread = f"discord:{support}"
    settings = harness.settings()
    app = await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), policy_index=EmptyPolicyIndex(), clock=lambda: NOW
    )
    await record_run(
        app.store,
        run_id="run-d",
        thread_id=thread,
        player="player:P100",
        started_at=NOW - timedelta(hours=49, seconds=5),
        answered_at=NOW - timedelta(hours=49),
        locale="ko",
        outcomes=(),
    )
    async with app.store.session() as s, s.begin():
        s.add(
            Escalation(
                thread_id=thread, player_id="P100", summary="환불", created_at=NOW - timedelta(hours=49)
            )
        )
        s.add(
            Escalation(
                thread_id="discord:555",
                player_id="P200",
                summary="배송",
                created_at=NOW - timedelta(minutes=51),
            )
        )
    running = asyncio.create_task(serve(settings, app=app, guild_ready_timeout=0.05, desk_every=0.05))
    try:
        notices = await eventually(
            lambda: [m for m in fake.bot_messages(support) if "상담을 종료합니다" in m["content"]] or None,
            what="the closing notice",
        )
        await eventually(
            lambda: (
                [m for m in fake.bot_messages(FakeDiscord.STAFF_CHANNEL) if "SLA" in m["content"]] or None
            ),
            what="the SLA reminder in the staff channel",
        )
        await asyncio.sleep(0.3)
        assert len([m for m in fake.bot_messages(support) if "상담을 종료합니다" in m["content"]]) == 1
        assert fake.buttons(int(notices[0]["id"])) == ["arca:fb:up:run-d", "arca:fb:down:run-d"]
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(running, 10) == 0
    finally:
        if not running.done():
            running.cancel()
            await asyncio.wait({running}, timeout=10)
        await app.store.close()
