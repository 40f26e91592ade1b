"""Conversations (DESIGN.md §1, §7): the one object every channel talks to.

`routing` holds `Conversations` (thread → run, interrupts, stop), `intake` the input guard's verdict and
the files, `handoff` a thread held by or asked of a person, `staff_lines` staff command lines, `run` one run of the engine and the output guard, `hooks` and
`watchers` who watches runs, `messages` what channels send and get back, `renderer` and `surface` how an
answer is streamed onto a channel.
"""

from bot.conversations.messages import ACK_EMOJI, Incoming, TurnOutcome
from bot.conversations.routing import Conversations, LLMFactory
from bot.conversations.surface import Surface, SurfaceError

__all__ = [
    "ACK_EMOJI",
    "Conversations",
    "Incoming",
    "LLMFactory",
    "Surface",
    "SurfaceError",
    "TurnOutcome",
]
