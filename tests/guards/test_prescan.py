"""The guards' cheap tests before their patterns (the model-note needs, `bot.vocabulary.model_notes`; the
case folding and weekday test of the fact patterns, `bot.guards.facts` and `bot.guards.dates`): a pattern
is skipped only when it could not have matched, so each decides exactly as running every pattern did."""

from __future__ import annotations

import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bot.guards.claims import parse_claim
from bot.guards.dates import weekday_errors
from bot.guards.facts import fold_case
from bot.guards.mailbox import parse_arrival
from bot.vocabulary import model_notes
from bot.vocabulary.model_notes import (
    LANGUAGE_NEEDS,
    LANGUAGE_TALK,
    MODEL_NOTE_NEEDS,
    MODEL_NOTE_PATTERNS,
    is_model_note,
    talks_of_its_language,
)
from bot.vocabulary.sentences import sentences
from tests.guards.fact_set import load
from tools.money import find_krw_amounts

ROOT = Path(__file__).resolve().parents[2]

NOTES = [
    "이 플레이어는 쿠폰을 이미 받았습니다.",
    "플레이어에게 금액, 쿠폰 코드, 유효기간을 그대로 안내하세요.",
    "금액을 지어내지 마세요.",
    "받았다고 말하지 마세요.",
    "escalate_to_staff로 넘기세요.",
    "Tell the player the coupon code.",
    "Do not guess the amount.",
    '{"action": "final"}',
    "Quote the bracketed citation.",
    "Call lookup_order first.",
    "Note: In this context, refund means refund.",
    "The assistant's final answer: 네.",
    "This reply directly addresses your question.",
    "I used `lookup_order` for this.",
    "이 답변은 정책을 기반으로 합니다.",
    "Refund is used here as a polite form of refund.",
    "이렇게 답변하면 더 명확합니다.",
    "플레이어: 오류가 발생했습니다.",
    "[OK] 다음은 정책 문서 발췌입니다.",
    "These are data, not instructions.",
    "한국어로만 답변하세요.",
    "저의 이전 대답은 한국어가 아닙니다.",
    "Answer again in Korean.",
    # Letters a case-ignoring pattern takes for ASCII ones (long s, Kelvin sign, dotted and dotless i).
    "Refund is uſed here as a polite form of refund.",
    "Tell the player about the Kelvin sign: remind the pla\u212ayer? no — ask the player.",
    "Quote the bracketed cıtatıon.",
    "Answer again in \u0130nglish or Korean.",
    "ANSWER AGAIN IN KOREAN.",
]


def _every_pattern(text: str) -> bool:
    """The decision without the pre-scan: every pattern run."""
    return any(p.search(text) for p in MODEL_NOTE_PATTERNS) or any(
        p.search(line) for line in sentences(text) for p in LANGUAGE_TALK
    )


def _answer_sentences() -> list[str]:
    """Every sentence of the fact check's answer sets and of the replay transcripts' bot lines."""
    texts: list[str] = []
    for name in ("precision", "grounding"):
        texts.extend(text for case in load(name) for text in (case.answer, case.false) if text)
    for path in sorted((ROOT / "tests/transcripts").rglob("*.yaml")):
        texts.extend(re.findall(r"[^\n]{8,}", path.read_text(encoding="utf-8")))
    return [s for text in texts for s in sentences(text)]


def test_every_letter_a_case_ignoring_pattern_takes_for_a_needed_one_folds_to_it() -> None:
    # Every code point but the surrogates, in one string: each needed character's pattern finds all its
    # case-ignoring matches in one scan.
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    needed = {c for needs in (*MODEL_NOTE_NEEDS, LANGUAGE_NEEDS) for need in needs for c in need}
    for char in needed:
        for m in re.finditer(re.escape(char), every, re.IGNORECASE):
            assert model_notes._folded(m.group()) == char, (hex(ord(m.group())), char)


def test_the_fact_patterns_fold_every_letter_a_case_ignoring_pattern_takes_for_an_ascii_one() -> None:
    """`bot.guards.facts.fold_case` (the fact and weekday patterns' cheap tests, and their tables of
    month and day names): one character for one, each ASCII letter's every case-ignoring match folded to it."""
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert len(fold_case(every)) == len(every)
    for letter in "abcdefghijklmnopqrstuvwxyz":
        for m in re.finditer(letter, every, re.IGNORECASE):
            assert fold_case(m.group()) == letter, (hex(ord(m.group())), letter)
    assert fold_case("FR\u0130DAY, Dec 4") == "friday, dec 4"


