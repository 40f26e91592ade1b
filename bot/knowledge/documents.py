"""Policy documents on disk: front matter parsing, `##` sections and the chunks that get embedded.

A policy file is Markdown with YAML front matter (`id`, `title`, `lang`, `version`, `effective`) and
`##` sections (DESIGN.md §10). Every problem is a `PolicyFormatError` naming the file and line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from bot.knowledge.questions import QuestionFileError, read_questions, section_hash
from bot.vocabulary.sentences import prose_sentences
from bot.yaml_files import load_yaml, yaml_error_at

log = logging.getLogger(__name__)

REQUIRED_KEYS = ("id", "title", "lang", "version", "effective")

MAX_CHUNK_CHARS = 600
"""Body characters per chunk. Korean runs ~0.7 e5 tokens a character, so a 600-character body plus
its heading stays well inside e5's 512-token window (the test suite checks every shipped chunk);
MiniLM's 256-token window cuts long Korean text anyway, so smaller chunks would only fragment."""

_HEADING = re.compile(r"^##(?!#)\s*(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_EN_LINE = re.compile(r"^\s*>\s*EN:.*$", re.MULTILINE)


class KnowledgeError(Exception):
    """The knowledge base cannot do what was asked (missing directory, empty corpus, bad config)."""


class PolicyFormatError(KnowledgeError):
    """A policy document is malformed; `str()` is `path:line: message`."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        self.path = Path(path)
        self.line = line
        self.message = message
        super().__init__(f"{self.path}:{line}: {message}")


@dataclass(frozen=True)
class Section:
    """One `##` section of a policy document."""

    title: str
    """The heading text, e.g. `2. 발급 한도`."""
    body: str
    """The section's Markdown text without its heading."""
    line: int
    """1-based line of the heading in the file."""

    @property
    def hash(self) -> str:
        """What the section's questions are tied to (`questions.section_hash`)."""
        return section_hash(self.title, self.body)


@dataclass(frozen=True)
class PolicyDocument:
    """A parsed policy file."""

    path: Path
    doc_id: str
    title: str
    lang: str
    version: str
    effective: str
    sections: list[Section] = field(default_factory=list)
    questions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Section title → the questions players ask that it answers (`<stem>.questions.yaml`, fresh only)."""
    stale_questions: tuple[str, ...] = ()
    """Sections whose questions were written from an older text: left out until written again."""
    questions_reviewed: bool = False
    """The questions file says staff reviewed it (`model: staff`, `questions.REVIEWED_BY`)."""

    @property
    def source(self) -> str:
        """The document's file name, which hits cite (`compensation.md`)."""
        return self.path.name


@dataclass(frozen=True)
class Chunk:
    """The unit that is embedded and retrieved: one section, or one part of a long section."""

    chunk_id: str
    """Stable id: `<source>#<section index>.<part>`; the same position keeps its id across edits."""
    source: str
    doc_id: str
    title: str
    section: str
    lang: str
    version: str
    text: str
    """What a hit shows and quotes: the section body (or this part of it)."""
    content_hash: str
    """sha256 over everything that shapes the embedding; a changed hash means re-embed."""
    questions: tuple[str, ...] = ()
    """Questions players ask that the section answers: the second dense model matches them with the
    section (`bot.knowledge.second_dense`); never shown, never in `passage` (`bot.knowledge.questions`)."""

    @property
    def passage(self) -> str:
        """The text that is embedded: the document title and section heading give the body context."""
        return f"{self.title} § {self.section}\n{self.text}"

    def metadata(self) -> dict[str, str | int]:
        return {
            "source": self.source,
            "doc_id": self.doc_id,
            "title": self.title,
            "section": self.section,
            "lang": self.lang,
            "version": self.version,
            "hash": self.content_hash,
        }


def _front_matter(path: Path, lines: list[str]) -> tuple[dict[str, object], int]:
    """Parse the YAML block between the opening and closing `---`; returns it and the body's first index."""
    if not lines or lines[0].strip() != "---":
        raise PolicyFormatError(path, 1, "missing front matter: the file must start with a '---' line")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            end = i
            break
    else:
        raise PolicyFormatError(path, 1, "front matter is not closed by a '---' line")
    front = "\n".join(lines[1:end])
    try:
        data = load_yaml(front)
    except yaml.YAMLError as exc:
        line, problem = yaml_error_at(exc, front)  # +1 below: the opening '---'
        raise PolicyFormatError(path, (line or 1) + 1, f"invalid YAML in front matter: {problem}") from None
    if not isinstance(data, dict):
        raise PolicyFormatError(path, 2, "front matter must be a mapping of keys to values")
    for key in REQUIRED_KEYS:
        value = data.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise PolicyFormatError(path, end + 1, f"front matter is missing required key '{key}'")
    for key in ("id", "title", "lang"):
        if not isinstance(data[key], str):
            line = _key_line(lines, key, end)
            raise PolicyFormatError(path, line, f"front matter key '{key}' must be text")
    return data, end + 1


def _key_line(lines: list[str], key: str, end: int) -> int:
    for i in range(1, end):
        if lines[i].lstrip().startswith(f"{key}:"):
            return i + 1
    return end + 1


def _as_text(value: object) -> str:
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value).strip()


