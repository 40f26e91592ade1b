"""`arca-bot simulate`: a simulated player talks to the bot through the real `Conversations`, the bot's
model is a real OpenAI client against the fake server on loopback, each run is graded by the database,
and a run saved as a transcript replays the same way (passing or failing)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.app import PROJECT_ROOT
from bot.config import Settings
from bot.replay.command import replay
from bot.simulate.command import simulate
from bot.simulate.players import GREETING, ModelPlayer, persona_prompt
from bot.simulate.report import pass_hat_k
from bot.simulate.scenario import ScenarioError, collect_scenarios, load_scenario
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.simulate.scripted_bot import DELAYED, SCENARIOS
from tests.simulate.scripted_bot import bot_turn as _bot_turn
from tests.simulate.scripted_bot import model as _model
from tests.support.replay import cli_env


async def _simulate(
    settings: Settings, server: FakeOpenAIServer, tmp_path: Path, **kwargs
) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = await simulate(
        settings,
        [load_scenario(DELAYED)],
        bot_model_factory=lambda: _model(server),
        policy_index=EmptyPolicyIndex(),
        out=lines.append,
        report=tmp_path / "report.json",
        save_transcripts=tmp_path / "saved",
        **kwargs,
    )
    return code, lines


async def _replay(settings: Settings, path: Path) -> tuple[int, list[str]]:
    lines: list[str] = []
    code = await replay(settings, [path], out=lines.append, policy_index=EmptyPolicyIndex())
    return code, lines


async def test_a_run_that_ends_right_passes_and_its_transcript_replays_green(
    settings: Settings, tmp_path: Path
) -> None:
    async with FakeOpenAIServer(_bot_turn(10000, "ORD101에 10,000원 쿠폰을 발급했습니다.")) as server:
        code, lines = await _simulate(settings, server, tmp_path)
    assert code == 0, "\n".join(lines)
    assert lines[0].startswith("PASS  delayed order is compensated within the limit (Korean)")
    assert "ended: no more lines" in lines[0]
    assert lines[-1] == "1 passed, 0 failed"
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    run = report["scenarios"][0]["runs"][0]
    assert run["end_coupons"] == [["ORD101", 10000]]
    assert [t["tools"] for t in run["turns"]] == [[["lookup_order", "OK"], ["issue_coupon", "ISSUED"]]]
    assert run["rubric"] == [{"line": "The bot never promised a refund.", "verdict": None}]
    saved = tmp_path / "saved" / "delayed_order_compensation_ko-trial1.yaml"
    code, lines = await _replay(settings, saved)
    assert code == 0, "\n".join(lines)
    assert lines[-1] == "2 passed, 0 failed"  # both modes


async def test_a_run_graded_wrong_by_the_database_fails_and_its_transcript_fails_the_same_way(
    settings: Settings, tmp_path: Path
) -> None:
    # The words claim the asked-for 10,000; the ledger holds 20,000: the grade reads the ledger.
    async with FakeOpenAIServer(_bot_turn(20000, "ORD101에 10,000원 쿠폰을 발급했습니다.")) as server:
        code, lines = await _simulate(settings, server, tmp_path)
    assert code == 1
    assert lines[0].startswith("FAIL  delayed order")
    assert "      coupons: expected [('ORD101', 10000)], found [('ORD101', 20000)]" in lines
    assert any(line.strip().startswith("player: ORD101 배송이 너무 늦어요") for line in lines)
    saved = tmp_path / "saved" / "delayed_order_compensation_ko-trial1.yaml"
    code, lines = await _replay(settings, saved)
    assert code == 1
    assert sum(line.startswith("FAIL") for line in lines) == 2
    assert (
        lines.count(
            "      turn 0: expect.coupons: expected active [('ORD101', 10000)], got [('ORD101', 20000)]"
        )
        == 2
    )


async def test_a_model_plays_the_player_stops_when_done_and_judges_the_rubric(
    settings: Settings, tmp_path: Path
) -> None:
    scenario = load_scenario(DELAYED).model_copy(
        update={"player": load_scenario(DELAYED).player.model_copy(update={"opening": None})}
    )
    player_replies = [reply("ORD101 배송이 늦어요. 만원 쿠폰 주세요."), reply("DONE"), reply("YES")]
    async with (
        FakeOpenAIServer(_bot_turn(10000, "ORD101에 10,000원 쿠폰을 발급했습니다.")) as bot_server,
        FakeOpenAIServer(player_replies) as player_server,
    ):
        lines: list[str] = []
        code = await simulate(
            settings,
            [scenario],
            bot_model_factory=lambda: _model(bot_server),
            player_model=_model(player_server),
            policy_index=EmptyPolicyIndex(),
            out=lines.append,
            report=tmp_path / "r.json",
        )
    assert code == 0, "\n".join(lines)
    assert "ended: done" in lines[0]
    first = player_server.requests[0]["messages"]
    assert first[0]["content"] == persona_prompt(scenario.player)
    assert "ORD101" in first[0]["content"]  # what the player knows
    assert first[1] == {"role": "user", "content": GREETING["ko"]}  # the player answers the bot's greeting
    second = player_server.requests[1]["messages"]
    assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
    assert second[-1]["content"] == "ORD101에 10,000원 쿠폰을 발급했습니다."
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["scenarios"][0]["runs"][0]["rubric"] == [
        {"line": "The bot never promised a refund.", "verdict": True}
    ]


async def test_a_player_model_that_fails_ends_the_run_with_the_reason(settings: Settings) -> None:
    scenario = load_scenario(DELAYED)
    async with FakeOpenAIServer([{"fault": "500"}] * 3) as server:
        player = ModelPlayer(scenario.player.model_copy(update={"opening": None}), _model(server))
        move = await player.next_move([])
    assert move.text is None and move.stopped.startswith("the player's model failed")


@pytest.mark.parametrize(
    ("trials", "passes", "expected"),
    [(3, 2, [2 / 3, 1 / 3, 0.0]), (3, 3, [1.0, 1.0, 1.0]), (4, 0, [0.0] * 4), (4, 3, [0.75, 0.5, 0.25, 0.0])],
)
def test_pass_hat_k_is_taus_estimate(trials: int, passes: int, expected: list[float]) -> None:
    assert [pass_hat_k(trials, passes, k) for k in range(1, trials + 1)] == pytest.approx(expected)


def test_an_invalid_scenario_names_file_and_line(write_scenario: Callable[[str, str], Path]) -> None:
    no_goal = write_scenario("a.yaml", "name: x\nplayer:\n  as: '9001'\ngrade:\n  escalation: true\n")
    with pytest.raises(ScenarioError, match=r"a\.yaml:2: player\.wants"):
        load_scenario(no_goal)
    nothing = write_scenario(
        "b.yaml", "name: x\nplayer: {as: '9001', wants: a coupon}\ngrade: {rubric: [polite]}\n"
    )
    with pytest.raises(ScenarioError, match=r"b\.yaml:3: .*at least one end-state criterion"):
        load_scenario(nothing)
    bad_order = write_scenario(
        "c.yaml",
        "name: x\nfixtures:\n  players: [{id: P1, discord_id: '1', name: a}]\n"
        "  orders: [{id: ORD1, player_id: P9, status: delayed, item: i, amount: 1}]\n"
        "player: {wants: w}\ngrade: {escalation: false}\n",
    )
    with pytest.raises(ScenarioError, match=r"c\.yaml:4: .*unknown player"):
        load_scenario(bad_order)


def test_every_shipped_scenario_loads_and_can_be_played_by_a_script() -> None:
    scenarios = collect_scenarios([SCENARIOS])
    assert len(scenarios) >= 20
    assert {s.player.language for s in scenarios} == {"ko", "en"}
    for s in scenarios:
        assert s.player.turns, f"{s.path}: a scripted player needs `turns` (CI runs it without a model)"


@pytest.mark.slow
async def test_the_cli_runs_trials_and_reports_pass_k(tmp_path: Path) -> None:
    replies = [
        *_bot_turn(10000, "ORD101에 10,000원 쿠폰을 발급했습니다."),
        *_bot_turn(20000, "ORD101에 20,000원 쿠폰을 발급했습니다."),
    ]
    report = tmp_path / "sim.json"
    async with FakeOpenAIServer(replies) as server:
        env = cli_env(
            tmp_path / "data", ARCA_MODEL="fake-model", OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k"
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "simulate", str(DELAYED), "--trials", "2", "--parallel", "1",
            "--scripted", "--report", str(report), cwd=PROJECT_ROOT, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out_b, err_b = await asyncio.wait_for(proc.communicate(), timeout=280)
    out = out_b.decode()
    assert proc.returncode == 1, out + err_b.decode()
    assert "1 passed, 1 failed" in out.splitlines()[-1]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["scenarios"][0]["pass_k"] == {"1": 0.5, "2": 0.0}
    assert data["overall"]["pass_k"] == {"1": 0.5, "2": 0.0}
    assert data["overall"]["pass_k_end_state"] == {"1": 0.5, "2": 0.0}  # the failure is the ledger's
    assert "test-key" not in out and "pass^2" in out


async def test_a_scenarios_open_incident_and_screenshot_reach_the_bot(
    settings: Settings, tmp_path: Path
) -> None:
    flood = load_scenario(SCENARIOS / "incident_flood_ko.yaml")
    shot = load_scenario(SCENARIOS / "screenshot_payment_error_ko.yaml")
    answer = "점검이 12:00까지 연장되었고, 끝나면 모든 플레이어에게 우편으로 보상이 지급됩니다."
    replies = [
        *[r for _ in flood.player.turns for r in (reply(answer), reply(answer))],
        reply(
            tool_calls=[{"name": "escalate_to_staff", "arguments": {"summary": "결제 오류, 스크린샷 있음"}}]
        ),
        reply("상담원에게 연결했습니다."),
        reply("상담원에게 연결했습니다."),
    ]
    async with FakeOpenAIServer(replies) as server:
        lines: list[str] = []
        code = await simulate(
            settings,
            [flood, shot],
            bot_model_factory=lambda: _model(server),
            policy_index=EmptyPolicyIndex(),
            out=lines.append,
        )
    assert code == 0, "\n".join(lines)
    loop_messages = [json.dumps(r["messages"], ensure_ascii=False) for r in server.requests if r.get("tools")]
    assert "정기 점검이 12:00까지 연장되었습니다" in loop_messages[0], (
        "the open incident's notice is in the prompt"
    )
    assert "payment_error.png" in loop_messages[-1], "the screenshot was attached to the first message"


def test_a_run_failed_only_by_its_rubric_still_passes_on_the_end_state() -> None:
    from bot.simulate.report import summarise
    from bot.simulate.runner import RunResult

    def run(trial: int, failures: list[str]) -> RunResult:
        return RunResult(
            "s", "s.yaml", trial, not failures, failures, "done", 1.0, {"bot": 0, "player": 0}, [], []
        )

    summary = summarise([run(1, ["rubric: polite"]), run(2, []), run(3, ["coupons: expected …"])], 3)
    assert summary["overall"]["pass_k"]["1"] == pytest.approx(1 / 3)
    assert summary["overall"]["pass_k_end_state"]["1"] == pytest.approx(2 / 3)


async def test_an_english_answer_citing_a_korean_section_is_still_english() -> None:
    from bot.llm.base import Usage
    from bot.simulate.grading import grade
    from bot.simulate.players import Exchange
    from bot.simulate.scenario import Grade
    from bot.store.end_state import EndState

    end = EndState(active_coupons=[], live_coupon_orders=frozenset(), escalations=0, order_statuses={})
    rule = Grade(escalation=False, answered_in="en")
    english = Exchange("refund?", "You may be eligible under the '배송 및 배송 지연' section of the policy.")
    korean = Exchange("refund?", "환불은 구매 후 7일 이내에 신청할 수 있어요.")
    assert (await grade(rule, end, {}, [english], judge_model=None, usage=Usage())).passed
    verdict = await grade(rule, end, {}, [korean], judge_model=None, usage=Usage())
    assert verdict.failures == [
        "answered_in en: 1 answer(s) not, e.g. '환불은 구매 후 7일 이내에 신청할 수 있어요.'"
    ]
