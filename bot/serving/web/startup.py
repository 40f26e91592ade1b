"""Serving the web channel: uvicorn as a task on the bot's own event loop (`WebServer`, `start_web`), the
policy index built in the background so `/healthz` answers at once (`BackgroundPolicyIndex`), and
`arca-bot web-token`. Starting and stopping the process (`arca-bot web`, `arca-bot run`) is `bot.serving.process`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import uvicorn

from bot.config import ConfigError
from bot.loop_share import background_work
from bot.serving.web.app import WebDeps, create_app
from bot.web_kit.identity import IdentityService, secret_problem

log = logging.getLogger(__name__)

DEFAULT_PORT = 8080


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the process's owner (the CLI, Discord) handles signals."""

    @contextlib.contextmanager
    def capture_signals(self):  # type: ignore[override]
        yield


class WebServer:
    """The HTTP server of one FastAPI app on the running loop. `port=0` picks a free port."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        self.app = app
        self.host = host
        self.port = port
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> WebServer:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        trusted = list(getattr(getattr(getattr(self.app, "state", None), "web", None), "trusted_proxies", []))
        config = uvicorn.Config(
            self.app,
            # Forwarded headers only from `ARCA_WEB_TRUSTED_PROXIES` (uvicorn trusts 127.0.0.1 by default).
            proxy_headers=bool(trusted),
            forwarded_allow_ips=",".join(trusted) or "",
            log_config=None,  # uvicorn's own lines go through the bot's handler (ARCA_LOG_FORMAT)
            log_level="warning",
            access_log=False,  # request lines could carry what a player typed in a query; keep them out
            lifespan="off",
            timeout_graceful_shutdown=3,
        )
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the start-up error
                raise RuntimeError("the web server stopped during start-up")
            await asyncio.sleep(0.01)
        outbox = getattr(getattr(self.app, "state", None), "outbox", None)
        if outbox is not None:
            outbox.start()  # posts the staff console's replies to web threads
        resumer = getattr(getattr(self.app, "state", None), "incident_resumer", None)
        if resumer is not None:
            resumer.start()  # compensation runs cut by a stop go on by themselves
        sweep = getattr(getattr(self.app, "state", None), "upload_sweep", None)
        if sweep is not None:
            sweep.start()  # uploads no message took are deleted after ARCA_ATTACHMENT_UNSENT_MINUTES
        return self

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        outbox = getattr(getattr(self.app, "state", None), "outbox", None)
        if outbox is not None:
            await outbox.stop()
        resumer = getattr(getattr(self.app, "state", None), "incident_resumer", None)
        if resumer is not None:
            await resumer.stop()
        sweep = getattr(getattr(self.app, "state", None), "upload_sweep", None)
        if sweep is not None:
            await sweep.stop()
        watch = getattr(getattr(self.app, "state", None), "notice_watch", None)
        if watch is not None:
            await watch.stop()  # open notice streams end now, not at the graceful-shutdown timeout
        streams = getattr(getattr(self.app, "state", None), "streams", None)
        if streams is not None:
            streams.release_waiters(
                for_good=True
            )  # a client waiting for its thread's next stream gets its 204 now
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._server = None

    async def wait(self) -> None:
        """Until the server stops."""
        if self._task is not None:
            await self._task


class BackgroundPolicyIndex:
    """The policy knowledge base, built or refreshed in a worker thread; searches wait until it is ready.

    Stands in for the index in `ToolServices` so the server starts (and `/healthz` answers) at once.
    `build(cancelled)` asks `cancelled()` at its safe points (between embedding batches); `stop()` sets
    it and waits for the thread, so the process never exits while the embedder or the analyzer still
    runs native code in the build thread (that crashed the interpreter at exit). A stopped build keeps
    what it stored; the next start's refresh completes it.
    """

    def __init__(self, build: Callable[[Callable[[], bool]], Any], *, stop_within: float = 30.0) -> None:
        self._build = build
        self._stop_within = stop_within
        """Seconds `stop()` waits for the build to reach a safe point (one embedding batch, the analyzer's load)."""
        self._cancel = threading.Event()
        self._ready = threading.Event()
        self._ready_async = asyncio.Event()
        self._thread: threading.Thread | None = None
        self._index: Any = None
        self.state = "building"

    def start(self) -> BackgroundPolicyIndex:
        loop = asyncio.get_running_loop()

        def work() -> None:
            try:
                with background_work():  # the loop knows it: no inline write while the build embeds
                    self._index = self._build(self._cancel.is_set)
                self.state = "ready"
            except Exception:
                if self._cancel.is_set():
                    log.info("policy index build stopped with the server; the next start completes it")
                    self.state = "stopped"
                else:
                    log.exception("policy index could not be built; policy search is unavailable")
                    self.state = "unavailable"
            finally:
                self._ready.set()
                with contextlib.suppress(RuntimeError):  # the loop already closed: nobody waits
                    loop.call_soon_threadsafe(self._ready_async.set)

        # Not a daemon: were `stop()` ever skipped, the interpreter still joins it before it finalizes.
        self._thread = threading.Thread(target=work, name="policy-index")
        self._thread.start()
        return self

    async def stop(self) -> bool:
        """Stop a build in progress at its next safe point, wait for the thread (at most `stop_within`
        seconds) and close the index's search workers. False when the build did not stop in time."""
        self._cancel.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            await asyncio.to_thread(thread.join, self._stop_within)
            if thread.is_alive():
                log.warning("the policy index build did not stop within %.0f s", self._stop_within)
                return False
        close = getattr(self._index, "close", None)
        if callable(close):
            await asyncio.to_thread(close)
        return True

    async def search(self, query: str, top_k: int = 3) -> list[Any]:
        await self._ready_async.wait()
        if self._index is None:
            raise RuntimeError("the policy index is unavailable")
        return await self._index.search(query, top_k)

    def reindex(self, *args: Any, **kwargs: Any) -> Any:
        self._ready.wait()
        if self._index is None:
            raise RuntimeError("the policy index is unavailable")
        return self._index.reindex(*args, **kwargs)


def identity_service(settings: Any) -> IdentityService:
    """With `ARCA_WEB_SECRET`; without it, a key for this process only (player tokens cannot be checked,
    and visitors get new identities after a restart)."""
    secret = settings.web_secret.get_secret_value() if settings.web_secret is not None else ""
    if not secret.strip():
        log.warning(
            "ARCA_WEB_SECRET is not set: player tokens cannot be verified (every visitor is anonymous) and "
            "anonymous visitors lose their conversations when the server restarts"
        )
        secret = secrets.token_urlsafe(32)
    elif problem := secret_problem(secret):
        raise ConfigError(problem)  # refused: a weak key lets anyone forge a player's token
    return IdentityService(secret)


async def start_web(
    settings: Any,
    conversations: Any,
    *,
    host: str | None = None,
    port: int | None = None,
    index_state: Any = None,
) -> WebServer:
    """Build the web app on `conversations` and serve it; returns the running server."""
    deps = WebDeps.from_settings(settings, conversations, identity_service(settings))
    if index_state is not None:
        deps = replace(deps, index_state=index_state)
    app = create_app(deps)
    port = DEFAULT_PORT if port is None else port
    server = await WebServer(app, host or settings.web_host, port).start()
    log.info("web channel on %s", server.url)
    return server


def web_token_command(settings: Any, player_id: str, ttl: str, *, link: bool = False) -> int:
    """`arca-bot web-token PLAYER_ID [--ttl 15m] [--link]`: print a player token signed with
    ARCA_WEB_SECRET, or with `--link` the chat page's address carrying it (`ARCA_WEB_PUBLIC_URL`, else
    the local server)."""
    from bot.web_kit.identity import parse_ttl

    secret = settings.web_secret.get_secret_value() if settings.web_secret is not None else ""
    if not secret.strip():
        print(
            "arca-bot: ARCA_WEB_SECRET is not set; the web channel could not verify a token", file=sys.stderr
        )
        return 2
    if problem := secret_problem(secret):
        print(f"arca-bot: {problem}", file=sys.stderr)
        return 2
    try:
        seconds = parse_ttl(ttl)
        token = IdentityService(secret).issue_token(player_id, seconds)
    except ValueError as exc:
        print(f"arca-bot: {exc}", file=sys.stderr)
        return 2
    if link:
        port = settings.web_port if settings.web_port is not None else DEFAULT_PORT
        base = settings.web_public_url or f"http://{settings.web_host}:{port}"
        print(f"{base.rstrip('/')}/#token={token}")
    else:
        print(token)
    return 0
