"""The one start-and-stop of `arca-bot run` (Discord, and the web channel beside it with `ARCA_WEB_PORT`)
and `arca-bot web` (the web channel alone): one app on one event loop. It lives above the channels so
that each channel stays independent of the others.

Start: what the chosen channels need is checked first (one line and exit 2, nothing started); then the
app (store, policy index, LLM), the web server, the policy index build, the Discord client. SIGTERM (and
Ctrl-C) end in one shutdown, in order: the Discord client (its outbox, answers in progress), the web
server (its outbox, waiting streams, uvicorn), the runs still going, the policy index build, the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
import sys
from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.app import App
    from bot.config import Settings

log = logging.getLogger(__name__)

DESK_EVERY = 60.0
"""Seconds between the desk watch's checks (SLA reminders, auto-close)."""
AWAY_FROM_DISCORD = timedelta(minutes=2)
"""A process without Discord leaves a due SLA reminder this long to a Discord process, which posts it in
the staff channel, before claiming it itself."""

NO_LLM_LINE = (
    "arca-bot: no LLM configured — set ARCA_MODEL and OPENAI_API_KEY or OPENAI_BASE_URL (see docs/getting-started.md), "
    "or try `arca-bot demo` first."
)


async def serve(
    settings: Settings,
    *,
    discord: bool = True,
    web: bool = False,
    host: str | None = None,
    port: int | None = None,
    app: App | None = None,
    policy_index: Any = None,
    desk_every: float = DESK_EVERY,
    **client_options: Any,
) -> int:
    """Run the chosen channels until SIGTERM, Ctrl-C or the Discord client's end. Returns the exit status.

    `app` (tests) is used as given and left open; `policy_index` replaces the background-built one;
    `client_options` go to the Discord client.
    """
    launch = None
    if discord:
        from bot.serving.discord_client.launch import discord_launch

        launch = discord_launch(settings)
        if isinstance(launch, str):
            print(launch, file=sys.stderr)
            return 2
        if app is None and not settings.llm_configured:
            print(NO_LLM_LINE, file=sys.stderr)
            return 2
    if web:
        from bot.serving.web.startup import identity_service

        identity_service(settings)  # a weak ARCA_WEB_SECRET stops the start (ConfigError), nothing started
    own_app = app is None
    metrics_server = None
    index = None
    if app is None:
        from bot.app import build_app, make_policy_index_safely, start_metrics

        metrics, metrics_server = start_metrics(settings)
        if policy_index is None and web:
            from bot.serving.web.startup import BackgroundPolicyIndex

            # Built once the server listens: its imports and embedding would otherwise delay /healthz.
            index = BackgroundPolicyIndex(
                lambda cancelled: make_policy_index_safely(settings, cancelled=cancelled)
            )
            policy_index = index
        app = await build_app(
            settings, metrics=metrics, policy_index=policy_index, llm_factory=_no_llm(settings)
        )
    server = None
    bot = None
    desk = None
    deliveries = None
    client: asyncio.Task[int] | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    try:
        if web:
            server = await _start_web(settings, app, host, port, index)
            if server is None:
                return 2
            if index is not None:
                index.start()
            if not discord:
                print(f"arca-bot web: serving {server.url}  (Ctrl-C stops)", file=sys.stderr)
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on this platform / thread
            loop.add_signal_handler(signal.SIGTERM, stop.set)
        waits: set[asyncio.Future[Any]] = {asyncio.create_task(stop.wait())}
        if launch is not None:
            from bot.serving.discord_client.client import ArcaDiscordBot
            from bot.serving.discord_client.launch import run_client

            bot = ArcaDiscordBot(
                app.conversations,
                settings,
                shard_plan=launch.plan,
                **{**launch.client_options, "desk_watch": False, **client_options},
            )
            client = asyncio.create_task(run_client(bot, launch.token))
            waits.add(client)
        desk = desk_watch(settings, app, bot=bot, web=server is not None, every=desk_every)
        desk.start()
        deliveries = game_deliveries(settings, app)
        if server is not None:
            # Shielded: cancelling this watch must not cancel uvicorn (that would skip its shutdown and
            # leave the port bound); `server.stop()` ends it below.
            waits.add(asyncio.shield(asyncio.create_task(server.wait())))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # Ctrl-C (asyncio.run cancels this task): the same shutdown
            pass
        finally:
            for task in waits - {client}:
                task.cancel()
        if client is not None and client.done():
            return client.result()
        return 0
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)
        if desk is not None:
            await desk.stop()
        if deliveries is not None:
            await deliveries.stop()
        if bot is not None and not bot.is_closed():
            await bot.close()
        if client is not None:
            await asyncio.wait({client}, timeout=10)
        if server is not None:
            await server.stop()
        if own_app:
            await app.conversations.wait_idle()
        if index is not None:
            await index.stop()
        if own_app:
            if app.conversations.services.orders is not None:
                await app.conversations.services.orders.close()  # the game backend's HTTP client
            await app.store.close()
        if metrics_server is not None:
            metrics_server.close()


