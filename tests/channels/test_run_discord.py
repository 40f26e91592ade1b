"""`run_discord`: a missing or rejected token ends with one clear line and an exit status, no traceback."""

from __future__ import annotations

from bot.app import build_app
from bot.channels.discord_bot import run_discord
from bot.llm.scripted import ScriptedLLM
from tests.fakes.knowledge import EmptyPolicyIndex


async def test_missing_token_prints_one_line_and_touches_nothing(harness, fake, capsys):
    status = await run_discord(harness.settings(discord_token=None))

    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "DISCORD_TOKEN is not set" in err
    assert fake.calls == []


async def test_rejected_token_prints_one_line(harness, fake, capsys):
    settings = harness.settings(discord_token="not-the-right-token")
    app = await build_app(settings, llm_factory=lambda: ScriptedLLM([]), policy_index=EmptyPolicyIndex())
    try:
        status = await run_discord(settings, app=app)
    finally:
        await app.store.close()

    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "rejected DISCORD_TOKEN" in err
    assert "Traceback" not in err
    assert [c.status for c in fake.calls_to("GET", r"^/users/@me$")] == [401]