def parse_policy(path: Path, text: str | None = None) -> PolicyDocument:
    """Parse one policy file; raises `PolicyFormatError` with the file and line on any problem."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise PolicyFormatError(path, 1, f"not UTF-8 text ({exc.reason})") from None
    lines = text.lstrip("\ufeff").splitlines()
    meta, body_start = _front_matter(path, lines)

    sections: list[Section] = []
    saw_heading = False
    heading: str | None = None
    heading_line = 0
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(buf).strip()
        if heading is None:
            if body:  # text before the first heading becomes an overview section
                sections.append(Section("개요" if meta["lang"] == "ko" else "Overview", body, body_start + 1))
        elif body:
            sections.append(Section(heading, body, heading_line))
        else:
            raise PolicyFormatError(path, heading_line, f"section '{heading}' is empty")

    for i in range(body_start, len(lines)):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            flush()
            saw_heading = True
            heading, heading_line, buf = match.group(1), i + 1, []
            if not heading:
                raise PolicyFormatError(path, i + 1, "a '##' heading needs a title")
        else:
            buf.append(line)
    flush()
    if not saw_heading:
        raise PolicyFormatError(path, body_start + 1, "the document has no '##' sections")
    seen: dict[str, int] = {}
    for s in sections:
        if s.title in seen:
            raise PolicyFormatError(
                path, s.line, f"duplicate section heading '{s.title}' (first at line {seen[s.title]})"
            )
        seen[s.title] = s.line
    return PolicyDocument(
        path=path,
        doc_id=_as_text(meta["id"]),
        title=_as_text(meta["title"]),
        lang=_as_text(meta["lang"]),
        version=_as_text(meta["version"]),
        effective=_as_text(meta["effective"]),
        sections=sections,
    )


def policy_files(policies_dir: Path) -> list[Path]:
    """The policy documents of a directory: every `*.md` directly in it except a README."""
    policies_dir = Path(policies_dir)
    if not policies_dir.is_dir():
        raise KnowledgeError(f"policy directory not found: {policies_dir}")
    return sorted(p for p in policies_dir.glob("*.md") if p.is_file() and p.name.lower() != "readme.md")


LARGE_POLICY_BYTES = 256 * 1024
"""A policy file above this is unusual (the shipped ones are 2–4 KB) and slow to embed: warn about it."""


def large_policy_files(policies_dir: Path, limit: int | None = None) -> list[tuple[Path, int]]:
    """The policy files over `limit` (default `LARGE_POLICY_BYTES`) bytes, with their sizes."""
    limit = LARGE_POLICY_BYTES if limit is None else limit
    return [(p, p.stat().st_size) for p in policy_files(policies_dir) if p.stat().st_size > limit]


def load_policies(policies_dir: Path) -> list[PolicyDocument]:
    """Parse every policy file of a directory; refuses an empty directory and duplicate ids."""
    files = policy_files(policies_dir)
    if not files:
        raise KnowledgeError(f"no policy documents (*.md) in {policies_dir}")
    docs = [with_questions(parse_policy(p)) for p in files]
    by_id: dict[str, PolicyDocument] = {}
    for doc in docs:
        if doc.doc_id in by_id:
            raise PolicyFormatError(
                doc.path, 2, f"document id '{doc.doc_id}' is also used by {by_id[doc.doc_id].path.name}"
            )
        by_id[doc.doc_id] = doc
    return docs


def with_questions(doc: PolicyDocument) -> PolicyDocument:
    """`doc` with the questions of its `<stem>.questions.yaml`: those of sections whose text is the one
    they were written from; the others are named in `stale_questions` and logged."""
    try:
        stored = read_questions(doc.path)
    except QuestionFileError as exc:
        raise PolicyFormatError(exc.path, exc.line, exc.message) from None
    if stored is None:
        return doc
    entries = stored.by_section()
    fresh: dict[str, tuple[str, ...]] = {}
    stale: list[str] = []
    for section in doc.sections:
        entry = entries.get(section.title)
        if entry is None:
            continue
        if entry.hash == section.hash:
            fresh[section.title] = entry.questions
        else:
            stale.append(section.title)
    if stale:
        log.warning(
            "%s: the questions of %d section(s) were written from an older text and are left out until "
            "`arca-bot questions` writes them again: %s",
            doc.source,
            len(stale),
            ", ".join(stale),
        )
    return replace(doc, questions=fresh, stale_questions=tuple(stale), questions_reviewed=stored.reviewed)


def _split_long(text: str, limit: int) -> list[str]:
    """Pack paragraphs (then sentences, then hard cuts) into pieces of at most `limit` characters."""
    pieces: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if len(para) <= limit:
            pieces.append(para)
            continue
        for sentence in prose_sentences(para):
            while len(sentence) > limit:
                pieces.append(sentence[:limit])
                sentence = sentence[limit:]
            if sentence:
                pieces.append(sentence)
    parts: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}\n\n{piece}" if current else piece
        if len(candidate) <= limit:
            current = candidate
        else:
            parts.append(current)
            current = piece
    if current:
        parts.append(current)
    return parts


def chunk_document(doc: PolicyDocument, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """One chunk per section; a long section is split by paragraph, each part keeping the heading."""
    chunks: list[Chunk] = []
    for s_index, section in enumerate(doc.sections, start=1):
        parts = [section.body] if len(section.body) <= max_chars else _split_long(section.body, max_chars)
        questions = tuple(doc.questions.get(section.title, ()))
        for p_index, part in enumerate(parts, start=1):
            shaped_by = (doc.doc_id, doc.title, section.title, doc.lang, doc.version, part, *questions)
            digest = hashlib.sha256("\x1f".join(shaped_by).encode("utf-8")).hexdigest()
            chunks.append(
                Chunk(
                    chunk_id=f"{doc.source}#{s_index}.{p_index}",
                    source=doc.source,
                    doc_id=doc.doc_id,
                    title=doc.title,
                    section=section.title,
                    lang=doc.lang,
                    version=doc.version,
                    text=part,
                    content_hash=digest,
                    questions=questions,
                )
            )
    return chunks


def chunk_documents(docs: Iterable[PolicyDocument], max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    return [c for doc in docs for c in chunk_document(doc, max_chars)]


def strip_english_summaries(text: str) -> str:
    """Drop the `> EN:` summary lines: what a Korean-only policy set an operator brings looks like."""
    return re.sub(r"\n{3,}", "\n\n", _EN_LINE.sub("", text))