def game_deliveries(settings: Settings, app: App) -> Any:
    """With `ARCA_COUPON_DELIVERY=game`, this process's delivery worker, started: it posts the outbox's
    grants and revokes to the game and alerts the staff channel once per burst of dead letters. None
    otherwise."""
    from bot.game.delivery.running import deliveries_for
    from bot.observability import configure_logging

    # The child logs as this process does: ARCA_LOG_FORMAT, level and secret redaction.
    log_setup = functools.partial(configure_logging, settings)
    deliveries = deliveries_for(settings, app.store, app.conversations.notify_staff, log_setup)
    if deliveries is not None:
        deliveries.start()
    return deliveries


def _no_llm(settings: Settings) -> Any:
    """Without an LLM (only `arca-bot web` starts without one) the page says so and `/api/chat` answers
    503; otherwise None, the configured model."""
    if settings.llm_configured:
        return None
    from bot.web_kit.deps import NO_LLM_MESSAGE

    # The operator's hint goes to the log; the player's page only says it cannot answer now.
    log.warning("%s (/api/chat answers 503 until then)", NO_LLM_MESSAGE)

    def llm_factory() -> Any:
        raise RuntimeError("no LLM configured")

    return llm_factory


async def _start_web(settings: Settings, app: App, host: str | None, port: int | None, index: Any) -> Any:
    """The web server on this loop, or None (and one line on stderr) when its address cannot be bound."""
    from bot.serving.web.startup import DEFAULT_PORT, start_web

    if port is None:
        port = settings.web_port if settings.web_port is not None else DEFAULT_PORT
    try:
        return await start_web(
            settings,
            app.conversations,
            host=host,
            port=port,
            index_state=None if index is None else (lambda: index.state),
        )
    except OSError as exc:
        print(
            f"arca-bot: cannot serve the web channel on {host or settings.web_host}:{port} ({exc})",
            file=sys.stderr,
        )
        return None


def desk_watch(
    settings: Settings,
    app: App,
    *,
    bot: Any,
    web: bool,
    every: float = DESK_EVERY,
    wait: timedelta | None = None,
) -> Any:
    """The one SLA-reminder and auto-close watch of this process, whatever channels it serves: reminders
    go to this process's staff sinks (Discord's staff channel, the console) and stay in the audit the
    staff web console shows (`wait`: how long a due reminder is left to a Discord process first; by
    default none when this process runs Discord, else `AWAY_FROM_DISCORD`); each idle conversation this
    process can post into is closed (Discord
    through the bot, with 👍 / 👎; the widget through the staff outbox). Claims make each happen once
    across processes (`bot.store.desk_claims`)."""
    from bot.analytics.staff_response import SlaTargets
    from bot.desk.sla import SlaWatch
    from bot.vocabulary import ThreadId

    conv = app.conversations
    kinds = ({"discord", "dm"} if bot is not None else set()) | ({"web"} if web else set())

    def owns(thread_id: str) -> bool:
        try:
            return ThreadId(thread_id).kind in kinds
        except ValueError:
            return False

    async def tell(thread_id: str, text: str) -> object:
        if ThreadId(thread_id).kind == "web":
            from bot.desk.auto_close import latest_run
            from bot.store.outbox import keep_and_queue_reply
            from bot.store.threads import message_row

            # Shown in the history under the latest answer's run: the widget draws its 👍 / 👎 under it.
            # Kept and queued in one transaction, as a staff reply is: never in the history unsent.
            run_id = await latest_run(conv.store, thread_id)
            message = message_row(
                thread_id, {"role": "assistant", "content": text}, run_id=run_id, pinned=False, kind="answer"
            )
            _, reply_id = await keep_and_queue_reply(conv.store, message, DESK_NAME)
            return reply_id
        from bot.players.discord_app.feedback import tell_closed

        return await tell_closed(bot, thread_id, text)

    return SlaWatch(
        conv.store,
        conv.notify_staff,
        SlaTargets.from_settings(settings),
        conv.clock,
        every,
        tell=tell,
        close_after=timedelta(hours=settings.escalation_idle_close_hours),
        owns=owns,
        wait=wait if wait is not None else timedelta(0) if bot is not None else AWAY_FROM_DISCORD,
    )


DESK_NAME = "Arca"
"""The name a closing notice in the widget is signed with."""
