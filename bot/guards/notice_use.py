"""Whether a delivered answer relayed an incident's notice: the signal that its conversation asked about
the incident even though the model answered from the pinned notice without calling `incident_status`.

A sentence of the answer relays a notice sentence when it states one of that sentence's facts (a time, a
date, a duration, an amount) and shares at least `FACT_MATCH` of its word bigrams with it — the fact
check's own test for "the notice backs this sentence" — or, for a notice sentence without facts, when it
repeats most of what it says beyond courtesy (`TEXT_MATCH`, `TEXT_MIN_GRAMS`). An answer about something
else shares neither, so a conversation in scope that never spoke of the incident is not counted.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.guards.evidence import grams, keys
from bot.guards.facts import extract_facts
from bot.vocabulary.sentences import sentences

FACT_MATCH = 0.25
"""As `bot.guards.fact_check.PASSAGE_MATCH`: share of the answer sentence's bigrams the notice sentence holds."""
TEXT_MATCH = 0.5
"""Share of a fact-less notice sentence's bigrams the answer sentence must repeat."""
TEXT_MIN_GRAMS = 4
"""A fact-less match needs this many shared bigrams beyond the courtesy ones (`COURTESY`)."""
COURTESY = grams(
    "불편을 드려 죄송합니다 양해 부탁드립니다 감사합니다 안녕하세요 안내해 드리겠습니다 확인해 주세요 현재 지금 "
    "we are sorry for the inconvenience thank you for your patience please note that currently"
)
"""Bigrams of what any support answer says ("불편을 드려 죄송합니다"): sharing them relays no notice."""


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for s in sentences(text)]


def relays_notice(answer: str, notice_texts: Iterable[str]) -> bool:
    """True when a sentence of `answer` relays a sentence of the notice (`notice_texts`: its languages)."""
    notice = [(grams(s), keys(extract_facts(s))) for t in notice_texts for s in _sentences(t)]
    notice = [(g, k) for g, k in notice if g]
    if not notice:
        return False
    for sentence in _sentences(answer):
        mine = grams(sentence)
        if not mine:
            continue
        facts = keys(extract_facts(sentence))
        for theirs, their_facts in notice:
            if their_facts:
                if facts & their_facts and len(mine & theirs) / len(mine) >= FACT_MATCH:
                    return True
                continue
            own = theirs - COURTESY
            shared = len(mine & own)
            if shared >= TEXT_MIN_GRAMS and shared / max(len(own), 1) >= TEXT_MATCH:
                return True
    return False
