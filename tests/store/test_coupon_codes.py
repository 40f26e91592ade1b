"""Coupon codes: the `ARCA-XXXX-XXXX` shape, only the unambiguous alphabet, every character possible."""

from __future__ import annotations

import re

from bot.store.coupon_codes import CODE_ALPHABET, new_coupon_code


def test_codes_have_the_shape_and_alphabet_and_use_every_character_in_every_position() -> None:
    assert len(set(CODE_ALPHABET)) == 32 and not set("0O1I") & set(CODE_ALPHABET)
    codes = [new_coupon_code() for _ in range(4000)]
    shape = re.compile(f"ARCA-[{CODE_ALPHABET}]{{4}}-[{CODE_ALPHABET}]{{4}}")
    assert all(shape.fullmatch(code) for code in codes)
    assert len(set(codes)) == len(codes)
    positions = [[code.replace("-", "")[4 + i] for code in codes] for i in range(8)]
    # 4,000 draws leave a given character out of a position with probability ~32·(31/32)^4000 ≈ 0.
    assert all(set(chars) == set(CODE_ALPHABET) for chars in positions)
