"""Output guard: what the bot may say. Mass mentions are neutralised, other people's personal data is
redacted, and a claim that a coupon was issued must be backed by this run's results or by the ledger.

An unbacked claim is replaced in place by a truthful sentence built from the run's result codes (and
audited); it is never merely followed by a correction. Whole texts and streams go through the same
per-sentence pipeline, so the streamed text and the final text agree. The parts: `bot.guards.claims`
(sentences and what they claim), `bot.guards.claim_check` (backing by results and the ledger),
`bot.guards.pii` (personal data); this module holds the guard and its streaming form.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from bot.guard_rules import Quirks
from bot.guards.claim_check import (
    ClaimChecker,
    ClaimVerdict,
    check_claims,
    coupon_tools_of,
    truthful_sentence,
)
from bot.guards.claims import parse_claim
from bot.guards.evidence import Evidence, build_evidence
from bot.guards.fact_check import (
    ENFORCE,
    FACT_UNBACKED,
    FACT_WITHHELD,
    OBSERVE,
    OFF,
    FactChecker,
    is_model_note,
)
from bot.guards.input import neutralize_mentions
from bot.guards.pii import redact_pii
from bot.guards.voice import to_the_player, tool_names_said, without_own_label
from bot.loop_share import give_way
from bot.store import Store
from bot.vocabulary.catalogue import PROMPT_NOT_SHARED
from bot.vocabulary.model_notes import DATA_WRAPPER_TAG, is_speaker_label
from bot.vocabulary.sentences import split_sentences
from tools.base import Actor, Tool

log = logging.getLogger(__name__)

_SHINGLE = 6
"""Words in a row that count as quoting a protected text (the system prompt) verbatim."""


NOTE_SHINGLE = 5
"""Words in a row that count as quoting an engine note to the model."""


def _shingles_of(texts: Iterable[str], size: int = _SHINGLE) -> frozenset[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for text in texts:
        words = re.findall(r"[\w'’]+", text.lower())
        out.update(tuple(words[i : i + size]) for i in range(len(words) - size + 1))
    return frozenset(out)


def _note_shingles(
    notes: Iterable[str], player_texts: Iterable[str], outcomes: Iterable[Any]
) -> frozenset[tuple[str, ...]]:
    """The engine notes' runs of words, less those the player wrote or the model put in a call's
    arguments: a note that echoes `order_id: <…>` does not make the model's own words a note (seen in the
    browser test: an answer repeating the model's argument was withheld as "the engine's note")."""
    said = [*player_texts, *(str(getattr(o, "args", "")) for o in outcomes)]
    return _shingles_of(notes, size=NOTE_SHINGLE) - _shingles_of(said, size=NOTE_SHINGLE)


