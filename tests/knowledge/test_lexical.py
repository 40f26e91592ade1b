"""The lexical signal: Korean bigrams, amount normalisation, alias expansion, BM25 ranking."""

from __future__ import annotations

from bot.knowledge.lexical import AliasTable, LexicalIndex, tokenize


def test_korean_is_tokenised_into_character_bigrams_and_amounts_are_normalised() -> None:
    assert tokenize("쿠폰 한도") == ["쿠폰", "한도"]
    assert tokenize("발급한도") == ["발급", "급한", "한도"]
    assert tokenize("20,000원") == tokenize("20000원")


def test_english_words_are_stemmed_and_stopwords_dropped() -> None:
    assert tokenize("The suspension") == tokenize("suspended")
    assert "the" not in tokenize("what is the refund")


def test_aliases_widen_a_query_with_its_synonyms() -> None:
    aliases = AliasTable.load()
    assert "이용 제한" in aliases.expansions("정지당했어요")
    assert "법정대리인" in aliases.expansions("부모님 몰래 결제했어요")
    assert "환불" in aliases.expansions("how do I get a refund")
    assert aliases.expansions("zzz") == []


def test_alias_english_terms_match_whole_words_only() -> None:
    aliases = AliasTable((("환불", "refund"),))
    assert aliases.expansions("refunded?") == []  # "refund" is not a word of "refunded"
    assert aliases.expansions("refund please") == ["환불"]


def test_bm25_ranks_the_document_sharing_rare_terms_first() -> None:
    index = LexicalIndex(
        ["a", "b", "c"],
        ["보상 쿠폰 발급 한도는 20,000원입니다", "이름 변경은 30일 뒤 가능합니다", "배송 지연 기준"],
    )
    top = index.top("쿠폰 한도 20000원", 3)
    assert top[0][0] == "a"
    assert all(score > 0 for _, score in top)
    assert index.top("전혀관계없는말", 3) == []
