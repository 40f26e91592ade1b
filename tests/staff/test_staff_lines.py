"""Staff lines that must be refused: Discord ids in non-ASCII digits, malformed numbers, and a non-staff
line too long to read that still names a staff command (audited as a denied attempt)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import App, build_app
from bot.config import load_settings
from bot.conversations import Incoming, TurnOutcome
from bot.llm.scripted import ScriptedLLM
from bot.store import AuditEntry, Coupon, Player, Store
from bot.vocabulary.dates import zoned_text
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.surface import RecordingSurface

STAFF_ROLE = "Support Staff"


@pytest.fixture
async def app(seeded_store: Store, tmp_path: Any) -> App:
    settings = load_settings(data_dir=tmp_path / "var", edit_interval=0.0)
    return await build_app(
        settings, llm_factory=lambda: ScriptedLLM([]), store=seeded_store, policy_index=EmptyPolicyIndex()
    )


async def _say(app: App, text: str, *, staff: bool = True, who: str = "42") -> TurnOutcome:
    actor = await app.conversations.resolve_actor(who, {STAFF_ROLE} if staff else set())
    return await app.conversations.handle(Incoming("console:staff", actor, text), RecordingSurface())


async def _discord_of(store: Store, player_id: str) -> str | None:
    async with store.session() as s:
        return (await s.get(Player, player_id)).discord_id


@pytest.mark.parametrize("digits", ["²³", "٩٠٠٢", "9002²", "<@٩٠٠٢>"])
async def test_link_refuses_a_discord_id_that_is_not_ascii_digits(app: App, digits: str) -> None:
    before = await _discord_of(app.store, "P200")

    outcome = await _say(app, f"/link {digits} P100")

    assert not outcome.reply.ok and "digits" in outcome.reply.text
    assert await _discord_of(app.store, "P100") == "9001"
    assert await _discord_of(app.store, "P200") == before


async def test_link_reply_names_the_links_it_replaced(app: App) -> None:
    outcome = await _say(app, "/link <@9002> P100")

    assert outcome.reply.ok
    assert "moved from P200" in outcome.reply.text
    assert "replaced Discord 9001" in outcome.reply.text
    assert await _discord_of(app.store, "P100") == "9002"
    assert await _discord_of(app.store, "P200") is None


async def test_link_of_an_unlinked_player_to_a_free_id_names_nothing_replaced(app: App) -> None:
    outcome = await _say(app, "/link 123456789012345678 P900")

    assert outcome.reply.ok and "moved" not in outcome.reply.text and "replaced" not in outcome.reply.text


@pytest.mark.parametrize("amount", ["5,0,0,0", "50,00", "5.000", "５０００", "²³"])
async def test_coupon_issue_refuses_a_malformed_amount(app: App, amount: str) -> None:
    outcome = await _say(app, f"/coupon issue ORD001 {amount} 사과")

    assert not outcome.reply.ok and "whole number" in outcome.reply.text
    async with app.store.session() as s:
        assert (await s.execute(select(Coupon))).first() is None


async def test_coupon_issue_accepts_thousands_separators(app: App) -> None:
    outcome = await _say(app, "/coupon issue ORD001 5,000 사과")

    assert outcome.reply.ok, outcome.reply.text
    async with app.store.session() as s:
        assert [c.amount for c in (await s.execute(select(Coupon))).scalars()] == [5000]


@pytest.mark.parametrize("limit", ["-5", "0", "3,0"])
async def test_audit_refuses_a_limit_below_one_or_malformed(app: App, limit: str) -> None:
    outcome = await _say(app, f"/audit {limit}")

    assert not outcome.reply.ok and "<limit>" in outcome.reply.text
    assert "audit rows" not in outcome.reply.text


async def test_a_too_long_staff_line_from_a_player_is_audited_as_a_denied_attempt(app: App) -> None:
    line = "/coupon issue ORD001 50000 " + "가" * 100_000

    outcome = await _say(app, line, staff=False, who="9001")

    assert outcome.kind == "refused"
    async with app.store.session() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff.denied"))).scalars()
        denied = [(r.target, r.code) for r in rows]
    assert denied == [("/coupon issue", "DENIED")]


async def test_a_too_long_line_from_staff_is_refused_but_not_a_denied_attempt(app: App) -> None:
    outcome = await _say(app, "/coupon issue ORD001 50000 " + "가" * 100_000)

    assert outcome.kind == "refused"
    async with app.store.session() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff.denied"))).all()
    assert rows == []


async def test_audit_lists_times_in_the_service_zone_and_guard_rules_in_words(app: App) -> None:
    await app.store.audit(
        actor="player:P100",
        action="guard.fact_withheld",
        thread_id="console:t",
        target="run-1",
        code="REPLACED",
        detail={"rule": "fact.unbacked", "removed": "..."},
    )
    outcome = await _say(app, "/audit 1")
    [line] = outcome.reply.text.splitlines()[1:]
    assert "Fact check: sentence withheld (Unbacked amount, date or number)" in line
    at = (await app.store.recent_audit(1))[0].at
    assert line.startswith(zoned_text(at, "en", "Asia/Seoul")) and line.split()[4] == "KST", line
