"""Staff slash commands through the real client: generated from the registry, synced to the configured
guild, ephemeral replies, refused for players (and audited), deferred when slow, one error handler."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from sqlalchemy import select

import bot.app as app_module
from bot.llm.scripted import ScriptedLLM
from bot.staff import Param, StaffCommand, StaffReply
from bot.store import AuditEntry, Coupon
from tests.support.fake_discord import EPHEMERAL, FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
GUILD_KEY = f"guild:{FakeDiscord.GUILD_ID}"


def _replies(fake: FakeDiscord, token: str):
    return lambda: fake.interaction_texts(token)


async def test_commands_are_synced_once_to_the_configured_guild_with_groups_and_typed_options(harness, fake):
    await harness.start(ScriptedLLM([]))

    assert list(fake.synced_commands) == [GUILD_KEY], "guild sync only, no global sync"
    assert len(fake.calls_to("PUT", r"/commands$")) == 1
    commands = {c["name"]: c for c in fake.synced_commands[GUILD_KEY]}
    assert set(commands) == {
        "order",
        "orders",
        "coupon",
        "link",
        "unlink",
        "thread",
        "policy",
        "audit",
        "handoff",
        "resume",
        "stop",
        "ops",
        "stats",
        "console",
        "incident",
        "reply",
        "replies",
    }
    assert {o["name"] for o in commands["ops"]["options"]} == {"draft", "show"}
    incident = {o["name"]: o for o in commands["incident"]["options"]}
    assert set(incident) == {"open", "update", "close", "list", "show", "report", "compensate"}
    assert {o["name"]: o["type"] for o in incident["compensate"]["options"]} == {"id": 4, "plan": 3}
    coupon = {o["name"]: o for o in commands["coupon"]["options"]}
    assert set(coupon) == {"issue", "revoke", "approve", "list"}
    assert all(o["type"] == 1 for o in coupon.values()), "group leaves are subcommands"
    issue = {o["name"]: o for o in coupon["issue"]["options"]}
    assert issue["amount"]["type"] == 4 and issue["amount"]["required"] is True  # integer option
    assert issue["order_id"]["type"] == 3 and issue["reason"].get("required", False) is False
    handoff = {o["name"]: o for o in commands["handoff"]["options"]}
    assert handoff["channel"]["type"] == 7 and handoff["channel"].get("required", False) is False
    audit = {o["name"]: o for o in commands["audit"]["options"]}
    assert audit["limit"]["type"] == 4


async def test_a_failed_sync_is_logged_and_the_bot_still_answers(harness, fake, caplog):
    fake.fail("PUT", r"/commands$", status=403)
    bot = await harness.start(ScriptedLLM([{"final": "네"}, {"answer": "답합니다."}]))

    await fake.user_says(SUPPORT, 9001, "질문 있어요")
    await fake.wait_for(
        lambda: any(m["content"] == "답합니다." for m in fake.bot_messages(SUPPORT)), what="the answer"
    )
    await bot.idle()

    assert "applications.commands" in caplog.text


async def test_staff_slash_command_answers_ephemerally(harness, fake):
    await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "order", {"order_id": "ORD001"})
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the reply")

    assert flags & EPHEMERAL
    assert "ORD001" in text and "P100" in text
    assert fake.interactions[token]["callback"]["type"] == 4


async def test_player_is_refused_ephemerally_and_the_attempt_is_audited(harness, fake):
    bot = await harness.start(ScriptedLLM([]))

    token = await fake.slash(9001, SUPPORT, "coupon", {"order_id": "ORD001", "amount": 20000}, sub="issue")
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the refusal")

    assert flags & EPHEMERAL
    assert "⛔" in text and "Support Staff" in text
    async with bot.app.store.session() as s:
        denied = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff.denied"))).scalars().all()
        )
        coupons = (await s.execute(select(Coupon).where(Coupon.order_id == "ORD001"))).scalars().all()
    assert [(d.target, d.code) for d in denied] == [("/coupon issue", "DENIED")]
    assert denied[0].actor == "player:P100", "the actor comes from the Discord id (9001 → P100)"
    assert coupons == []


async def test_integer_option_reaches_the_registry_and_issues_a_coupon(harness, fake):
    bot = await harness.start(ScriptedLLM([]))

    token = await fake.slash(
        42, STAFF, "coupon", {"order_id": "ORD003", "amount": 5000, "reason": "배송 지연 사과"}, sub="issue"
    )
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the reply")

    assert flags & EPHEMERAL
    assert text.startswith("[ISSUED]")
    async with bot.app.store.session() as s:
        [coupon] = (await s.execute(select(Coupon).where(Coupon.order_id == "ORD003"))).scalars().all()
    assert coupon.amount == 5000


async def test_slow_command_is_deferred_then_answered_by_an_ephemeral_followup(harness, fake):
    await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "policy", {"query": "환불 규정"}, sub="search")
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the followup")

    callback = fake.interactions[token]["callback"]
    assert callback["type"] == 5 and callback["data"]["flags"] & EPHEMERAL
    assert flags & EPHEMERAL
    assert "관련 정책을 찾지 못했습니다" in text


async def test_handoff_with_a_channel_option_pauses_that_channel_until_resume(harness, fake):
    bot = await harness.start(ScriptedLLM([{"final": "네"}, {"answer": "다시 답합니다."}]))

    token = await fake.slash(42, STAFF, "handoff", {"channel": SUPPORT})
    [(text, _)] = await fake.wait_for(_replies(fake, token), what="the handoff reply")
    assert f"discord:{SUPPORT}" in text

    await fake.user_says(SUPPORT, 9001, "상담원님 계신가요?")

    async def stored() -> bool:
        rows = await bot.conversations.memory.recent(f"discord:{SUPPORT}")
        return any(r.content == "상담원님 계신가요?" for r in rows)

    await fake.wait_for(stored, what="the paused message to be stored")
    assert fake.bot_messages(SUPPORT) == [], "the bot stays silent during a handoff"

    token = await fake.slash(42, SUPPORT, "resume")
    await fake.wait_for(_replies(fake, token), what="the resume reply")
    await fake.user_says(SUPPORT, 9001, "다시 질문합니다")
    await fake.wait_for(
        lambda: any(m["content"] == "다시 답합니다." for m in fake.bot_messages(SUPPORT)), what="the answer"
    )
    await bot.idle()


async def test_text_form_command_typed_in_a_channel_is_answered_privately(harness, fake):
    bot = await harness.start(ScriptedLLM([]))

    await fake.user_says(SUPPORT, 42, "/order ORD001")
    dm = await fake.wait_for(
        lambda: [
            c for c in fake.calls_to("POST", r"/channels/\d+/messages$") if f"/{SUPPORT}/" not in c.path
        ],
        what="a DM to the staff member",
    )
    await bot.idle()

    assert "ORD001" in dm[0].body["content"]
    assert fake.calls_to("POST", r"/users/@me/channels$")[0].body["recipient_id"] in ("42", 42)
    assert fake.bot_messages(SUPPORT) == []


async def test_unknown_command_gets_a_clear_ephemeral_error(harness, fake):
    await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "refund", {"order_id": "ORD001"}, known=False)
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the error reply")

    assert flags & EPHEMERAL
    assert "out of date" in text


NOTE = StaffCommand(
    "note add",
    (
        Param("who"),
        Param("amount", int, minimum=1),
        Param("text", optional=True),
        Param("channel", optional=True, channel=True),
    ),
    "메모 / note",
    lambda inv, args: _record(inv, args),
)
RECEIVED: list[tuple[Any, dict[str, Any]]] = []


async def _record(inv, args) -> StaffReply:
    RECEIVED.append((inv, dict(args)))
    return StaffReply("기록했습니다")


@pytest.fixture
def note_command(monkeypatch):
    """`/note add <who> <amount> [text] [channel]` beside the real commands, its handler recording."""
    real = app_module.staff_commands
    monkeypatch.setattr(app_module, "staff_commands", lambda settings=None: [*real(settings), NOTE])
    RECEIVED.clear()
    yield RECEIVED
    RECEIVED.clear()


_OPTION_TYPE = {str: 3, int: 4}
_CHANNEL_OPTION = 7


async def test_every_registry_command_is_registered_with_its_typed_options(harness, fake):
    bot = await harness.start(ScriptedLLM([]))

    synced = {c["name"]: c for c in fake.synced_commands[GUILD_KEY]}
    for cmd in bot.conversations.staff.commands.values():
        entry = synced[cmd.group or cmd.leaf]
        if cmd.group is not None:
            entry = next(o for o in entry["options"] if o["name"] == cmd.leaf)
            assert entry["type"] == 1, f"/{cmd.name} is a subcommand"
        options = entry.get("options", [])
        assert [o["name"] for o in options] == [p.name for p in cmd.params], f"/{cmd.name}"
        for param, option in zip(cmd.params, options, strict=True):
            kind = _CHANNEL_OPTION if param.channel else _OPTION_TYPE[param.kind]
            assert option["type"] == kind, f"/{cmd.name} <{param.name}>"
            assert option.get("required", False) is not param.optional, f"/{cmd.name} <{param.name}>"
            assert option["description"], f"/{cmd.name} <{param.name}> has a description"
            if param.minimum is not None:
                assert option["min_value"] == param.minimum, f"/{cmd.name} <{param.name}>"


async def test_typed_options_reach_the_handler_typed_without_a_text_line(harness, fake, note_command):
    await harness.start(ScriptedLLM([]))

    # A value the text form would change: the last argument takes the rest of the line, outer quotes dropped.
    token = await fake.slash(
        42, STAFF, "note", {"who": "두 단어", "amount": 5000, "text": '"인용된 메모"'}, sub="add"
    )
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the reply")

    assert text == "기록했습니다" and flags & EPHEMERAL
    [(inv, args)] = note_command
    assert args == {"who": "두 단어", "amount": 5000, "text": '"인용된 메모"', "channel": f"discord:{STAFF}"}
    assert type(args["amount"]) is int
    assert inv.channel == f"discord:{STAFF}" and inv.actor.is_staff
    assert inv.locale == "ko", "the options were written in Korean"


async def test_an_omitted_option_before_a_given_one_stays_empty(harness, fake, note_command):
    await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "note", {"who": "x", "amount": 1, "channel": SUPPORT}, sub="add")
    await fake.wait_for(_replies(fake, token), what="the reply")

    [(inv, args)] = note_command
    assert args == {"who": "x", "amount": 1, "text": None, "channel": f"discord:{SUPPORT}"}
    assert inv.locale == "en"


async def test_an_integer_below_its_minimum_is_refused_before_the_handler(harness, fake, note_command):
    bot = await harness.start(ScriptedLLM([]))

    token = await fake.slash(42, STAFF, "note", {"who": "x", "amount": 0}, sub="add")
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the refusal")

    assert flags & EPHEMERAL and "<amount> must be at least 1" in text
    assert note_command == []
    async with bot.app.store.session() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff./note add"))).all()
    assert rows == []


async def test_typed_command_by_a_player_is_denied_before_its_options_are_checked(
    harness, fake, note_command
):
    bot = await harness.start(ScriptedLLM([]))

    token = await fake.slash(9001, SUPPORT, "note", {"who": "x", "amount": 0}, sub="add")
    [(text, _)] = await fake.wait_for(_replies(fake, token), what="the refusal")

    assert "⛔" in text and "must be at least" not in text
    assert note_command == []
    async with bot.app.store.session() as s:
        denied = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "staff.denied"))).scalars().all()
        )
    assert [(d.target, d.code, d.thread_id) for d in denied] == [
        ("/note add", "DENIED", f"discord:{SUPPORT}")
    ]


async def test_ops_draft_runs_end_to_end_and_a_long_draft_arrives_as_a_file(harness, fake):
    long_draft = "# 배송 지연 공지\n" + "\n".join(
        f"{i}. 영향 주문 안내 문단입니다. 예산 20,000원." for i in range(120)
    )
    scripted = ScriptedLLM(
        [
            {"final": "1. 영향 주문 집계\n2. 공지문\n3. 보상안과 예산"},
            {"tool": "order_stats", "args": {"status": "delayed"}},
            {"final": long_draft},
        ],
        structured={"accepted": True, "missing": [], "feedback": "ok"},
    )
    await harness.start(scripted)

    token = await fake.slash(
        42, STAFF, "ops", {"request": "배송 지연 공지문과 보상안 초안 (영향 주문 수, 예산 포함)"}, sub="draft"
    )
    replies = await fake.wait_for(_replies(fake, token), what="the draft reply")

    assert fake.interactions[token]["callback"]["type"] == 5, "a slow command is deferred first"
    text = "\n".join(t for t, _ in replies)
    assert "accepted" in text and "draft.md" in text
    assert all(flags & EPHEMERAL for _, flags in replies)
    files = {
        name: body
        for f in fake.interactions[token]["followups"]
        for name, body in (f.get("_files") or {}).items()
    }
    assert long_draft in files["draft.md"]


async def test_ops_draft_is_refused_for_a_player(harness, fake):
    scripted = ScriptedLLM([])
    await harness.start(scripted)

    token = await fake.slash(9001, SUPPORT, "ops", {"request": "이벤트 기획"}, sub="draft")
    [(text, flags)] = await fake.wait_for(_replies(fake, token), what="the refusal")

    assert flags & EPHEMERAL and "⛔" in text
    assert sum(scripted.calls.values()) == 0


async def test_unloading_the_cog_takes_its_commands_off_the_tree(harness, fake):
    running = await harness.start(ScriptedLLM([]))
    guild = discord.Object(id=FakeDiscord.GUILD_ID)
    assert {c.name for c in running.bot.tree.get_commands(guild=guild)} >= {"order", "coupon", "console"}

    await running.bot.remove_cog("Staff")

    assert running.bot.tree.get_commands(guild=guild) == []
