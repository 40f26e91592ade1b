"""Coupon codes: `ARCA-XXXX-XXXX`, drawn from a cryptographic source (codes are money)."""

from __future__ import annotations

import secrets

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O/1/I: codes are read aloud and typed by players. 32 characters: 5 random bits each."""


def new_coupon_code() -> str:
    """`ARCA-XXXX-XXXX`; not guessable, so a player cannot invent a valid code.

    40 random bits from `secrets`, 5 per character (the alphabet has exactly 32), so every character
    is uniform and independent, as with `secrets.choice`, for one call to the random source.
    """
    bits = int.from_bytes(secrets.token_bytes(5))
    chars = "".join(CODE_ALPHABET[(bits >> shift) & 31] for shift in range(0, 40, 5))
    return f"ARCA-{chars[:4]}-{chars[4:]}"
