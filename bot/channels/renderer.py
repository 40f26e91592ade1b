"""The streaming renderer every channel shows answers with (DESIGN.md §7). It is driven by
`Conversations`, so it lives in `bot.conversations.renderer`; channels import it from here."""

from bot.conversations.renderer import DISCORD_LIMIT, Renderer, split_message, status_text
from bot.conversations.surface import Surface, SurfaceError

__all__ = [
    "DISCORD_LIMIT",
    "Renderer",
    "Surface",
    "SurfaceError",
    "split_message",
    "status_text",
]
