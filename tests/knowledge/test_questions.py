"""Questions a section answers (issue 24): kept beside the policies, written by the configured model
(`arca-bot questions`), matched by the index beside the section, never shown, and left out once the
section they were written from has changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.knowledge.documents import PolicyFormatError, chunk_documents, load_policies, parse_policy
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.evaluation import write_korean_only_copy
from bot.knowledge.index import PolicyIndex
from bot.knowledge.question_writer import parse_questions
from bot.knowledge.questions import (
    QuestionFile,
    SectionQuestions,
    questions_path,
    read_questions,
    write_questions,
)
from bot.knowledge.second_dense import SecondDense, USEEmbedder
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply
from tests.support.knowledge import KOREAN_ONLY_QUESTIONS, POLICIES

SENDING = """---
id: mail
title: 우편
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 우편 발송 한도

우편은 하루에 30통까지 보낼 수 있고, 첨부 아이템은 한 통에 5개까지입니다.

## 2. 반송

받는 사람이 14일 동안 열지 않은 우편은 보낸 사람에게 돌아갑니다.
"""

SEASON = """---
id: season
title: 시즌
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 시즌 보상

시즌이 끝나면 최종 등급에 따라 보상 상자가 지급됩니다.
"""


GIFTS = """---
id: gift
title: 선물
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 선물 한도

선물은 하루에 10번까지 보낼 수 있고, 친구에게만 보낼 수 있습니다.

## 2. 거래 한도