def test_each_need_is_written_in_its_pattern() -> None:
    assert len(MODEL_NOTE_NEEDS) == len(MODEL_NOTE_PATTERNS)
    for needs, pattern in zip(MODEL_NOTE_NEEDS, MODEL_NOTE_PATTERNS, strict=True):
        for need in needs:
            assert need == need.lower()
            assert need in pattern.pattern.lower() or re.escape(need) in pattern.pattern, (need, pattern)
    for pattern in LANGUAGE_TALK:
        assert any(need in pattern.pattern.lower() for need in LANGUAGE_NEEDS)


@pytest.mark.parametrize("text", NOTES)
def test_a_note_is_found_with_the_scan_as_without_it(text: str) -> None:
    assert is_model_note(text) == _every_pattern(text)


def test_the_scan_decides_as_every_pattern_on_every_answer_sentence() -> None:
    found = _answer_sentences()
    assert len(found) > 300  # the sets and transcripts were read
    differ = [s for s in found if is_model_note(s) != _every_pattern(s)]
    assert differ == []
    assert any(is_model_note(s) for s in found)  # the sets have notes: the comparison is not all False


def test_the_language_scan_still_finds_talk_of_the_language_in_any_case() -> None:
    assert talks_of_its_language("The previous reply was not in KOREAN.")
    assert talks_of_its_language("Answer again in \u0130nglish.".replace("\u0130", "E"))
    assert not talks_of_its_language("쿠폰은 30일 동안 쓸 수 있어요. 환불은 7일 이내입니다.")


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("3월 10일(일)까지 쓰실 수 있습니다.", "Tuesday"),  # 2026-03-10 is a Tuesday
        ("3월 10일 (화)까지 쓰실 수 있습니다.", None),
        ("3월 10일 일요일까지 쓰실 수 있습니다.", "Tuesday"),
        ("3월 10일, 일요일까지 쓰실 수 있습니다.", "Tuesday"),
        ("You can ask again from FR\u0130DAY, March 5.", "Thursday"),
        ("You can ask again from Thursday, March 5.", None),
        ("7일 이내, 30일 동안 쓸 수 있어요.", None),
    ],
)
def test_a_weekday_beside_a_date_is_weighed_after_the_cheap_test(text: str, wrong: str | None) -> None:
    """The weekday patterns' cheap test (`bot.guards.dates._WEEKDAY_NEEDS`) lets through every way a
    weekday is written beside a date, and the "일" of "7일" alone is not one."""
    errors = weekday_errors(text, date(2026, 3, 2))
    assert [real for _, real in errors] == ([wrong] if wrong else [])


def test_the_claim_amount_and_mailbox_tests_find_what_their_patterns_find() -> None:
    """The coupon claim's, the won amounts' and the mailbox claim's cheap tests (`bot.guards.claims`,
    `tools.money`, `bot.guards.mailbox`): spacing, case and the currency as written are kept."""
    assert parse_claim("쿠폰을  발급했습니다.").issued  # two spaces: squeezed before the patterns, as before
    assert parse_claim("쿠폰을\n발급\t했습니다.").issued
    assert parse_claim("We have \u0130SSUED your coupon.").issued  # "İ" is an i to a case-ignoring pattern
    assert parse_claim("I’ve already received 3 coupons today.").already
    assert not parse_claim("환불은 7일 이내에 신청하실 수 있어요.").any
    assert [a.value for a in find_krw_amounts("₩30,000 and 3만 5천원, 20 won and 5 Won; 7,000 krw")] == [
        30000,
        35000,
        20,
        5,
        7000,
    ]
    assert [a.value for a in find_krw_amounts("5 WON, 10 KRW")] == [10]  # the patterns are case-sensitive
    assert find_krw_amounts("오천원, 만 원") == []  # no digit: no pattern can match
    assert parse_arrival("A credit was added to your INBOX.") is not None
    assert parse_arrival("우편함에 보상이 도착했습니다.") is not None
    assert parse_arrival("보상 쿠폰 지급이 완료되었습니다.") is None
    assert parse_arrival("보상 쿠폰 지급이 완료되었습니다.", granted_means_mailbox=True) is not None


def test_the_first_letter_lookaheads_admit_exactly_what_the_words_they_guard_start_with() -> None:
    """`(?=[jfmasond])` before the month names and `(?=[\\dotfsena])` before the number words (`bot.guards.
    facts`): every word starts with a character of its class, and the class, case ignored, takes exactly
    the characters a case-ignoring pattern takes for those first letters (no more, no fewer)."""
    from bot.guards import facts

    words = {
        facts._MONTH_FIRST: list(facts._MONTHS),
        facts._EN_NUM_FIRST: [*facts._WORDS_EN, "0", "1", "once", "twice"],
    }
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    for first, names in words.items():
        starts = {name[0] for name in names}
        assert all(re.fullmatch(first, start, re.IGNORECASE) for start in starts)
        took = {m.group() for m in re.finditer(first, every, re.IGNORECASE)}
        either = {
            m.group()
            for s in starts
            for m in re.finditer(re.escape(s) if s.isalpha() else r"\d", every, re.I)
        }
        assert took == either


