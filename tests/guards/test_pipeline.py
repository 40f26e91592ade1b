"""The guards as one pipeline (issue 50): every rule is named, listed in order with its origin, and the
quirks of small models are switched per model — enforce, observe (logged, not acted on) or off — in the
output guard and in the engine's call checks, from `[models.*] quirks` or `ARCA_QUIRKS`."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from bot.cli.guards import pipeline, rows
from bot.config import ModelConfig
from bot.guard_rules import QUIRKS, Quirks
from bot.guards.output import FactContext, OutputGuard

ROOT = Path(__file__).resolve().parents[2]


def test_quirk_modes_parse_from_a_string_or_a_table_and_refuse_unknown_names() -> None:
    assert Quirks.parse("observe").mode("voice") == "observe"
    parsed = Quirks.parse("voice=off, example_values=observe")
    assert (parsed.mode("voice"), parsed.mode("example_values"), parsed.mode("echo")) == (
        "off",
        "observe",
        "enforce",
    )
    assert Quirks.parse({"all": "off", "repairs": "enforce"}).mode("repairs") == "enforce"
    assert Quirks.parse({"all": "off"}).mode(None) == "enforce"  # a core rule is never switched off
    with pytest.raises(ValueError, match="unknown quirk 'vioce'"):
        Quirks.parse("vioce=off")
    with pytest.raises(ValueError, match="not one of enforce, observe, off"):
        Quirks.parse("voice=maybe")
    with pytest.raises(ValueError):
        ModelConfig(model="gpt-4o", quirks={"voice": "sometimes"})


def test_the_env_var_goes_on_top_of_the_models_table(monkeypatch) -> None:
    from bot.config import load_settings

    monkeypatch.setenv("ARCA_MODEL", "gpt-4o")
    monkeypatch.setenv("ARCA_QUIRKS", "echo=off")
    settings = load_settings()
    settings.models["main"] = ModelConfig(model="gpt-4o", roles=["main"], quirks={"voice": "observe"})
    quirks = settings.guard_quirks()
    assert (quirks.mode("voice"), quirks.mode("echo"), quirks.mode("repairs")) == (
        "observe",
        "off",
        "enforce",
    )


def test_the_pipeline_lists_every_rule_once_in_order_with_its_origin() -> None:
    listed = pipeline()
    names = [r.name for r in listed]
    assert len(names) == len(set(names))
    assert (
        names.index("call.example_value")
        < names.index("call.withdrawal")
        < names.index("claim.run_or_ledger")
    )
    assert (
        names.index("claim.run_or_ledger") < names.index("voice.second_person") < names.index("fact.unbacked")
    )
    assert {r.quirk for r in listed if r.quirk} == set(QUIRKS)
    assert all(r.protects for r in listed)
    # every rule name a guard records is a listed rule
    recorded = set(re.findall(r"\"(fact\.[a-z_]+)\"", (ROOT / "bot/guards/fact_check.py").read_text()))
    assert recorded and recorded <= set(names), recorded - set(names)
    from bot.replay.decisions import CALL_RULES

    assert set(CALL_RULES.values()) <= set(names)


def test_rows_show_each_rules_mode_for_the_model() -> None:
    shown = {r["name"]: r for r in rows(Quirks.parse("voice=off"))}
    assert shown["voice.second_person"]["mode"] == "off" and shown["voice.second_person"]["origin"] == "quirk"
    assert shown["fact.unbacked"]["mode"] == "enforce" and shown["fact.unbacked"]["origin"] == "core"


def test_arca_bot_guards_prints_the_pipeline_as_json(capsys, monkeypatch) -> None:
    from bot.cli.guards import cmd_guards

    monkeypatch.setenv("ARCA_QUIRKS", "model_notes=observe")
    assert cmd_guards(type("A", (), {"json": True})()) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {r["name"]: r["mode"] for r in listed}["fact.model_note"] == "observe"


THIRD_PERSON = "The player can ask for a refund within 7 days."


async def _said(quirks: Quirks, text: str) -> str:
    guard = OutputGuard(locale="en", facts=FactContext(mode="off"), quirks=quirks)
    return (await guard.check(text, outcomes=[])).text


async def test_voice_is_a_quirk_enforced_observed_or_off(caplog) -> None:
    assert (await _said(Quirks(), THIRD_PERSON)).startswith("You can ask")
    assert await _said(Quirks.parse("voice=off"), THIRD_PERSON) == THIRD_PERSON
    with caplog.at_level(logging.INFO, logger="bot.guard_rules"):
        assert await _said(Quirks.parse("voice=observe"), THIRD_PERSON) == THIRD_PERSON
    assert "quirk voice observing: would have said to the player" in caplog.text


async def test_model_notes_and_echoes_are_quirks_of_the_fact_check() -> None:
    note = "Tell the player the amount, code and expiry as written."
    for mode, delivered in (("enforce", False), ("observe", True), ("off", True)):
        guard = OutputGuard(locale="en", facts=FactContext(), quirks=Quirks.parse(f"model_notes={mode}"))
        verdict = await guard.check(f"Here you go. {note}", outcomes=[])
        assert (note in verdict.text) is delivered, (mode, verdict.text)


@pytest.mark.parametrize("mode", ["native", "json"])
async def test_the_example_value_check_follows_the_models_quirk_mode(mode, caplog) -> None:
    from tests.support.engine import run_scripted
    from tools.registry import build_registry

    steps = [{"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "x"}]
    enforced = await run_scripted(steps, build_registry(), mode=mode, query="주문이 늦어요", synthesize=False)
    assert enforced.result.tool_outcomes[0].result.data.get("reason") == "example_value"
    with caplog.at_level(logging.INFO, logger="bot.guard_rules"):
        observed = await run_scripted(
            steps, build_registry(), mode=mode, query="주문이 늦어요", synthesize=False,
            quirks=Quirks.parse("example_values=observe"),
        )  # fmt: skip
    assert observed.result.tool_outcomes[0].result.data.get("reason") != "example_value"
    assert "would have refused lookup_order (call.example_value)" in caplog.text
