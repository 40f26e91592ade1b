"""The fake Discord test harness: settings pointing at the fake, one started bot, slow scripted models."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.app import App, build_app
from bot.config import Settings, load_settings
from bot.llm.scripted import ScriptedLLM
from bot.serving.discord_client.client import ArcaDiscordBot
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.fake_discord import FakeDiscord

EDIT_INTERVAL = 0.2


def SlowStreamLLM(steps: list[dict[str, Any]], *, delay: float = 0.03, **kwargs: Any) -> ScriptedLLM:
    """The scripted model whose answer stream takes real time (`delay` per chunk)."""
    return ScriptedLLM(steps, chunk_delay=delay, **kwargs)


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "discord_token": FakeDiscord.TOKEN,
        "support_channels": [FakeDiscord.SUPPORT_CHANNEL],
        "staff_channel": FakeDiscord.STAFF_CHANNEL,
        "guild_ids": [FakeDiscord.GUILD_ID],
        "staff_role": FakeDiscord.STAFF_ROLE_NAME,
        "edit_interval": EDIT_INTERVAL,
        "llm_max_retries": 0,
    }
    values.update(overrides)
    return load_settings(**values)


@dataclass
class Running:
    """One started bot: its app, the client and the task running `client.start`."""

    app: App
    bot: ArcaDiscordBot
    task: asyncio.Task[None]

    @property
    def conversations(self) -> Any:
        return self.app.conversations

    async def idle(self, within: float = 15.0) -> None:
        await asyncio.wait_for(self.bot.wait_idle(), within)

    async def stop(self) -> None:
        if not self.bot.is_closed():
            await self.bot.close()
        await asyncio.wait_for(self.task, 10)
        await self.app.store.close()


@dataclass
class BotHarness:
    fake: FakeDiscord
    data_dir: Path
    running: list[Running] = field(default_factory=list)

    def settings(self, **overrides: Any) -> Settings:
        return make_settings(self.data_dir, **overrides)

    async def start(
        self,
        llm: Any = None,
        *,
        settings: Settings | None = None,
        llm_factory: Callable[[], Any] | None = None,
        **bot_options: Any,
    ) -> Running:
        settings = settings or self.settings()
        if llm_factory is None and llm is not None:
            llm_factory = lambda: llm  # noqa: E731 - one scripted model serves every run of the test
        app = await build_app(settings, llm_factory=llm_factory, policy_index=EmptyPolicyIndex())
        bot_options.setdefault("guild_ready_timeout", 0.05)
        bot_options.setdefault("shutdown_grace", 5.0)
        bot = ArcaDiscordBot(app.conversations, settings, **bot_options)
        task = asyncio.create_task(bot.start(FakeDiscord.TOKEN))
        ready = asyncio.create_task(bot.wait_until_ready())
        done, _ = await asyncio.wait({task, ready}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            if task.done():
                task.result()  # raises the start-up error
            raise AssertionError("the bot did not become ready against the fake Discord")
        running = Running(app, bot, task)
        self.running.append(running)
        return running

    async def aclose(self) -> None:
        for r in reversed(self.running):
            if not r.task.done() or not r.bot.is_closed():
                await r.stop()
