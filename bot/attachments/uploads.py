"""A file as a channel hands it over: a name, the size the channel declares, and how to read it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Upload:
    """One attached file not yet checked. `read` is called only when `size` is within the limit."""

    name: str
    size: int
    """Bytes, as the channel declares them (Discord's attachment metadata, the request's length)."""
    read: Callable[[], Awaitable[bytes]]

    @classmethod
    def of_bytes(cls, name: str, data: bytes) -> Upload:
        async def read() -> bytes:
            return data

        return cls(name, len(data), read)
