"""Thread ids (DESIGN.md §7), built and read in one place: `discord:<channel_id>` (a Discord thread is a
channel too), `dm:<user_id>`, `console:<name>`, `replay:<case>`, `web:<identity>:<thread>`.

A `ThreadId` is the string itself (stored, logged and compared as text), with the parts read back from it.
"""

from __future__ import annotations

from typing import Literal, get_args

ThreadKind = Literal["discord", "dm", "console", "replay", "web"]
KINDS: tuple[str, ...] = get_args(ThreadKind)


class ThreadId(str):
    """One conversation's thread id. Build one with `ThreadId.discord(123)` (and the like); read one
    with `ThreadId.parse(text)`, which refuses a text that is not one."""

    __slots__ = ()

    @classmethod
    def discord(cls, channel_id: int | str) -> ThreadId:
        """A Discord channel or thread (`discord:<channel_id>`)."""
        return cls(f"discord:{channel_id}")

    @classmethod
    def dm(cls, user_id: int | str) -> ThreadId:
        """A direct-message conversation with one Discord user (`dm:<user_id>`)."""
        return cls(f"dm:{user_id}")

    @classmethod
    def console(cls, name: str) -> ThreadId:
        """The terminal chat's channel (`console:<name>`)."""
        return cls(f"console:{name}")

    @classmethod
    def replay(cls, case: str) -> ThreadId:
        """A transcript case's channel (`replay:<case>`)."""
        return cls(f"replay:{case}")

    @classmethod
    def web(cls, identity: str, thread: str) -> ThreadId:
        """A web visitor's thread (`web:<identity>:<thread>`): the verified player or anonymous visitor,
        and the thread name the page sends."""
        return cls(f"web:{identity}:{thread}")

    @classmethod
    def parse(cls, text: str) -> ThreadId:
        """`text` as a thread id; ValueError when its kind is unknown or a part is missing."""
        kind, sep, ident = text.partition(":")
        if not sep or kind not in KINDS or not ident:
            raise ValueError(f"not a thread id: {text!r} (expected one of {', '.join(KINDS)}:…)")
        return cls(text)

    @property
    def kind(self) -> str:
        """`discord`, `dm`, `console`, `replay` or `web`."""
        return self.partition(":")[0]

    @property
    def ident(self) -> str:
        """Everything after the kind: the channel or user id, the console or case name, `<identity>:<thread>`."""
        return self.partition(":")[2]

    @property
    def snowflake(self) -> int | None:
        """The Discord channel id (`discord:`) or user id (`dm:`); None for other kinds or a non-numeric id."""
        ident = self.ident
        if self.kind in ("discord", "dm") and ident.isascii() and ident.isdigit():
            return int(ident)
        return None

    @property
    def web_parts(self) -> tuple[str, str] | None:
        """(identity, thread) of a `web:<identity>:<thread>` id; None for other kinds or a bare `web:<name>`."""
        if self.kind != "web":
            return None
        identity, sep, thread = self.ident.rpartition(":")
        return (identity, thread) if sep and identity else None
