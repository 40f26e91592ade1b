"""Replay's view of the guards (issue 50): the report carries every guard decision with its rule, a
transcript may expect the exact answer, and a newly issued coupon's code is the same in every run and
mode (seeded by the case's name), while the bot outside replay keeps drawing codes from `secrets`."""

from __future__ import annotations

from bot.replay.format import load_transcript
from bot.replay.runner import Replayer
from bot.store.coupon_codes import new_coupon_code, seeded_codes
from tests.support.replay import TRANSCRIPTS

CASE = TRANSCRIPTS / "replay_expects_the_exact_answer_and_the_new_coupons_code.yaml"


async def test_the_report_carries_each_guard_decision_with_its_rule(replayer: Replayer) -> None:
    result = await replayer.run_case(load_transcript(CASE), "json")
    assert result.passed, result.failures
    [decision] = result.turns[1]["decisions"]
    assert decision["guard"] == "fact_check" and decision["rule"] == "fact.unbacked"
    assert decision["fact"] == "45일" and decision["kind"] == "duration" and decision["verdict"] == "withheld"
    assert "45일" in decision["sentence"] and decision["reason"] and decision["replacement"].startswith("- ")
    assert result.turns[0]["decisions"] == []


async def test_a_refused_call_is_a_decision_of_the_call_checks(replayer: Replayer, write_case) -> None:
    path = write_case(
        "guessed.yaml",
        """
name: a guessed id
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
turns:
  - user: "주문이 안 와요"
    script:
      - {tool: lookup_order, args: {order_id: ORD001}}
      - {final: "주문 번호를 알려 주세요."}
""",
    )
    result = await replayer.run_case(load_transcript(path), "native")
    [decision] = result.turns[0]["decisions"]
    assert decision["guard"] == "call_check" and decision["rule"] == "call.example_value"
    assert decision["verdict"] == "refused" and "ORD001" in decision["fact"]


async def test_expect_answer_fails_on_any_other_answer(replayer: Replayer, write_case) -> None:
    path = write_case(
        "exact.yaml",
        """
name: exact answer
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나}]
turns:
  - user: "안녕하세요"
    script: [{final: "안녕하세요! 무엇을 도와드릴까요?"}]
    expect: {answer: "안녕하세요!"}
""",
    )
    result = await replayer.run_case(load_transcript(path), "native")
    assert not result.passed
    assert result.failures == [
        "turn 0: expect.answer: expected '안녕하세요!', got '안녕하세요! 무엇을 도와드릴까요?'"
    ]


def test_seeded_codes_repeat_and_unseeded_codes_do_not() -> None:
    with seeded_codes("case a"):
        first = [new_coupon_code() for _ in range(3)]
    with seeded_codes("case a"):
        again = [new_coupon_code() for _ in range(3)]
    with seeded_codes("case b"):
        other = new_coupon_code()
    assert first == again and len(set(first)) == 3 and other not in first
    assert new_coupon_code() != new_coupon_code()  # outside replay: `secrets`


async def test_a_quirk_switched_off_for_the_model_reaches_the_whole_run(
    settings, policy_index, write_case, monkeypatch
) -> None:
    """`ARCA_QUIRKS` reaches the app's runs: with `voice=off` an answer about "the player" is delivered as
    written, and the example-value check observing lets the guessed id be looked up."""
    from bot.config import load_settings

    path = write_case(
        "quirks.yaml",
        """
name: quirks off
fixtures:
  players: [{id: P100, discord_id: "9001", name: 루나, locale: en}]
turns:
  - user: "my order is late"
    script:
      - {tool: lookup_order, args: {order_id: ORD001}}
      - {final: "The player can ask staff for help with a late order."}
""",
    )
    case = load_transcript(path)
    enforced = await Replayer(settings, policy_index=policy_index).run_case(case, "native")
    assert enforced.turns[0]["answer"].startswith("You can ask")
    assert [d["rule"] for d in enforced.turns[0]["decisions"]] == ["call.example_value"]
    monkeypatch.setenv("ARCA_QUIRKS", "voice=off,example_values=observe")
    switched = load_settings(data_dir=settings.data_dir)
    result = await Replayer(switched, policy_index=policy_index).run_case(case, "native")
    assert result.turns[0]["answer"] == "The player can ask staff for help with a late order."
    assert result.turns[0]["decisions"] == [] and result.turns[0]["tools"] == [
        ("lookup_order", "ORDER_NOT_FOUND")
    ]
