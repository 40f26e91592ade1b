"""A cold `arca-bot search` has its query's terms made in a second process (`bot.knowledge.query_terms`):
the same terms and head noun this process would make, or none adopted when that process fails."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from bot.knowledge import analysis, query_terms
from bot.knowledge.query_terms import QueryTermsAside


@pytest.fixture(autouse=True)
def forget_adopted() -> Iterator[None]:
    yield
    analysis._given.clear()
    analysis.analyze_query.cache_clear()
    analysis.keyword_head.cache_clear()


@pytest.mark.parametrize(
    "query",
    [
        "배송 지연 보상 쿠폰 한도",
        "  쿠폰한도가얼마예요? 2만원 넘게 받았어요  ",
        "How do I change my nickname?",
        "-h --version 쿠폰",  # read as the query, not as the interpreter's options
    ],
)
def test_the_second_process_makes_the_terms_and_head_this_one_would(query: str) -> None:
    text = analysis.search_text(query)
    expected = (tuple(analysis.analyze(text)), analysis.keyword_head.__wrapped__(text))
    with QueryTermsAside(query) as aside:
        assert aside.adopt() is True
    assert analysis._given[text] == expected
    assert (analysis.analyze_query(text), analysis.keyword_head(text)) == expected


def test_adopted_terms_are_what_the_search_uses_for_that_query() -> None:
    analysis.adopt_query_terms("쿠폰 한도", ("쿠폰", "한도"), "한도")
    assert analysis.analyze_query("쿠폰 한도") == ("쿠폰", "한도")
    assert analysis.keyword_head("쿠폰 한도") == "한도"


def test_a_failing_second_process_adopts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_terms, "_PROGRAM", "raise SystemExit(3)")
    with QueryTermsAside("쿠폰 한도") as aside:
        assert aside.adopt() is False
    assert analysis._given == {}


def test_an_answer_for_another_query_is_not_adopted(monkeypatch: pytest.MonkeyPatch) -> None:
    program = "import json; print(json.dumps({'query': '환불', 'terms': ['환불'], 'head': None}))"
    monkeypatch.setattr(query_terms, "_PROGRAM", program)
    with QueryTermsAside("쿠폰 한도") as aside:
        assert aside.adopt() is False
    assert analysis._given == {}


def test_a_query_no_command_line_can_carry_is_analysed_here() -> None:
    with QueryTermsAside("쿠폰\x00한도") as aside:
        assert aside.adopt() is False
    assert analysis._given == {}


def test_no_interpreter_to_start_means_the_terms_are_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    with QueryTermsAside("쿠폰 한도") as aside:
        assert aside.adopt() is False


def test_an_empty_query_starts_nothing() -> None:
    with QueryTermsAside("   ") as aside:
        assert aside.adopt() is False


def test_a_second_process_nobody_waited_for_is_ended() -> None:
    aside = QueryTermsAside("쿠폰 한도")
    process = aside._process
    assert process is not None
    aside.close()
    assert process.returncode is not None


def test_the_light_modules_do_not_import_the_search() -> None:
    """`arca-bot search` starts the second process before Chroma, numpy and the models are imported."""
    code = (
        "import sys, bot.knowledge.query_terms; "
        "print(sorted(m for m in ('numpy', 'chromadb', 'bot.knowledge.index') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
