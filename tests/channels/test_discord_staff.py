"""Staff slash commands through the real client: generated from the registry, synced to the configured
guild, ephemeral replies, refused for players (and audited), deferred when slow, one error handler."""

from __future__ import annotations

from sqlalchemy import select

from bench.fake_discord import EPHEMERAL, FakeDiscord
from bot.channels.discord_staff import command_line
from bot.llm.scripted import ScriptedLLM
from bot.staff import Param, StaffCommand, StaffReply, parse_args
from bot.store import AuditEntry, Coupon

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
        "thread",
        "policy",
        "audit",
        "handoff",
        "resume",
        "stop",
        "ops",
        "stats",
        "console",
    }
    assert {o["name"] for o in commands["ops"]["options"]} == {"draft", "show"}
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


async def _noop(inv, args) -> StaffReply:
    return StaffReply("")


def test_slash_options_become_a_text_line_the_registry_parses_back_to_the_same_values():
    cmd = StaffCommand(
        "note add",
        (
            Param("who"),
            Param("amount", int),
            Param("text", optional=True),
            Param("channel", optional=True, channel=True),
        ),
        "",
        _noop,
    )

    class Channel:
        id = 123

    values = {"who": "두 단어", "amount": 5000, "text": "공백이 있는 메모", "channel": Channel()}
    line = command_line(cmd, values)
    rest = line.removeprefix("/note add ")

    assert parse_args(cmd, rest, "discord:1") == {**values, "channel": "discord:123"}
    assert parse_args(
        cmd, command_line(cmd, {"who": "x", "amount": 1}).removeprefix("/note add "), "discord:1"
    ) == {
        "who": "x",
        "amount": 1,
        "text": None,
        "channel": "discord:1",
    }


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
