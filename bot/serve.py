"""`arca-bot run` with `ARCA_WEB_PORT`: several channels in one process, on one app and one event loop.
It lives above the channels so that each channel stays independent of the others."""

from __future__ import annotations

import sys
from typing import Any

from bot.channels.discord_bot import NO_LLM_LINE, NO_TOKEN_LINE, run_discord
from bot.channels.web.runner import BackgroundPolicyIndex, identity_service, start_web


async def run_discord_and_web(settings: Any, *, policy_index: Any = None) -> int:
    """`arca-bot run` with `ARCA_WEB_PORT`: one app, one loop, Discord and the web channel side by side.

    The policy index is built in the background here too, so `/healthz` answers at once."""
    from bot.app import build_app, make_policy_index_safely, start_metrics

    token = settings.discord_token.get_secret_value().strip() if settings.discord_token else ""
    if not token:
        print(NO_TOKEN_LINE, file=sys.stderr)
        return 2
    if not settings.llm_configured:
        print(NO_LLM_LINE, file=sys.stderr)
        return 2
    identity_service(settings)  # a weak ARCA_WEB_SECRET stops the start before anything is built
    metrics, metrics_server = start_metrics(settings)
    index_state = None
    background = None
    if policy_index is None:
        background = BackgroundPolicyIndex(
            lambda cancelled: make_policy_index_safely(settings, cancelled=cancelled)
        )
        policy_index, index_state = background, lambda: background.state
    app = await build_app(settings, metrics=metrics, policy_index=policy_index)
    server = None
    try:
        server = await start_web(settings, app.conversations, port=settings.web_port, index_state=index_state)
        if background is not None:
            background.start()
        return await run_discord(settings, app=app)
    finally:
        if server is not None:
            await server.stop()
        await app.conversations.wait_idle()
        if background is not None:
            await background.stop()
        await app.store.close()
        if metrics_server is not None:
            metrics_server.close()
