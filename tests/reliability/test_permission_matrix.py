"""Permission matrix: every staff command typed by someone without the staff role is refused and audited and
changes nothing; every tool asked about another player's order reveals nothing (the answer is
indistinguishable from the one for an order that does not exist).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from bot.app import staff_commands
from bot.llm.scripted import ScriptedLLM
from bot.staff import StaffCommand, StaffRegistry
from bot.store import AuditEntry, Coupon, Player, Store
from tests.support.reliability import say
from tools.registry import build_registry

VICTIM_ORDER = "ORD003"
"""P200 (카이, Discord 9002)'s delayed order: 전설 탈것 상자, 55,000원."""
MISSING_ORDER = "ORD999"
SECRETS_OF_P200 = (
    "전설 탈것 상자",
    "55,000",
    "55000",
    "P200",
    "카이",
    "9002",
    "kai@example.com",
    "010-2345-6789",
)

SAMPLE_ARGS = {
    "order_id": VICTIM_ORDER,
    "player_id": "P200",
    "discord_user_id": "9001",
    "amount": "50000",
    "reason": "보상",
    "query": "환불 규정",
    "limit": "5",
    "channel": "console:victim",
}

NON_STAFF = [
    pytest.param("9001", frozenset(), id="linked-player"),
    pytest.param("9009", frozenset(), id="unlinked-user"),
    pytest.param("9001", frozenset({"VIP", "support staff"}), id="player-with-lookalike-roles"),
]


def _command_line(cmd: StaffCommand) -> str:
    return " ".join([f"/{cmd.name}", *(SAMPLE_ARGS.get(p.name, "x") for p in cmd.params)])


async def _audit(store: Store) -> list[AuditEntry]:
    async with store.session() as s:
        return list((await s.execute(select(AuditEntry).order_by(AuditEntry.id))).scalars())


@pytest.mark.parametrize(("discord_id", "roles"), NON_STAFF)
async def test_every_staff_command_is_refused_for_non_staff_and_audited(
    app_factory, seeded_store, discord_id, roles
):
    app = await app_factory(lambda: ScriptedLLM([]))  # a command never reaches the model
    # A member's own commands (`/unlink`) are not staff commands; `/link` with arguments is.
    commands = [c for c in StaffRegistry(staff_commands()).commands.values() if c.staff_only]
    assert len(commands) >= 15
    for cmd in commands:
        line = _command_line(cmd)
        outcome, surface = await say(app, line, thread="console:victim", discord_id=discord_id, roles=roles)
        assert outcome.kind == "command", line
        assert outcome.reply.denied and not outcome.reply.ok, line
        assert surface.replies and "⛔" in surface.replies[-1], line
        denied = [
            a for a in await _audit(seeded_store) if a.action == "staff.denied" and a.target == f"/{cmd.name}"
        ]
        assert len(denied) == 1, f"{line}: {len(denied)} staff.denied rows"
        assert denied[0].code == "DENIED"

    # Nothing any of those commands would have done happened.
    async with seeded_store.session() as s:
        assert (await s.execute(select(Coupon))).scalars().first() is None
        assert (await s.get(Player, "P200")).discord_id == "9002"
        assert (await s.get(Player, "P100")).discord_id == "9001"
    assert not await app.conversations.is_paused("console:victim")
    assert not [a for a in await _audit(seeded_store) if a.action.startswith("staff./")]


def _probe(tool: str, args: dict[str, Any]) -> ScriptedLLM:
    return ScriptedLLM([{"tool": tool, "args": args}, {"final": "확인했습니다."}])


async def _observe(app: Any, llm: ScriptedLLM, args: dict[str, Any], thread: str) -> tuple[str, str]:
    """Run `llm`'s one tool call (with `args`) as P100 (the app's next run takes `llm`); return (the
    observation the model read, the result code)."""
    # The player writes the ids the call uses (the engine runs no id nobody wrote); a message about an
    # order with no order tool in the script would be sent back for its lookup (issue 28).
    named = {k: v for k, v in args.items() if k.endswith("id") or k == "amount"}
    outcome, surface = await say(app, f"{named or '정보'} 확인해 주세요", thread=thread)
    tool_messages = [m for m in llm.requests[-2].messages if m.get("role") == "tool"]
    assert len(tool_messages) == 1 and outcome.runs
    assert not any(secret in surface.all_text for secret in SECRETS_OF_P200), surface.all_text
    return tool_messages[0]["content"], str(outcome.runs[0].tool_outcomes[0].result.code)


TOOL_PROBES: dict[str, dict[str, Any]] = {
    "lookup_order": {"order_id": "{order}"},
    "issue_coupon": {"order_id": "{order}", "amount": 5000, "reason": "배송 지연"},
    "list_my_orders": {},
    "search_policy": {"query": "{order} 주문 정보"},
    "escalate_to_staff": {"summary": "{order} 주문 확인 요청"},
    "incident_status": {},
}


def _args(template: dict[str, Any], order: str) -> dict[str, Any]:
    return {k: v.format(order=order) if isinstance(v, str) else v for k, v in template.items()}


def test_the_probe_table_covers_every_registered_tool():
    assert set(TOOL_PROBES) == set(build_registry().names)


@pytest.mark.parametrize("tool", list(TOOL_PROBES))
async def test_a_tool_asked_about_another_players_order_answers_as_if_it_did_not_exist(
    app_factory, seeded_store, tool
):
    their_args, missing_args = _args(TOOL_PROBES[tool], VICTIM_ORDER), _args(TOOL_PROBES[tool], MISSING_ORDER)
    probes = [_probe(tool, their_args), _probe(tool, missing_args)]
    app = await app_factory(iter(probes).__next__)
    theirs, theirs_code = await _observe(app, probes[0], their_args, "console:probe-a")
    missing, missing_code = await _observe(app, probes[1], missing_args, "console:probe-b")

    for secret in SECRETS_OF_P200:
        assert secret not in theirs, f"{tool} revealed {secret!r}: {theirs}"
    assert theirs_code == missing_code
    normalised = theirs.replace(VICTIM_ORDER, MISSING_ORDER)
    if tool == "escalate_to_staff":  # each escalation gets its own reference number
        assert theirs_code == missing_code == "OK"
    else:
        assert normalised == missing, f"{tool}: {theirs!r} vs {missing!r}"
    async with seeded_store.session() as s:
        assert (
            await s.execute(select(Coupon).where(Coupon.order_id == VICTIM_ORDER))
        ).scalars().first() is None
