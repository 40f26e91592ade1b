"""The web channel: seed 000's SSE event stream over HTTP and a player chat widget.

`server.create_app(WebDeps(...))` is the FastAPI app (routers can be added to it), `runner` serves it
on the bot's event loop, `stream` turns a run into numbered SSE events, `identity` verifies players.
"""

from bot.channels.web.app import WebDeps, create_app
from bot.channels.web.player.identity import Identity, IdentityService
from bot.channels.web.startup import WebServer, start_web

__all__ = [
    "Identity",
    "IdentityService",
    "WebDeps",
    "WebServer",
    "create_app",
    "start_web",
]
