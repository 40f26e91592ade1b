"""Where a sentence ends, for the bot's answers and the players' messages alike: the one splitter the
output guard, the fact check and the tools' reading of a player's question share."""

from __future__ import annotations

import re

_MARKS = ".!?。！？"
"""Terminal punctuation, half- and full-width."""
_CLOSERS = "\"'”’)\\]」』"
"""Closing quotes and brackets that stay with the sentence they close."""

# A sentence ends after terminal punctuation (plus closing quotes/brackets) and one whitespace
# character, or at a newline. Deciding needs only the text up to that point, so a stream and the
# whole text split identically. Markdown prose (a policy paragraph) wraps its lines, so there a newline
# is whitespace like any other and only punctuation ends a sentence.
_BOUNDARIES = {
    (True, True): re.compile(rf"[{_MARKS}…]+[{_CLOSERS}]*[ \t\n]|\n"),
    (False, True): re.compile(rf"[{_MARKS}]+[{_CLOSERS}]*[ \t\n]|\n"),
    (True, False): re.compile(rf"[{_MARKS}…]+[{_CLOSERS}]*\s+"),
    (False, False): re.compile(rf"[{_MARKS}]+[{_CLOSERS}]*\s+"),
}


def split_sentences(
    text: str, *, ellipsis_ends: bool = True, newline_ends: bool = True
) -> tuple[list[str], str]:
    """(complete sentences, each with its terminator, the unfinished rest). `"".join(...) + rest == text`.

    `ellipsis_ends=False` reads a `…` as a pause inside the sentence, as players write one mid-question
    ("환불 기한이… 어떻게 되나요?" is one question about a rule). `newline_ends=False` reads a line break as
    wrapping (Markdown prose), so only punctuation and the whitespace after it end a sentence."""
    boundary = _BOUNDARIES[(ellipsis_ends, newline_ends)]
    parts: list[str] = []
    pos = 0
    for m in boundary.finditer(text):
        parts.append(text[pos : m.end()])
        pos = m.end()
    return parts, text[pos:]


def sentences(text: str) -> list[str]:
    """A whole answer's sentences, the unfinished last one included, blank ones left out."""
    done, rest = split_sentences(text)
    return [s for s in [*done, rest] if s.strip()]


def player_sentences(text: str) -> list[str]:
    """A player's message's sentences, stripped: what is asked is judged one sentence at a time (a `…`
    is a pause, not an end)."""
    done, rest = split_sentences(text, ellipsis_ends=False)
    return [s.strip() for s in [*done, rest] if s.strip()]


def prose_sentences(text: str) -> list[str]:
    """A Markdown paragraph's sentences, stripped (a policy section cut into pieces): its line breaks are
    wrapping, not ends."""
    done, rest = split_sentences(text, newline_ends=False)
    return [s.strip() for s in [*done, rest] if s.strip()]
