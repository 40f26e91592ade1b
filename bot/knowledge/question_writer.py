"""`arca-bot questions`: the configured model writes, for each policy section, questions players ask
that it answers (`bot.knowledge.questions` keeps them; the index matches them beside the section).

One short call per section and language, with one worked example: small local models (1.5B) follow
an example far better than an instruction. What comes back is read line by line and only lines that
look like one question in the wanted language are kept; a section whose answer has none keeps no
questions (and is reported), it never gets the model's other text.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from bot.knowledge.documents import PolicyDocument, Section, load_policies
from bot.knowledge.questions import (
    MAX_QUESTION_CHARS,
    QuestionFile,
    SectionQuestions,
    read_questions,
    write_questions,
)
from bot.vocabulary.language import HANGUL

QUESTIONS_PER_LANGUAGE = 4
LANGUAGES = ("en", "ko")

_EXAMPLE_SECTION = (
    "배송 정책 — 2. 배송 기간\n"
    "실물 굿즈는 결제 후 영업일 기준 3~5일 안에 출고됩니다. 도서 산간 지역은 2일이 더 걸릴 수 있습니다."
)
_EXAMPLES = {
    "en": (
        "English",
        "How long does shipping take for merch?\n"
        "when will my hoodie ship\n"
        "i live on an island, is delivery slower?\n"
        "how many days until my order leaves the warehouse",
    ),
    "ko": (
        "Korean",
        "굿즈 배송 며칠 걸려요?\n"
        "후드티 언제 출발해요\n"
        "섬에 사는데 배송 더 오래 걸리나요?\n"
        "주문한 거 창고에서 언제 나가요",
    ),
}
_SYSTEM = (
    "Players of an online game ask a support bot questions in {language}. Given one section of a "
    "support policy, write {count} {language} questions that this section answers, phrased the way "
    "players type them. One question per line, nothing else."
)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+\s*[.):]|Q\s*\d*\s*[.:)])\s*")
_LATIN = re.compile(r"[A-Za-z]")


class ChatModel(Protocol):
    """What the writer needs of a model: `bot.llm`'s `LLM.chat` (a reply with `.content`)."""

    async def chat(self, messages: list[dict[str, Any]], *, purpose: str = ...) -> Any: ...


def prompt(doc: PolicyDocument, section: Section, language: str) -> list[dict[str, str]]:
    """The messages for one section and language: the instruction, the worked example, the section."""
    name, example = _EXAMPLES[language]
    return [
        {"role": "system", "content": _SYSTEM.format(language=name, count=QUESTIONS_PER_LANGUAGE)},
        {"role": "user", "content": _EXAMPLE_SECTION},
        {"role": "assistant", "content": example},
        {"role": "user", "content": f"{doc.title} — {section.title}\n{section.body}"},
    ]


def _in_language(line: str, language: str) -> bool:
    hangul, latin = len(HANGUL.findall(line)), len(_LATIN.findall(line))
    return hangul > latin if language == "ko" else latin > 0 and hangul == 0


def parse_questions(reply: str, section: Section, language: str) -> list[str]:
    """The lines of `reply` that are one question in `language`: bullets and numbering dropped; the
    section's own sentences, statements and repeats left out; at most `QUESTIONS_PER_LANGUAGE`."""
    body = section.body
    kept: list[str] = []
    seen: set[str] = set()
    for raw in (reply or "").splitlines():
        line = _BULLET.sub("", raw).strip().strip("\"'“”").strip()
        key = line.casefold()
        if not line or len(line) > MAX_QUESTION_CHARS or key in seen or line in body:
            continue
        if line == section.title or line.endswith((".", "。")) or not _in_language(line, language):
            continue  # a sentence ending in a full stop is a statement, not a question
        seen.add(key)
        kept.append(line)
        if len(kept) == QUESTIONS_PER_LANGUAGE:
            break
    return kept


@dataclass
class QuestionRun:
    """What one `arca-bot questions` pass did."""

    written: list[str] = field(default_factory=list)
    """`refunds.md §1. 청약 철회 기간` for each section given questions this pass."""
    kept: int = 0
    """Sections whose questions were fresh and left as they were."""
    empty: list[str] = field(default_factory=list)
    """Sections the model gave no usable question for."""
    files: list[str] = field(default_factory=list)


