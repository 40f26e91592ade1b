"""No example value is an argument unless the player wrote it (issue 28), in both modes: a call with an
id nobody wrote (ORD001) or a placeholder (ORD…) is not run, and the model reads what to do instead;
an amount is never refused for equalling the description's example (issue 50)."""

from __future__ import annotations

import random
import re

import pytest

from bot.engine.example_values import id_written
from tests.support.engine import MODES, run_scripted


def lookup(order_id: str) -> dict:
    return {"tool": "lookup_order", "args": {"order_id": order_id}}


def coupon(order_id: str, amount: int) -> dict:
    return {"tool": "issue_coupon", "args": {"order_id": order_id, "amount": amount}}


@pytest.mark.parametrize("mode", MODES)
async def test_an_order_id_the_player_never_wrote_is_not_looked_up_and_the_model_is_told_to_ask(
    tools, probe, mode
):
    run = await run_scripted(
        [lookup("ORD001"), {"final": "주문번호를 알려 주세요."}],
        tools,
        mode=mode,
        query="환불 기간이 어떻게 되나요?",
        synthesize=False,
    )
    assert probe.calls == []
    [outcome] = run.result.tool_outcomes
    assert outcome.result.code == "ERROR" and outcome.result.data["reason"] == "example_value"
    assert "the player did not write this order_id" in outcome.observation
    assert "ORD001" not in outcome.observation  # else the refusal itself would make it "written"
    assert "Call search_policy with their question" in outcome.observation


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("query", "told", "not_told"),
    [
        # about an order, with no number in it: ask for the number
        ("제 주문 좀 확인해 주세요", "Ask the player for their order number", "search_policy"),
        # seen live (2026-12-04): the 1.5B model looked up "ORD…" for small talk, then asked for a number
        ("증명 문제 하나만 풀어줄 수 있어?", "do not ask for an order number", "Ask the player for their"),
    ],
)
async def test_a_made_up_id_for_a_message_that_is_no_policy_question(
    tools, probe, mode, query, told, not_told
):
    run = await run_scripted(
        [lookup("ORD…" if "증명" in query else "ORD001"), {"final": "알겠습니다."}],
        tools,
        mode=mode,
        query=query,
        synthesize=False,
    )
    assert probe.calls == []
    [outcome] = run.result.tool_outcomes
    assert told in outcome.observation and not_told not in outcome.observation


@pytest.mark.parametrize("mode", MODES)
async def test_the_refusal_names_the_order_id_the_player_did_write(tools, probe, mode):
    steps = [lookup("ORD001"), lookup("ORD101"), {"final": "확인했습니다."}]
    run = await run_scripted(steps, tools, mode=mode, query="ORD101 언제 와요?", synthesize=False)
    assert probe.calls == ["lookup_order:ORD101"]
    assert "Use the order number the player wrote: ORD101." in run.result.tool_outcomes[0].observation


@pytest.mark.parametrize("mode", MODES)
async def test_an_amount_is_never_refused_for_equalling_the_descriptions_example(tools, probe, mode):
    """Issue 50: an amount the player asked for, or any amount within the coupon rules, runs though it is
    the tool description's example (5000); the coupon tool's rules judge it."""
    for query in ("ORD101 5천원 쿠폰 주세요", "ORD101 배송이 늦어요. 쿠폰 주세요"):
        probe.calls.clear()
        run = await run_scripted(
            [coupon("ORD101", 5000), {"final": "x"}], tools, mode=mode, query=query, synthesize=False
        )
        assert probe.calls == ["issue_coupon:ORD101:5000"], query
        assert run.result.tool_outcomes[0].result.data.get("reason") != "example_value"


