"""Staff commands (DESIGN.md §8): the registry and its text form (`registry`), the handlers
(`commands`). The `/ops` commands live in `bot.ops.commands`; `bot.app` assembles both."""

from bot.staff.commands import default_commands
from bot.staff.registry import (
    ArgumentError,
    Handler,
    Invocation,
    Param,
    StaffCommand,
    StaffRegistry,
    StaffReply,
    parse_args,
    resolve_channel,
)

__all__ = [
    "ArgumentError",
    "Handler",
    "Invocation",
    "Param",
    "StaffCommand",
    "StaffRegistry",
    "StaffReply",
    "default_commands",
    "parse_args",
    "resolve_channel",
]