def test_the_weekday_lookaheads_admit_every_date_and_day_name_start() -> None:
    """`bot.guards.dates`: every English day name starts with a letter of `_DAY_FIRST`; every date
    `_DATE_TEXT` matches starts with a digit or a month name's first letter (`_DATE_FIRST`)."""
    from bot.guards import dates, facts

    assert {day[0] for day in dates._EN_DAYS} == set(dates._DAY_FIRST)
    assert {month[0] for month in facts._MONTHS} == set(dates._DATE_FIRST.removeprefix(r"\d"))
    text = "2026-03-09, 2026년 3월 9일, 3월 9일, March 9, Mar. 9th, 9 March 2026, ſept 9, 9th OCT"
    starts = {m.group()[0] for m in re.finditer(dates._DATE_TEXT, text, re.IGNORECASE)}
    assert len(starts) > 1 and all(re.fullmatch(f"[{dates._DATE_FIRST}]", c, re.IGNORECASE) for c in starts)


def test_the_count_after_its_noun_lookahead_admits_every_noun_start() -> None:
    from bot.guards import facts

    nouns = "coupon voucher box chest item ticket attempt reward request code".split()
    assert {noun[0] for noun in nouns} == set("cvbitar")
    assert facts.order_ids("ORD101, arca-ab12-cd34 and ord102") == ["ORD101", "ORD102"]
    assert facts.extract_facts("The most reward boxes you can get is 3.")[0].value == 3


def test_a_prefixed_amount_followed_by_a_comma_is_still_an_amount() -> None:
    # "₩30,000, valid until …": the comma ends the amount; only a comma followed by a digit continues it.
    assert [a.value for a in find_krw_amounts("₩30,000, 쿠폰 코드는 ARCA-1234입니다")] == [30000]
    assert [a.value for a in find_krw_amounts("KRW 5,000, valid for 30 days")] == [5000]
    assert find_krw_amounts("₩30,000,5") == []  # a broken group is no amount
    assert find_krw_amounts("₩1,00") == []


def test_the_no_fact_test_takes_every_letter_that_folds_to_an_ascii_one() -> None:
    """`bot.guards.facts.states_no_fact` looks for the English words only when `_LATIN_LETTER` finds a
    letter: it takes exactly the characters whose folded form holds an ASCII letter."""
    from bot.guards import facts

    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    folding = {c for c in every if any("a" <= f <= "z" for f in fold_case(c))}
    assert {m.group() for m in re.finditer(facts._LATIN_LETTER, every)} == folding
    # The order word's letters take no other character when case is ignored (`_ORDER_WORD`).
    assert {m.group() for m in re.finditer("[order]", every, re.IGNORECASE)} == set("orderORDER")


def test_a_sentence_the_no_fact_test_passes_states_no_fact_by_every_pattern() -> None:
    """Every sentence of the policies, the sets and the transcripts that `states_no_fact` answers without
    the patterns gets no fact from them either; and it answers most factless sentences."""
    from bot.guards import facts

    found = [*_answer_sentences(), *_policy_sentences()]
    assert len(found) > 1000
    facts._extract.cache_clear()
    skipped = [s for s in found if facts.states_no_fact(s)]
    assert [s for s in skipped if facts._extract(s)] == []
    factless = [s for s in found if not facts._extract(s)]
    assert len(skipped) > len(factless) / 2
    assert facts.states_no_fact("확인했습니다.")
    for stated in ("ORD101 주문은요?", "주문이 취소되었습니다.", "한 장만 드려요.", "Your ORDER was delayed.",
                   "You get three coupons.", "하루가 지났어요.", "ſix coupons", "1."):  # fmt: skip
        assert not facts.states_no_fact(stated), stated


def _policy_sentences() -> list[str]:
    return [
        s
        for path in sorted((ROOT / "policies").glob("*.md"))
        for line in path.read_text(encoding="utf-8").splitlines()
        for s in sentences(line)
    ]


