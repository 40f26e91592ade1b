"""`arca-bot index` / `arca-bot search` command bodies: exit codes, stdout purity, errors on stderr."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.knowledge.commands import index_command, search_command


@pytest.fixture
def settings(tmp_path: Path, small_corpus: Path):  # type: ignore[no-untyped-def]
    return load_settings(data_dir=tmp_path / "var", policies_dir=small_corpus)


def test_search_json_prints_exactly_one_json_array(settings, capfd: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code = search_command(settings, "쿠폰 한도가 얼마예요?", 2, True)  # builds the missing index first
    out, _ = capfd.readouterr()
    assert code == 0
    hits = json.loads(out)
    assert isinstance(hits, list) and 1 <= len(hits) <= 2
    assert set(hits[0]) == {"source", "section", "score", "text", "title", "doc_id"} | {
        "neighbour_section",
        "neighbour_text",
        "neighbour_source",
        "neighbour_title",
    }
    assert hits[0]["source"] == "coupons.md" and hits[0]["section"] == "2. 발급 한도"


def test_search_human_output_shows_citation_and_source(settings, capfd: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert search_command(settings, "이름 다시 바꾸기", 1, False) == 0
    out, _ = capfd.readouterr()
    assert "[이름 변경 §1 재변경 제한]" in out and "name.md" in out


def test_empty_query_exits_2_with_the_error_on_stderr(settings, capfd: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert search_command(settings, "  ", 3, True) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert "query is empty" in err


def test_index_reports_counts_and_a_second_run_changes_nothing(
    settings,
    small_corpus: Path,
    capfd: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    assert index_command(settings, small_corpus) == 0
    assert index_command(settings, small_corpus) == 0
    out, _ = capfd.readouterr()
    first, second = out.strip().splitlines()
    assert "4 added" in first
    assert "0 added, 0 updated, 0 removed, 4 unchanged" in second


def test_index_with_bad_front_matter_exits_2_naming_file_and_line(
    settings,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "oops.md").write_text(
        "---\nid: oops\ntitle: t\nlang: ko\nversion: 1\neffective: [\n---\n\n## a\n\nb\n", encoding="utf-8"
    )
    assert index_command(settings, bad) == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert f"{bad / 'oops.md'}:" in err
    line = int(err.split("oops.md:")[1].split(":")[0])
    assert line in (6, 7)


def test_index_of_a_missing_directory_exits_2(
    settings, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    assert index_command(settings, tmp_path / "missing") == 2
    assert "not found" in capfd.readouterr().err


def test_search_json_prints_an_empty_array_for_small_talk(
    settings, capfd: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    assert search_command(settings, "오늘 점심 뭐 먹을까요?", 3, True) == 0
    out, _ = capfd.readouterr()
    assert json.loads(out) == []


def test_cli_search_with_terms_from_a_second_process_answers_as_the_command_alone(
    settings, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """`arca-bot search` makes its query's terms in a second process (`bot.knowledge.query_terms`) and
    holds the garbage collector off while it loads: the same answer, and the collector back on after."""
    from bot import cli
    from bot.knowledge import analysis
    from bot.knowledge.query_terms import QueryTermsAside

    query = "쿠폰한도가 얼마예요"
    assert search_command(settings, query, 2, True) == 0  # builds the index, analyses in this process
    alone, _ = capfd.readouterr()
    analysis.analyze_query.cache_clear()
    analysis.keyword_head.cache_clear()
    adopted: list[bool] = []
    original = QueryTermsAside.adopt

    def adopt(self: QueryTermsAside, timeout: float = 60.0) -> bool:
        adopted.append(original(self, timeout))
        return adopted[-1]

    monkeypatch.setattr(QueryTermsAside, "adopt", adopt)
    monkeypatch.setenv("ARCA_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("ARCA_POLICIES_DIR", str(settings.policies_dir))
    try:
        assert cli.main(["search", query, "--top-k", "2", "--json"]) == 0
    finally:
        analysis._given.clear()
    out, _ = capfd.readouterr()
    assert adopted == [True]
    assert json.loads(out) == json.loads(alone) != []
    assert gc.isenabled()


@pytest.mark.parametrize("argv", ["None", "sys.argv[1:]"])
def test_the_collector_is_frozen_only_when_the_search_ends_the_process(argv: str) -> None:
    """`main()` without argv is the process's own command line: a one-shot search freezes the heap so
    the interpreter's last collections skip it; `main(argv)` (tests, embedders) leaves it as it was."""
    import subprocess
    import sys

    code = (
        "import gc, sys\n"
        "sys.argv = ['arca-bot', 'search', 'refund', '--top-k', '0']\n"
        "from bot.cli import main\n"
        f"code = main({argv})\n"
        "print(code, gc.get_freeze_count() > 0, gc.isenabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    frozen, enabled = ("True", "False") if argv == "None" else ("False", "True")
    assert done.stdout.split() == ["2", frozen, enabled], done.stderr
