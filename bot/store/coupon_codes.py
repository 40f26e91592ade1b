"""Coupon codes: `ARCA-XXXX-XXXX`, drawn from a cryptographic source (codes are money). Replay draws them
from a seeded generator instead (`seeded_codes`), so a transcript can expect a new coupon's code."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O/1/I: codes are read aloud and typed by players. 32 characters: 5 random bits each."""

_BITS: ContextVar[Callable[[], int] | None] = ContextVar("coupon_code_bits", default=None)
"""Where the 40 bits of a code come from in this context: None (the default) means `secrets`. A context
variable, not a setting: only `arca-bot replay` sets it, around one case, and tasks it starts inherit it."""


def new_coupon_code() -> str:
    """`ARCA-XXXX-XXXX`; not guessable, so a player cannot invent a valid code.

    40 random bits from `secrets`, 5 per character (the alphabet has exactly 32), so every character
    is uniform and independent, as with `secrets.choice`, for one call to the random source.
    """
    source = _BITS.get()
    bits = source() if source is not None else int.from_bytes(secrets.token_bytes(5))
    chars = "".join(CODE_ALPHABET[(bits >> shift) & 31] for shift in range(0, 40, 5))
    return f"ARCA-{chars[:4]}-{chars[4:]}"


@contextmanager
def seeded_codes(seed: str) -> Iterator[None]:
    """Within the block, codes come from a generator seeded with `seed`: the same case issues the same
    codes in every run and mode (replay only; a guessable code is worthless as money)."""
    generator = random.Random(seed)
    token = _BITS.set(lambda: generator.getrandbits(40))
    try:
        yield
    finally:
        _BITS.reset(token)