def stale_sections(doc: PolicyDocument, stored: QuestionFile | None) -> list[Section]:
    """The sections with no questions written from their current text."""
    entries = stored.by_section() if stored is not None else {}
    return [s for s in doc.sections if s.title not in entries or entries[s.title].hash != s.hash]


async def write_document_questions(
    llm: ChatModel,
    doc: PolicyDocument,
    *,
    model: str,
    languages: Sequence[str] = LANGUAGES,
    force: bool = False,
    run: QuestionRun | None = None,
    progress: Callable[[str], None] | None = None,
) -> QuestionFile | None:
    """Write questions for `doc`'s stale sections (every section with `force`) in each of `languages`;
    None when nothing was stale. Sections that are gone from the document are dropped from the file."""
    run = run if run is not None else QuestionRun()
    stored = read_questions(doc.path)
    todo = doc.sections if force else stale_sections(doc, stored)
    entries = stored.by_section() if stored is not None else {}
    if not todo and all(s.title in entries for s in doc.sections) and len(entries) == len(doc.sections):
        run.kept += len(doc.sections)
        return None
    fresh: dict[str, SectionQuestions] = {}
    for section in todo:
        label = f"{doc.source} §{section.title}"
        if progress is not None:
            progress(label)
        questions: list[str] = []
        for language in languages:
            result = await llm.chat(prompt(doc, section, language), purpose="questions")
            questions += parse_questions(result.content or "", section, language)
        fresh[section.title] = SectionQuestions(
            section=section.title, hash=section.hash, questions=tuple(questions)
        )
        (run.written if questions else run.empty).append(label)
    run.kept += len(doc.sections) - len(todo)
    ordered = [
        fresh.get(s.title) or entries[s.title] for s in doc.sections if s.title in fresh or s.title in entries
    ]
    return QuestionFile(document=doc.source, model=model, sections=tuple(ordered))


async def questions_command(
    llm: ChatModel | None,
    policies_dir: Path,
    *,
    model: str,
    languages: Sequence[str] = LANGUAGES,
    force: bool = False,
    check: bool = False,
    out: TextIO | None = None,
) -> int:
    """Write the questions of every section without fresh ones (all with `force`), one document's file
    at a time, so a failure part-way keeps the documents already done. `check`: only list the sections
    without fresh questions; exit 1 when there are any (no model needed). Policy format errors raise
    `PolicyFormatError` (the CLI's exit 2); a model failure ends with exit 1 after one line."""
    out = out or sys.stdout
    docs = load_policies(policies_dir)
    if check:
        missing = [(doc, s) for doc in docs for s in stale_sections(doc, read_questions(doc.path))]
        for doc, section in missing:
            state = "stale" if section.title in doc.stale_questions else "none"
            print(f"{doc.source} §{section.title}: {state}", file=out)
        total = sum(len(d.sections) for d in docs)
        print(f"{total - len(missing)} of {total} sections have questions written from their text", file=out)
        return 1 if missing else 0
    if llm is None:
        raise ValueError("writing questions needs a model")
    run = QuestionRun()
    try:
        for doc in docs:
            written = await write_document_questions(
                llm,
                doc,
                model=model,
                languages=languages,
                force=force,
                run=run,
                progress=lambda label: print(f"writing questions: {label}", file=sys.stderr),
            )
            if written is not None:
                run.files.append(str(write_questions(doc.path, written)))
    except Exception as exc:  # a dead model or endpoint: what is written stays written
        print(
            f"error: the model failed part-way ({type(exc).__name__}: {exc}); {len(run.files)} file(s) "
            "written, run again to go on",
            file=sys.stderr,
        )
        return 1
    print(
        f"{len(run.written)} section(s) given questions, {run.kept} already current, "
        f"{len(run.empty)} without a usable question; {len(run.files)} file(s) written",
        file=out,
    )
    for label in run.empty:
        print(f"  no usable question: {label}", file=out)
    return 0


__all__ = [
    "LANGUAGES",
    "QUESTIONS_PER_LANGUAGE",
    "QuestionRun",
    "parse_questions",
    "prompt",
    "questions_command",
    "stale_sections",
    "write_document_questions",
]