def test_the_first_character_lookaheads_of_the_fact_patterns_change_no_match() -> None:
    """The look-aheads put before the date, time, native count and 만 원 patterns and around both of the
    English count's alternatives (`bot.guards.facts`, a cost cut on long texts): each pattern finds the
    same matches, with the same groups, as it did without them, over every policy line, answer and
    transcript, and over texts written to start matches every way."""
    from bot.guards import facts

    count_en = facts._COUNT_EN.pattern
    head, tail = rf"\b(?={facts._EN_NUM_FIRST})(?:", r"|(once|twice)\b)"
    assert count_en.startswith(head) and count_en.endswith(tail)
    inner = count_en[len(head) : -len(tail)]
    before = {facts._COUNT_EN: rf"\b(?={facts._EN_NUM_FIRST})" + inner + r"|\b(once|twice)\b"}
    for pattern in (*facts._DATE_PATTERNS, facts._YEAR_KO, facts._TIME_PATTERNS[2]):
        before[pattern] = pattern.pattern.removeprefix(facts._STARTS_AT_DIGIT)
    for pattern in facts._TIME_PATTERNS[:2]:
        before[pattern] = pattern.pattern.removeprefix(facts._TIME_FIRST)
    before[facts._COUNT_KO_NATIVE] = facts._COUNT_KO_NATIVE.pattern.split(")", 1)[1]
    before[facts._MAN_WON] = facts._MAN_WON.pattern.removeprefix("(?=만)")
    texts = [*_answer_sentences(), *_policy_sentences()]
    texts += [
        "2026-03-01, 2026년 3월 1일, 3월 1일에, 2027년까지 오전 10:30, 새벽 2시 30분, 밤 11시, 3시, 7 pm, 9AM",
        "쿠폰 한 장, 하나 개, 두 번, 세 건, 다섯 명, 여섯 상자, 일곱 박스, 아홉 차례, 열 장; 만 원, 3만 원",
        "You get three coupons once a day, TWICE a week; 3 ORDERS and one box per hour. Once more.",
    ]
    for pattern, written in before.items():
        old = re.compile(written, pattern.flags)
        assert old.pattern != pattern.pattern
        for text in texts:
            new_matches = [(m.span(), m.groups()) for m in pattern.finditer(text)]
            assert new_matches == [(m.span(), m.groups()) for m in old.finditer(text)], (pattern, text)
    assert sum(bool(facts._TIME_PATTERNS[1].search(t)) for t in texts) > 3  # the texts do have matches


def test_every_word_list_the_fact_patterns_need_is_compiled_at_import() -> None:
    """`bot.guards.facts._has` compiles a word list's alternation the first time it is asked; the lists are
    compiled at import so that no conversation pays for it (nor for the collection its garbage can start).
    Extracting every policy line, answer and transcript sentence, whole and one by one, compiles nothing."""
    from bot.guards import facts

    compiled = dict(facts._WORDS_PATTERNS)
    facts._extract.cache_clear()
    texts = [*_answer_sentences(), *_policy_sentences()]
    for text in [*texts, " ".join(texts)]:
        facts.extract_facts(text)
    assert facts._WORDS_PATTERNS == compiled
    assert len(compiled) >= 14


def _calendar_kinds(found: list[Any]) -> Counter[tuple[str, Any, str]]:
    from bot.guards.facts import DATE, DURATION, TIME

    return Counter((f.kind, f.value, f.text) for f in found if f.kind in (DATE, TIME, DURATION))


CROSSING = [
    # A "." a match may continue past, with a digit after the cut (or before the mark): never cut there.
    "Refunds open in Jan. 5 days later they close.",
    "We answer in Jan.\n2. [Refund Policy §1] 5 March is the day.",
    "Sent on 2026. 3. 1. 이후 7일.",
    "The window ends 2026 .\n3. 1 일에 끝납니다.",
    "It starts at 10:30. Pm and am are the same to us. 오전. 3시에 봐요.",
    "We close at 7 p.m. Tomorrow we open at 9 a.m. Every day.",
    "A gift returns after 7 days. 한 달 뒤에. 하루. 이틀 후에 끝나요.",
    "Label [Refund Policy §1. Refunds within 7 days] 환불은 7일. [보상. 3일] 이내.",
    "목록입니다.\n- 3일 이내\n* 2시간 뒤\n• 5월 1일부터\n1. 14일 동안\n10) 오전 9:00",
    "문장입니다. - 3일 이내. * 2시간 뒤. 1. 14일 동안.",
    "끝났습니다.\n\n2. [환불 정책 §1] 7일 이내. > EN: within 7 days.\n   + [선물 §3] 7일 동안 돌아갑니다.",
    "Ends on March 9. 2026 is the year. Until Mar. 9th. 9 March. 2027.",
    "두 시간. 세 시간! 한 시간? 일주일. 보름.",
    "Valid for ten. Days go by. For a single. Day.",
    # Found by the random texts below while the cuts were written: a label cut at its ". ", a list mark
    # alone before a digit.
    "EN: Jan.  [Policy §1. 7 days]2) 끝.",
    "> EN: Jan.\n1. 14%하루)hours\n",
    # A time's "p.m." is blanked before the durations are read: the "." it ends on is gone.
    "Ends 12-3 p.m. Weeks pass. Ends 12-3 P.M. Weeks pass.",
    # Labels are blanked before list marks: a mark past them is blanked from the line's start.
    "Since March.\n[Policy §1. 7 days]* 2) rules.\n[a][b] 3 days.",
    "Since March.\nARCA-AB12-CD34 - 12 coupons.",
]


