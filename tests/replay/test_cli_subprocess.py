"""`arca-bot replay` and `arca-bot demo` as real processes: exit statuses, `--live --trials K` against
the fake OpenAI server on 127.0.0.1 (pass^k), and the scripted demo. One session data dir, so the
policy index is built once for all of them.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.replay import cli_env, minimal_case, run_cli

pytestmark = pytest.mark.slow

WriteCase = Callable[[str, str], Path]


def test_replay_process_exits_1_on_a_failed_case_and_2_on_an_invalid_one(
    write_case: WriteCase, cli_data_dir: Path
) -> None:
    """Exit 0 is the demo test below (and the in-process contract tests)."""
    bad = write_case("bad/a.yaml", minimal_case("bad case", expected="환불 완료"))
    invalid = write_case("invalid/a.yaml", "name: x\nturns:\n  - expect: {}\n")

    failed = run_cli(["replay", str(bad.parent), "--mode", "json"], cli_data_dir)
    assert failed.returncode == 1, failed.stderr
    assert "FAIL  bad case [json]" in failed.stdout
    assert "expect.answer_contains: '환불 완료' not in answer" in failed.stdout
    assert failed.stdout.splitlines()[-1] == "0 passed, 1 failed"

    broken = run_cli(["replay", str(invalid)], cli_data_dir)
    assert broken.returncode == 2
    assert f"{invalid}:3:" in broken.stderr
    assert "passed" not in broken.stdout


def test_demo_process_runs_every_demo_case_labelled_scripted(cli_data_dir: Path) -> None:
    done = run_cli(["demo"], cli_data_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SCRIPTED" in done.stdout
    assert done.stdout.count("(scripted)") == len(list((PROJECT_ROOT / "data" / "demo").glob("*.yaml")))
    assert "🤖" in done.stdout and "⛔" in done.stdout


LIVE_CASE = """\
name: {name}
fixtures:
  clock: "2026-03-02T10:00:00+09:00"
  players: [{{id: P100, discord_id: "9001", name: 루나}}]
  orders: [{{id: ORD001, player_id: P100, status: delayed, item: 한정판 굿즈 세트, amount: 39000}}]
turns:
  - user: "ORD001 어디쯤 왔어요?"
    expect:
      tools: [lookup_order]
      codes: [OK]
      answer_contains: ["배송 지연"]
"""


def _trial(answer: str) -> list[dict]:
    """What the live model answers in one trial: a lookup, a final answer, the streamed synthesis."""
    return [
        reply(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "ORD001"}}]),
        reply(answer),
        reply(answer),
    ]


async def test_live_trials_report_pass_k_against_the_fake_server(
    write_case: WriteCase, cli_data_dir: Path, tmp_path: Path
) -> None:
    stable = write_case("a_stable.yaml", LIVE_CASE.format(name="stable case"))
    write_case("b_flaky.yaml", LIVE_CASE.format(name="flaky case"))
    good, wrong = "ORD001은 배송 지연 상태입니다.", "주문을 확인할 수 없습니다."
    # Cases run in file order, trials in order: the flaky case gets one bad answer in trial 2.
    replies = [*_trial(good), *_trial(good), *_trial(good), *_trial(good), *_trial(wrong), *_trial(good)]
    report = tmp_path / "live.json"
    async with FakeOpenAIServer(replies) as server:
        env = cli_env(
            cli_data_dir, ARCA_MODEL="fake-model", OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test-key"
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "replay",
            str(stable.parent),
            "--live",
            "--trials",
            "3",
            "--report",
            str(report),
            cwd=PROJECT_ROOT,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out_b, err_b = await asyncio.wait_for(proc.communicate(), timeout=240)
    out, err = out_b.decode(), err_b.decode()
    assert proc.returncode == 1, out + err
    lines = out.splitlines()
    assert sum("stable case [live] trial" in x and x.startswith("PASS") for x in lines) == 3
    assert any(x.startswith("FAIL  flaky case [live] trial 2/3") for x in lines)
    assert "pass^3: 1/2 cases passed every trial (0.50)" in out
    assert lines[-1] == "5 passed, 1 failed"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["pass_k"] == {"k": 3, "cases": 2, "passed_all_trials": 1}
    loop_calls = [r for r in server.requests if r.get("tools")]
    assert loop_calls and all(not r.get("stream") for r in loop_calls), "the tool loop is non-streaming"
    assert len(server.requests) == len(replies), "every scripted reply was used, none left over"
