"""The web channel: seed 000's SSE event stream over HTTP and a player chat widget.

`server.create_app(WebDeps(...))` is the FastAPI app (routers can be added to it), `runner` serves it
on the bot's event loop, `stream` turns a run into numbered SSE events, `identity` verifies players.
"""

from bot.channels.web.identity import Identity, IdentityService
from bot.channels.web.runner import WebServer, start_web
from bot.channels.web.server import WebDeps, create_app

__all__ = [
    "Identity",
    "IdentityService",
    "WebDeps",
    "WebServer",
    "create_app",
    "start_web",
]