@pytest.mark.parametrize("mode", MODES)
async def test_an_id_a_tool_returned_may_be_used(tools, probe, mode):
    steps = [{"tool": "echo", "args": {"text": "ORD777"}}, lookup("ORD777"), {"final": "ok"}]
    await run_scripted(steps, tools, mode=mode, query="제 주문 목록 보여 주세요", synthesize=False)
    assert probe.calls == ["echo:ORD777", "lookup_order:ORD777"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_placeholder_value_is_not_run(tools, probe, mode):
    run = await run_scripted(
        [lookup("ORD…"), {"final": "x"}], tools, mode=mode, query="ORD101?", synthesize=False
    )
    assert probe.calls == []
    assert "placeholder" in run.result.tool_outcomes[0].observation


@pytest.mark.parametrize("mode", MODES)
async def test_an_id_written_with_a_space_or_in_lower_case_counts_as_written(tools, probe, mode):
    await run_scripted(
        [lookup("ORD101"), lookup("ORD102"), {"final": "x"}],
        tools,
        mode=mode,
        query="ord 101 이랑 ord102 확인해 주세요",
        synthesize=False,
    )
    assert probe.calls == ["lookup_order:ORD101", "lookup_order:ORD102"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_id_inside_a_longer_one_is_not_written(tools, probe, mode):
    """ORD101 is not written by "ORD1012" or "XORD101": the id is compared whole."""
    run = await run_scripted(
        [lookup("ORD101"), {"final": "x"}],
        tools,
        mode=mode,
        query="ORD1012 랑 XORD101 주문 확인해 주세요",
        synthesize=False,
    )
    assert probe.calls == []
    assert run.result.tool_outcomes[0].result.data["reason"] == "example_value"


@pytest.mark.parametrize("mode", MODES)
async def test_a_search_that_copies_the_query_placeholder_is_refused_with_the_players_words(mode):
    """Seen live (2026-12-02): with a real example query in the tool's texts ('쿠폰 한도') a small model
    searched it in 15 of 19 searches, and answered a refund question from the coupon sections. The texts
    show a placeholder now; a call that copies it is refused, and the run searches the player's own words
    instead."""
    from tools.policy_search import QUERY_PLACEHOLDER
    from tools.registry import build_registry

    question = "How many days do I have to get a refund for an unused cash shop item?"
    run = await run_scripted(
        [
            {"tool": "search_policy", "args": {"query": QUERY_PLACEHOLDER}},
            {"tool": "search_policy", "args": {"query": question}},
            {"final": "Let me check."},
        ],
        build_registry(),
        mode=mode,
        query=question,
        synthesize=False,
    )
    made, searched = run.result.tool_outcomes
    # The placeholder is never searched: the run searches the player's own words at once, and the model
    # reads why (the refusal) and what was made instead.
    assert (made.name, made.args) == ("search_policy", {"query": question}), made
    assert "placeholder" in made.observation and "made the call it needs instead" in made.observation
    assert searched.result.data.get("reason") != "example_value"  # the player's words are searched


@pytest.mark.parametrize("mode", MODES)
async def test_the_example_id_made_again_after_its_refusal_is_refused_again(tools, probe, mode):
    """Seen live (2026-12-02): a refused example value, made again, ran — the refusal's own text counted as
    a tool result that wrote it. The refusal never repeats the value, so the second call is refused too."""
    steps = [lookup("ORD001"), lookup("ORD001"), {"final": "확인했습니다."}]
    run = await run_scripted(steps, tools, mode=mode, query="주문이 늦어요", synthesize=False)
    assert not any(c.startswith("lookup_order") for c in probe.calls), probe.calls
    reasons = [o.result.data.get("reason") for o in run.result.tool_outcomes]
    assert reasons and set(reasons) == {"example_value"}, reasons


@pytest.mark.parametrize("mode", MODES)
async def test_a_search_made_in_place_of_a_guessed_lookup_is_shown_as_the_search(mode):
    """Seen live (stop 44): the step feed showed "lookup_order OK" for a placeholder lookup the engine
    refused, because the done event kept the model's tool name beside the result of the search made in its
    place. Each is now a step of its own, with its own name and result."""
    from tools.registry import build_registry

    question = "캐시샵 환불은 며칠 안에 해야 하나요?"
    run = await run_scripted(
        [lookup("ORD…"), {"final": "7일 이내입니다."}],
        build_registry(),
        mode=mode,
        query=question,
        synthesize=False,
    )
    [made] = run.result.tool_outcomes
    assert made.name == "search_policy"
    steps = [e for e in run.events if getattr(e, "type", "") == "iteration"]
    seen = [(e.status, e.tool_name, e.code) for e in steps]
    assert seen == [
        ("start", "lookup_order", None),
        ("done", "lookup_order", "ERROR"),
        ("start", "search_policy", None),
        ("done", "search_policy", str(made.result.code)),
    ], seen
    assert "placeholder" in steps[1].observation and steps[3].observation == made.observation


_LOOKALIKE = {"I": "ı", "S": "ſ", "K": "\u212a"}
"""Letters outside ASCII whose `str.upper()` is an ASCII capital: not the id's letters."""


def _id_pattern(letters: str, digits: str) -> re.Pattern[str]:
    """The pattern `id_written` replaced (one compiled per id), the reference it is held to."""
    either = "".join(f"[{c}{c.lower()}]" for c in letters)
    return re.compile(rf"(?<![A-Za-z0-9]){either}[-_ ]?{re.escape(digits)}(?!\d)")


def test_an_id_is_found_in_a_text_exactly_where_the_per_id_pattern_found_it() -> None:
    """A differential over random texts made of the characters that matter around an id (its letters in
    both cases, the separators, other letters and digits, Korean, non-ASCII digits and letters whose
    case maps onto ASCII): `id_written` says what the per-id pattern said, on every text."""
    rng = random.Random(20261207)
    alphabet = "ORDodrX-_ 0123456789가١٢ıſK"
    ids = [("ORD", "101"), ("ORD", "1"), ("O", "10"), ("GIFT", "0012"), ("ORD", "١٢"), ("SK", "101")]
    found = 0
    for _ in range(40_000):
        letters, digits = rng.choice(ids)
        parts = [rng.choice(alphabet) for _ in range(rng.randint(0, 14))]
        if rng.random() < 0.5:  # plant a near-miss or the id itself, in some case, with some separator
            written = "".join(rng.choice([c, c.lower(), _LOOKALIKE.get(c, c)]) for c in letters)
            parts.insert(
                rng.randint(0, len(parts)), written + rng.choice(["", "-", "_", " ", "  ", "/"]) + digits
            )
        text = "".join(parts)
        expected = _id_pattern(letters, digits).search(text) is not None
        assert id_written(letters, digits, text) is expected, (letters, digits, text)
        found += expected
    assert 2_000 < found < 38_000  # both answers were exercised (4,019 found)