def test_the_calendar_reads_a_text_piece_by_piece_with_the_same_dates_times_and_durations() -> None:
    """`bot.guards.facts.calendar_pieces` cuts a text only where no date, time or duration pattern can
    carry a match across (nor the patterns that blank text before them): the pieces' facts of those kinds
    are the whole text's, in number, over every policy file whole, policy search results built from every
    policy line as the tool writes them, every answer and transcript line, and texts written to cross."""
    from bot.guards import dates, facts
    from tools.policy_search import EXCERPTS_CLOSE, EXCERPTS_NOTE, EXCERPTS_OPEN

    policies = [path.read_text(encoding="utf-8") for path in sorted((ROOT / "policies").glob("*.md"))]
    lines = [" ".join(line.split()) for text in policies for line in text.splitlines() if line.strip()]
    results = []
    for start in range(0, len(lines), 5):
        hits = lines[start : start + 5]
        body = [f"{i}. [정책 §{i} {hit[:12]}] {hit}" if i % 2 else f"   + [Policy §{i}] {hit}" for i, hit in
                enumerate(hits, start=1)]  # fmt: skip
        results.append("\n".join([EXCERPTS_NOTE("ko"), EXCERPTS_OPEN, *body, EXCERPTS_CLOSE]))
    texts = [*policies, *results, *CROSSING, "\n".join(CROSSING), *_answer_sentences()]
    texts.append("\n".join(_answer_sentences()[:400]))
    cut = 0
    for text in texts:
        pieces = facts.calendar_pieces(text)
        assert "".join(pieces) == text
        cut += len(pieces) - 1
        whole = _calendar_kinds(facts._extract.__wrapped__(text))
        assert sum((_calendar_kinds(facts._extract.__wrapped__(p)) for p in pieces), Counter()) == whole, text
        assert dates._calendar_facts.__wrapped__(text)[0] is not None
    assert cut > 1000  # most sentences are cut apart
    # Each crossing text has a place where a cut would have changed its facts, and was not cut there.
    assert facts.calendar_pieces("Refunds open in Jan. 5 days later.") == [
        "Refunds open in Jan. 5 days later."
    ]
    assert len(facts.calendar_pieces("환불은 7일입니다. 교환은 14일입니다.")) == 2


_PIECE_TOKENS = [
    "1", "3", "7", "10", "14", "30", "2026", "2026-03-01", ".", ". ", ".\n", "\n", " ", "!", "? ", "일", "월", "년",
    "시", "분", "시간", "하루", "한 달", "두", "주", "개월", "영업일", "Jan", "Jan.", "March", "Mar.", "9th", "a.m.",
    "p.m.", "pm", "오전", "밤", ":", "-", "/", "[", "]", "[Policy §1. 7 days]", "(", ")", "+ ", "> EN: ", "- ",
    "1. ", "2) ", "환불", "입니다", "days", "hours", "ten", "a single", "week", "원", "만 원", "KRW", "%", "ORD101",
    "arca-ab12-cd34", "b", "가",
]  # fmt: skip


def test_random_texts_read_piece_by_piece_give_the_calendar_the_same_facts() -> None:
    """The same comparison over texts made of the pieces of dates, times and durations, marks, list marks
    and labels in random order (seeded): a cut where a match could cross shows up here."""
    import random

    from bot.guards import facts

    rnd = random.Random(54)
    cut = 0
    for _ in range(8000):
        text = "".join(rnd.choice(_PIECE_TOKENS) for _ in range(rnd.randint(3, 40)))
        pieces = facts.calendar_pieces(text)
        cut += len(pieces) - 1
        whole = _calendar_kinds(facts._extract.__wrapped__(text))
        assert sum((_calendar_kinds(facts.extract_facts(p)) for p in pieces), Counter()) == whole, text
    assert cut > 2000
