"""Coupon codes: `ARCA-XXXX-XXXX`, drawn from a cryptographic source (codes are money)."""

from __future__ import annotations

import secrets

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O/1/I: codes are read aloud and typed by players."""


def new_coupon_code() -> str:
    """`ARCA-XXXX-XXXX`; not guessable, so a player cannot invent a valid code."""
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    return f"ARCA-{chars[:4]}-{chars[4:]}"