거래소에는 한 번에 20개까지 물건을 올릴 수 있습니다.
"""


def corpus(tmp_path: Path, *, gifts: bool = False) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "mail.md").write_text(SENDING, encoding="utf-8")
    (folder / "season.md").write_text(SEASON, encoding="utf-8")
    if gifts:
        (folder / "gift.md").write_text(GIFTS, encoding="utf-8")
    return folder


def give_questions(policy: Path, **by_section: list[str]) -> None:
    doc = parse_policy(policy)
    entries = [
        SectionQuestions(section=s.title, hash=s.hash, questions=tuple(by_section[s.title]))
        for s in doc.sections
        if s.title in by_section
    ]
    write_questions(policy, QuestionFile(document=policy.name, model="test", sections=tuple(entries)))


def test_a_questions_file_round_trips_beside_its_policy_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    folder = corpus(tmp_path)
    give_questions(
        folder / "mail.md",
        **{"1. 우편 발송 한도": ["how many letters can i send a day?", "우편 몇 통까지 돼요?"]},
    )
    path = questions_path(folder / "mail.md")
    assert path.name == "mail.questions.yaml"
    assert path.read_text(encoding="utf-8").startswith("# Questions players ask")
    stored = read_questions(folder / "mail.md")
    assert stored is not None and stored.model == "test"
    assert stored.by_section()["1. 우편 발송 한도"].questions == (
        "how many letters can i send a day?",
        "우편 몇 통까지 돼요?",
    )
    assert sorted(p.name for p in folder.iterdir()) == ["mail.md", "mail.questions.yaml", "season.md"]
    doc = next(d for d in load_policies(folder) if d.doc_id == "mail")
    assert doc.questions == {
        "1. 우편 발송 한도": ("how many letters can i send a day?", "우편 몇 통까지 돼요?")
    }


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("document: mail.md\nsections:\n  - section: x\n    hash: h\n    questions: 5\n", 5, "questions"),
        ("document: mail.md\nsections:\n  - section: x\n    hash: h\n    colour: red\n", 5, "colour"),
        ("document: season.md\nsections: []\n", 1, "not 'mail.md'"),
        ("document: mail.md\n\tsections: []\n", 2, "not valid YAML"),
    ],
)
def test_a_malformed_questions_file_is_reported_with_its_file_and_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    folder = corpus(tmp_path)
    (folder / "mail.questions.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(PolicyFormatError) as caught:
        load_policies(folder)
    assert caught.value.path.name == "mail.questions.yaml"
    assert caught.value.line == line
    assert words in caught.value.message


def test_questions_of_a_section_that_changed_since_are_left_out_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = corpus(tmp_path)
    give_questions(
        folder / "mail.md",
        **{"1. 우편 발송 한도": ["daily mail limit?"], "2. 반송": ["what happens to unopened mail?"]},
    )
    (folder / "mail.md").write_text(SENDING.replace("30통", "50통"), encoding="utf-8")
    doc = next(d for d in load_policies(folder) if d.doc_id == "mail")
    assert doc.stale_questions == ("1. 우편 발송 한도",)
    assert doc.questions == {"2. 반송": ("what happens to unopened mail?",)}
    chunks = {c.section: c for c in chunk_documents([doc])}
    assert chunks["1. 우편 발송 한도"].questions == ()
    assert chunks["2. 반송"].questions == ("what happens to unopened mail?",)
    assert "1. 우편 발송 한도" in caplog.text and "arca-bot questions" in caplog.text


def test_a_chunks_hash_follows_its_questions_so_the_stored_chunk_is_rewritten(tmp_path: Path) -> None:
    folder = corpus(tmp_path)
    before = {c.chunk_id: c.content_hash for c in chunk_documents(load_policies(folder))}
    give_questions(folder / "mail.md", **{"2. 반송": ["returned mail?"]})
    after = {c.chunk_id: c.content_hash for c in chunk_documents(load_policies(folder))}
    assert [cid for cid in after if after[cid] != before[cid]] == ["mail.md#2.1"]


def test_only_lines_that_are_one_question_in_the_wanted_language_are_kept(tmp_path: Path) -> None:
    section = parse_policy(corpus(tmp_path) / "mail.md").sections[0]
    reply_text = "\n".join(
        [
            "1. How many letters can I send per day?",
            "- how many items fit in one letter",
            "우편은 하루에 30통까지 보낼 수 있고, 첨부 아이템은 한 통에 5개까지입니다.",  # the section's own
            "The daily limit is 30 letters.",  # a statement
            "하루에 우편 몇 통 보낼 수 있어요?",  # Korean, not wanted here
            "HOW MANY LETTERS CAN I SEND PER DAY?",  # a repeat
            "is there a cap on mail?",
            "can i attach 10 items?",
            "what if i hit the mail limit?",
        ]
    )
    assert parse_questions(reply_text, section, "en") == [
        "How many letters can I send per day?",
        "how many items fit in one letter",
        "is there a cap on mail?",
        "can i attach 10 items?",
    ]
    assert parse_questions(reply_text, section, "ko") == ["하루에 우편 몇 통 보낼 수 있어요?"]


def _model_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, base_url: str) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ARCA_MODEL", "writer")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ARCA_LLM_MAX_RETRIES", "0")


async def _run(argv: list[str]) -> int:
    import asyncio

    return await asyncio.to_thread(main, argv)


async def test_arca_bot_questions_writes_each_sections_questions_through_the_model_then_keeps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus(tmp_path)
    async with FakeOpenAIServer(
        default_reply=reply("how many letters can i send a day?\n하루에 몇 통 보내요?")
    ) as server:
        _model_env(monkeypatch, tmp_path, server.base_url)
        assert await _run(["questions", "--policies", str(folder), "--check"]) == 1
        assert "0 of 3 sections" in capsys.readouterr().out
        assert server.requests == []  # --check needs no model

        assert await _run(["questions", "--policies", str(folder)]) == 0
        assert len(server.requests) == 6  # three sections, English and Korean
        first = server.requests[0]["messages"]
        assert first[-1]["content"].startswith("우편 — 1. 우편 발송 한도\n우편은 하루에 30통")
        stored = read_questions(folder / "mail.md")
        assert stored is not None and stored.model == "writer"
        assert stored.by_section()["2. 반송"].questions == (
            "how many letters can i send a day?",
            "하루에 몇 통 보내요?",
        )

        assert await _run(["questions", "--policies", str(folder), "--check"]) == 0
        assert await _run(["questions", "--policies", str(folder)]) == 0
        assert len(server.requests) == 6  # nothing stale: the model is not asked again
        assert "0 section(s) given questions, 3 already current" in capsys.readouterr().out

        (folder / "season.md").write_text(SEASON.replace("보상 상자", "보상 상자와 칭호"), encoding="utf-8")
        assert await _run(["questions", "--policies", str(folder), "--languages", "en"]) == 0
        assert len(server.requests) == 7  # only the changed section, in English only


async def test_a_model_that_fails_part_way_keeps_the_documents_already_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus(tmp_path)
    good = reply("how many letters can i send a day?")
    async with FakeOpenAIServer([good, good, good, good, fault("500")]) as server:
        _model_env(monkeypatch, tmp_path, server.base_url)
        assert await _run(["questions", "--policies", str(folder)]) == 1
        err = capsys.readouterr().err
        assert "the model failed part-way" in err and "1 file(s) written" in err
        assert "sk-test" not in err
        assert read_questions(folder / "mail.md") is not None
        assert read_questions(folder / "season.md") is None


def test_arca_bot_questions_without_a_model_or_with_an_unknown_language_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus(tmp_path)
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path / "var"))
    monkeypatch.delenv("ARCA_MODEL", raising=False)
    assert main(["questions", "--policies", str(folder), "--languages", "fr"]) == 2
    assert "--languages takes en, ko" in capsys.readouterr().err
    assert main(["questions", "--policies", str(folder)]) == 2
    assert "needs a model" in capsys.readouterr().err


def test_an_english_question_reaches_a_korean_only_section_through_its_questions_which_are_never_shown(
    tmp_path: Path, e5: E5Embedder, use: USEEmbedder
) -> None:
    folder = write_korean_only_copy(POLICIES, tmp_path / "policies")  # no questions files
    query = "what happens if i get caught duping items"  # a tuning-set miss without questions
    index = PolicyIndex(e5, chroma_dir=tmp_path / "chroma", second=SecondDense(use))
    try:
        index.build(folder)
        before = index.search_sync(query, top_k=3)
        give_questions(
            folder / "bug_exploitation.md",
            **{
                "2. 제재 기준": [
                    "What is the penalty for duping items?",
                    "Will I get banned for a dupe glitch?",
                ]
            },
        )
        counts = index.reindex(folder)
        assert (counts.updated, counts.added, counts.removed) == (1, 0, 0)
        after = index.search_sync(query, top_k=3)
    finally:
        index.close()
    wanted = ("bug_exploitation.md", "2. 제재 기준")
    assert wanted not in [(h.source, h.section) for h in before]
    assert (after[0].source, after[0].section) == wanted
    assert "dup" not in after[0].text.casefold() and "penalty" not in after[0].text.casefold()


def test_questions_leave_the_abstain_evidence_as_it_was(
    tmp_path: Path, e5: E5Embedder, use: USEEmbedder
) -> None:
    # Small talk that shares a word with a section's questions is still turned away: the evidence reads
    # the second model's vectors of the section's text alone.
    folder = write_korean_only_copy(POLICIES, tmp_path / "policies")
    index = PolicyIndex(e5, chroma_dir=tmp_path / "chroma", second=SecondDense(use))
    try:
        index.build(folder)
        before = index.explain("너 이름이 뭐야?")[1]
        give_questions(
            folder / "name_change.md",
            **{"1. 이름 변경권": ["내 이름 뭐로 바꿀 수 있어?", "너 이름 바꿀 수 있어?"]},
        )
        index.reindex(folder)
        after = index.explain("너 이름이 뭐야?")[1]
        hits = index.search_sync("너 이름이 뭐야?")
    finally:
        index.close()
    assert after.second_standout == pytest.approx(before.second_standout)
    assert after.second_margin == pytest.approx(before.second_margin)
    assert hits == []


@pytest.mark.parametrize("corpus_name", ["policies", "korean-only copy", "farm_game", "other_game"])
def test_every_shipped_and_evaluated_section_has_questions_written_from_its_current_text(
    corpus_name: str, tmp_path: Path
) -> None:
    # A policy edited without `arca-bot questions` would silently lose its questions (stale ones are left
    # out) and the retrieval figures would no longer be the README's.
    folder = {
        "policies": POLICIES,
        "korean-only copy": tmp_path / "ko",
        "farm_game": POLICIES.parent / "tests" / "knowledge" / "farm_game",
        "other_game": POLICIES.parent / "tests" / "knowledge" / "other_game",
    }[corpus_name]
    if corpus_name == "korean-only copy":
        write_korean_only_copy(POLICIES, folder, questions_from=KOREAN_ONLY_QUESTIONS)
    docs = load_policies(folder)
    assert all(not d.stale_questions for d in docs), [(d.source, d.stale_questions) for d in docs]
    missing = [(d.source, s.title) for d in docs for s in d.sections if not d.questions.get(s.title)]
    assert not missing
