"""Questions a policy section answers, kept beside the policies: `<stem>.questions.yaml` next to `<stem>.md`.

Retrieval matches a player's words against a section's words. A Korean section and an English question
("double charged and never got it back") share no term, and the dense models alone rank such pairs
too low (issue 24). So a section may carry questions players ask that it answers, in the languages
players use; the index adds them to what is matched for that section (its lexical terms and its
embedded passage). They are never shown to the model or the player: a hit's text is the section alone.

The files are written by `arca-bot questions` with the configured model (`question_writer`), and are
reviewed and edited like the policies. Each section's entry keeps the hash of the section it was
written from; once the section's text changes, its questions are *stale*: the index leaves them out
and `arca-bot questions` writes them again.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from bot.yaml_files import first_error, line_of, parse_yaml, yaml_error_at

SUFFIX = ".questions.yaml"
MAX_QUESTION_CHARS = 300

Question = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUESTION_CHARS)
]

REVIEWED_BY = "staff"
"""A questions file's `model` once staff have read and edited it; any other value is a model's first
draft, which `arca-bot doctor` counts (a small model's questions often belong to another section)."""

HEADER = (
    "# Questions players ask that each section of {document} answers. Retrieval matches them beside the\n"
    "# section's text; they are never shown to the model or the player. Written by `arca-bot questions`;\n"
    "# review and edit freely, then set `model: staff`. `hash` is the section's text they were written\n"
    "# from: when the section changes they are left out of the index until `arca-bot questions` writes\n"
    "# them again.\n"
)


class SectionQuestions(BaseModel):
    """One section's questions and the hash of the section text they were written from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section: str
    """The section's heading, as in the document (`1. 청약 철회 기간`)."""
    hash: str
    questions: tuple[Question, ...] = ()


class QuestionFile(BaseModel):
    """A `<stem>.questions.yaml` file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    document: str
    """The policy file's name (`refunds.md`)."""
    model: str | None = None
    """The model that wrote the questions (the last one to write any), or `REVIEWED_BY` once staff have
    reviewed them."""

    @property
    def reviewed(self) -> bool:
        return self.model == REVIEWED_BY

    sections: tuple[SectionQuestions, ...] = ()

    def by_section(self) -> dict[str, SectionQuestions]:
        return {entry.section: entry for entry in self.sections}


class QuestionFileError(ValueError):
    """A questions file is malformed; `str()` is `path:line: message` (a `PolicyFormatError` upstream)."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}")


def section_hash(title: str, body: str) -> str:
    """The hash a section's questions are tied to: its heading and text, nothing else."""
    return hashlib.sha256(f"{title}\x1f{body}".encode()).hexdigest()[:16]


def questions_path(policy_path: Path) -> Path:
    """`refunds.md` → `refunds.questions.yaml` beside it."""
    return Path(policy_path).with_suffix(SUFFIX)


def read_questions(policy_path: Path) -> QuestionFile | None:
    """The questions file beside `policy_path`, or None when there is none.

    Raises `QuestionFileError` (file and line) when it is not UTF-8, not YAML, or not the format above,
    or when it belongs to another document."""
    path = questions_path(policy_path)
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise QuestionFileError(path, 1, f"not UTF-8 text ({exc.reason})") from None
    try:
        root, data = parse_yaml(text)
    except yaml.YAMLError as exc:
        line, what = yaml_error_at(exc, text)
        raise QuestionFileError(path, line or 1, f"not valid YAML: {what}") from None
    try:
        parsed = QuestionFile.model_validate(data if data is not None else {})
    except ValidationError as exc:
        loc, message = first_error(exc)
        where = ".".join(str(p) for p in loc) or "(top)"
        raise QuestionFileError(path, line_of(root, loc) or 1, f"{where}: {message}") from None
    if parsed.document != Path(policy_path).name:
        raise QuestionFileError(
            path,
            line_of(root, ("document",)) or 1,
            f"document is {parsed.document!r}, not {Path(policy_path).name!r}",
        )
    return parsed


def dump_questions(questions: QuestionFile) -> str:
    """The file's text: the header, then the document, the model and each section in document order."""
    data = questions.model_dump(exclude_none=True)
    data["sections"] = [{**s, "questions": list(s["questions"])} for s in data["sections"]]
    body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)
    return HEADER.format(document=questions.document) + body


def write_questions(policy_path: Path, questions: QuestionFile) -> Path:
    """Write the questions file beside `policy_path` atomically (a killed write leaves the old file)."""
    path = questions_path(policy_path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(dump_questions(questions))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


__all__ = [
    "SUFFIX",
    "QuestionFile",
    "QuestionFileError",
    "SectionQuestions",
    "dump_questions",
    "questions_path",
    "read_questions",
    "section_hash",
    "write_questions",
]
