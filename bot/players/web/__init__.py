"""The web channel: seed 000's SSE event stream over HTTP and a player chat widget.

`server.create_app(WebDeps(...))` is the FastAPI app (routers can be added to it), `runner` serves it
on the bot's event loop, `stream` turns a run into numbered SSE events, `identity` verifies players.
"""

from bot.players.web.app import WebDeps, create_app
from bot.players.web.startup import WebServer, start_web
from bot.players.web.widget.identity import Identity, IdentityService

__all__ = [
    "Identity",
    "IdentityService",
    "WebDeps",
    "WebServer",
    "create_app",
    "start_web",
]