@lru_cache(maxsize=8)
def _protected_shingles(texts: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
    """Cached: every run's guard protects the same system prompt (thousands of words); splitting it
    again for each answer cost the event loop about a millisecond a run."""
    return _shingles_of(texts)


@dataclass(frozen=True)
class OutputVerdict:
    """The text that may be shown, and what the guard changed in it."""

    text: str
    replaced: bool
    """A coupon claim was replaced by the truth."""
    redactions: list[str] = field(default_factory=list)
    """Kinds of personal data hidden: phone, email, card, rrn."""
    details: list[dict[str, Any]] = field(default_factory=list)
    mentions_neutralized: bool = False
    facts: list[dict[str, Any]] = field(default_factory=list)
    """Sentences the fact check withheld (or, observing, would have withheld): kind, removed, replacement."""

    @property
    def facts_withheld(self) -> int:
        return sum(1 for f in self.facts if f["mode"] == ENFORCE)


@dataclass(frozen=True)
class FactContext:
    """What the fact check needs beyond this run's results (read once per run by the caller)."""

    player_texts: tuple[str, ...] = ()
    """The player's messages: this turn's and the thread's earlier ones."""
    earlier_observations: tuple[str, ...] = ()
    """Tool results the model read earlier in the same conversation."""
    fixed_texts: tuple[str, ...] = ()
    """The bot's own texts: coupon rules, the catalogue, a stopped run's notice."""
    mode: str = ENFORCE
    """`enforce` replaces, `observe` only records, `off` skips the check."""
    run_id: str | None = None
    rules: tuple[Any, ...] = ()
    """The coupon rules as sentences (`bot.guards.evidence.rule_passages`), in the conversation's language."""
    on_withheld: Callable[[str, str], None] | None = None
    """Called with (kind, mode) for each withheld sentence: the metrics counter."""
    notices: tuple[str, ...] = ()
    """The open incidents' notices in the run's scope (both languages): a backed source."""
    model_notes: tuple[str, ...] = ()
    """What the engine wrote for the model in this run (`bot.engine.notes.engine_notes`: tagged where it
    was written): a sentence quoting one is never delivered."""
    today: date | None = None
    """The clock's date in `ARCA_TIMEZONE` (`bot.guards.dates.local_today`): dates an answer computes
    from a window start here."""

    def evidence(self, outcomes: Iterable[Any]) -> Evidence:
        return build_evidence(
            outcomes=outcomes,
            player_texts=self.player_texts,
            earlier_observations=self.earlier_observations,
            fixed_texts=self.fixed_texts,
            rules=list(self.rules),
            notices=self.notices,
            today=self.today,
        )


class OutputGuard:
    """Checks the bot's answers for one actor and thread (claims, personal data, mass mentions)."""

    def __init__(
        self,
        *,
        store: Store | None = None,
        actor: Actor | None = None,
        thread_id: str | None = None,
        locale: str = "ko",
        own_phones: Iterable[str] = (),
        own_emails: Iterable[str] = (),
        protected_texts: Iterable[str] = (),
        tools: Iterable[Tool] | None = None,
        facts: FactContext | None = None,
        quirks: Quirks | None = None,
    ) -> None:
        self.store = store
        self.quirks = quirks or Quirks()
        """The model's quirk modes for the sentence rules (`bot.guards.pipeline`)."""
        self.facts = facts or FactContext(mode=OFF)
        """The fact check's context; a guard built without one (staff views of reasoning) checks no facts."""
        self.to_player = facts is not None
        """An answer to the player (it has a fact context): talk about the player is said to them
        (`bot.guards.voice`). The model's reasoning shown to staff keeps its third person."""
        self.coupon_tools = coupon_tools_of(tools)
        """Tools whose results the claim check reads as coupon attempts (they declare `coupon_outcome`)."""
        self.tool_words = {t.name: t.player_name for t in tools or () if t.player_name is not None} | {
            name: words
            for t in tools or ()
            if t.player_name is not None
            for name, words in t.argument_words.items()
        }
        """What the player calls each tool and each of its identifier-named arguments (order_id): an answer
        to the player that names one says this instead."""
        self._protected = _protected_shingles(tuple(protected_texts))
        self.actor = actor
        self.thread_id = thread_id
        self.locale = locale
        self.own_phones = tuple(own_phones)
        self.own_emails = tuple(own_emails)

    @classmethod
    async def for_actor(
        cls,
        store: Store,
        actor: Actor,
        *,
        thread_id: str | None = None,
        locale: str = "ko",
        protected_texts: Iterable[str] = (),
        tools: Iterable[Tool] | None = None,
        facts: FactContext | None = None,
        quirks: Quirks | None = None,
    ) -> OutputGuard:
        """A guard that lets the actor's own phone and e-mail (from their Player row) through."""
        phones: list[str] = []
        emails: list[str] = []
        if store is not None and actor.player_id:
            contacts = await store.players.contacts(actor.player_id)
            phones, emails = list(contacts.phones), list(contacts.emails)
        return cls(
            store=store,
            actor=actor,
            thread_id=thread_id,
            locale=locale,
            own_phones=phones,
            own_emails=emails,
            protected_texts=protected_texts,
            tools=tools,
            facts=facts,
            quirks=quirks,
        )

    def stream(self, *, outcomes: Iterable[Any]) -> StreamingOutputGuard:
        return StreamingOutputGuard(self, outcomes=outcomes)

    async def _record_fact(self, detail: dict[str, Any]) -> None:
        """Log, count and audit one withheld (or, observing, would-be-withheld) sentence."""
        ctx = self.facts
        log.info(
            "fact check %s run=%s thread=%s kind=%s fact=%r",
            "withheld" if detail["mode"] == ENFORCE else "observed",
            ctx.run_id,
            self.thread_id,
            detail["kind"],
            detail["fact"],
        )
        if ctx.on_withheld is not None:
            ctx.on_withheld(detail["kind"], detail["mode"])
        audit = getattr(self.store, "audit", None)
        if audit is None:
            return
        try:
            await audit(
                actor=self.actor.label if self.actor else "bot",
                action=FACT_WITHHELD if detail["mode"] == ENFORCE else FACT_UNBACKED,
                thread_id=self.thread_id,
                target=ctx.run_id,
                code="REPLACED" if detail["mode"] == ENFORCE else "OBSERVED",
                detail=detail,
            )
        except Exception:  # a failed audit write must not let the sentence through
            log.exception("fact check audit failed")

    async def check(self, text: str, *, outcomes: Iterable[Any]) -> OutputVerdict:
        """Check a whole answer; equal to streaming it through `stream()` and calling `finish()`."""
        stream = self.stream(outcomes=outcomes)
        await stream.feed(text)
        await stream.finish()
        return stream.verdict()

    def _clean(self, sentence: str, state: StreamingOutputGuard) -> str:
        # The policy excerpts' wrapper, echoed from a search result: the model's, never the player's.
        sentence = DATA_WRAPPER_TAG.sub("", sentence)
        if self._protected and _shingles_of([sentence]) & self._protected:
            # A verbatim run of the system prompt: the instructions stay private.
            state.prompt_leaks += 1
            ending = sentence[len(sentence.rstrip()) :]
            sentence = PROMPT_NOT_SHARED(self.locale) + (ending or " ")
        sentence, kinds = redact_pii(
            sentence, locale=self.locale, own_phones=self.own_phones, own_emails=self.own_emails
        )
        state.redactions.extend(kinds)
        sentence, flags = neutralize_mentions(sentence)
        if flags:
            state.mentions_neutralized = True
        return sentence


class StreamingOutputGuard:
    """Buffers a streamed answer to sentence boundaries and releases only checked text.

    `await feed(delta)` returns the newly released, checked text (often ""); `await finish()` checks
    the unfinished tail and returns the full final text, which always starts with everything released.

    Whitespace after the last released sentence is held until more text follows, so a withheld last
    sentence leaves no blank lines behind (and none are released before the first sentence). A line that
    is only a dialogue label ("You ask:", "Player:", "질문:") is held until the sentence it introduces is
    judged: it goes when that sentence is withheld, and when the answer ends on it.
    """

    def __init__(self, guard: OutputGuard, *, outcomes: Iterable[Any]) -> None:
        self.guard = guard
        outcomes = list(outcomes)
        self.checker = ClaimChecker(
            outcomes=outcomes,
            store=guard.store,
            locale=guard.locale,
            actor=guard.actor,
            thread_id=guard.thread_id,
            coupon_tools=guard.coupon_tools,
        )
        self.facts = FactChecker(
            guard.facts.evidence(outcomes) if guard.facts.mode != OFF else Evidence(),
            locale=guard.locale,
            mode=guard.facts.mode,
            record=guard._record_fact,
            quirks=guard.quirks,
            notes=_note_shingles(guard.facts.model_notes, guard.facts.player_texts, outcomes),
        )
        self.redactions: list[str] = []
        self.prompt_leaks = 0
        self.voice_rewrites = 0
        """Sentences about the player said to them instead."""
        self.mentions_neutralized = False
        self._buffer = ""
        self._released: list[str] = []
        self._finished = False
        self._space = ""
        """Whitespace after the last released text, not released yet."""
        self._labels = ""
        """Label lines (and the whitespace after them) waiting for the sentence they introduce."""

    @property
    def text(self) -> str:
        """Everything released so far."""
        return "".join(self._released)

    async def _release(self, sentences: Iterable[str]) -> str:
        out = []
        for sentence in sentences:
            if not sentence.strip():
                self._hold(sentence)
                continue
            if is_speaker_label(sentence):
                self._labels += sentence
                continue
            await give_way()  # each sentence's checks are a slice of the loop's turn (`bot.loop_share`)
            checked = await self.checker.check(sentence)
            if checked.strip() and self.guard.to_player:
                said = self._to_the_player(checked)
                if said != checked and self.guard.quirks.acts("voice", f"said to the player: {said[:80]!r}"):
                    checked = said
            if checked.strip():
                checked = await self.facts.check(checked)
            checked = self.guard._clean(checked, self)
            if not checked.strip():
                if self._labels:  # the label introduced a withheld sentence: it goes with it
                    self._log_rewrite(f"a label dropped with the sentence it introduced: {self._labels!r}")
                    self._labels = ""
                self._hold(checked)
                continue
            body = checked.rstrip()
            lead = self._space if self._released or out else ""
            out.append(lead + self._labels + body)
            self._space, self._labels = checked[len(body) :], ""
        piece = "".join(out)
        if piece:
            self._released.append(piece)
        return piece

    def _hold(self, whitespace: str) -> None:
        """Keep whitespace back until text follows it (after a label: as part of the label's lines)."""
        if self._labels:
            self._labels += whitespace
        else:
            self._space += whitespace

    def _to_the_player(self, sentence: str) -> str:
        """The sentence in the second person when it spoke about the player, and with the tools it names
        in the player's words (`bot.guards.voice`)."""
        # A note to the model is the fact check's to drop (and to count). Asked of the stripped sentence,
        # as the fact check asks it: one cached answer for both (twenty patterns a sentence).
        if is_model_note(sentence.strip()):
            return sentence
        unlabelled = without_own_label(sentence)
        if unlabelled is not None:
            sentence = unlabelled
        said = to_the_player(sentence)
        if said is not None:
            self.voice_rewrites += 1
            self._log_rewrite("a sentence about the player rewritten to the second person")
            sentence = said
        named = tool_names_said(sentence, self.guard.tool_words)
        if named is not None:
            self._log_rewrite("a tool's or argument's name said in the player's words")
            sentence = named
        return sentence

    def _log_rewrite(self, what: str) -> None:
        log.info("output guard: %s run=%s thread=%s", what, self.guard.facts.run_id, self.guard.thread_id)

    async def feed(self, delta: str) -> str:
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._buffer += delta
        sentences, self._buffer = split_sentences(self._buffer)
        if not sentences:
            return ""
        return await self._release(sentences)

    async def finish(self) -> str:
        if not self._finished:
            self._finished = True
            rest, self._buffer = self._buffer, ""
            if rest:
                await self._release([rest])
            if self._labels.strip():
                self._finish_on_label()
        return self.text

    def _finish_on_label(self) -> None:
        """The answer ended on a label line: it introduces nothing, so it goes (as the fact check's quirk
        rule for model notes; observing or off, it is delivered as written)."""
        labels, self._labels = self._labels.rstrip(), ""
        if self.facts.mode == ENFORCE and self.guard.quirks.acts(
            "model_notes", f"dropped a label that ends the answer: {labels!r}"
        ):
            self._log_rewrite(f"a label that ends the answer dropped: {labels!r}")
            return
        self._released.append((self._space if self._released else "") + labels)

    def verdict(self) -> OutputVerdict:
        return OutputVerdict(
            text=self.text,
            replaced=self.checker.replaced,
            redactions=list(self.redactions),
            details=list(self.checker.details),
            mentions_neutralized=self.mentions_neutralized,
            facts=list(self.facts.details),
        )


__all__ = [
    "OBSERVE",
    "ClaimChecker",
    "ClaimVerdict",
    "FactContext",
    "OutputGuard",
    "OutputVerdict",
    "StreamingOutputGuard",
    "check_claims",
    "parse_claim",
    "redact_pii",
    "truthful_sentence",
]
