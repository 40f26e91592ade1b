"""A player links themselves (DESIGN.md §11.4): `/link` in the fake Discord gives an ephemeral one-time
code, the reference game backend sends `account.link` with it, and the bot links, tells and audits;
`/unlink` undoes it; staff's `/link <user> <player>` stays the override."""

from __future__ import annotations

import hashlib

from sqlalchemy import select

from bot.store import AuditEntry
from bot.store.link_codes import LinkCode
from tests.support.fake_discord import EPHEMERAL, FakeDiscord
from tests.support.game_events import CODE

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
STRANGER = 9009  # a member with no linked account in the demo data
DM_OF_STRANGER = 830_000_000_000_000_000 + STRANGER  # the fake's DM channel id for a user


async def _audit(world, action: str) -> list[AuditEntry]:
    async with world.store.session() as s:
        rows = await s.execute(select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id))
        return list(rows.scalars())


async def test_a_player_links_themselves_with_a_code_typed_in_the_game(linking):
    fake = linking.fake
    text, flags = await linking.ask_code(STRANGER)

    assert flags & EPHEMERAL, "only the member sees the code"
    code = CODE.search(text).group(0)
    assert text.index("연동 코드") < text.index("link code"), "Korean first"
    assert await linking.linked_player(STRANGER) is None

    answer = await linking.type_in_game(code, "P900")

    assert answer == {"status_code": 200, "body": {"status": "applied"}}
    assert await linking.linked_player(STRANGER) == "P900"
    told = await fake.wait_for(
        lambda: fake.channel_messages(DM_OF_STRANGER, author_id=FakeDiscord.BOT_ID), what="the DM"
    )
    assert "P900" in told[0]["content"] and "연동" in told[0]["content"]
    [linked] = await _audit(linking, "link.self_service")
    assert (linked.actor, linked.target, linked.code) == ("player:P900", "P900", "OK")
    assert str(STRANGER) in linked.detail
    assert await _audit(linking, "link.code_requested")
    await fake.wait_for(lambda: _audit(linking, "link.told"), what="the notice audited")
    assert fake.bot_messages(SUPPORT) == [], "nothing said in the public channel"


async def test_the_code_is_stored_only_hashed(linking):
    code = await linking.code_for(STRANGER)

    async with linking.store.session() as s:
        [row] = (await s.execute(select(LinkCode))).scalars().all()
        audit = " ".join(f"{r.target} {r.detail}" for r in (await s.execute(select(AuditEntry))).scalars())
    plain = code.replace("-", "")
    assert row.code_hash == hashlib.sha256(plain.encode()).hexdigest()
    assert row.discord_id == str(STRANGER)
    assert (row.expires_at - row.created_at).total_seconds() == 600
    assert plain not in audit and code not in audit


async def test_a_code_typed_with_spaces_or_lowercase_still_works(linking):
    code = await linking.code_for(STRANGER)

    answer = await linking.type_in_game(code.lower().replace("-", " "), "P900")

    assert answer["body"] == {"status": "applied"}


async def test_guessed_codes_never_link_anyone_and_the_player_is_then_rate_limited(linking):
    real = await linking.code_for(STRANGER)
    guesses = ["ABCDE-FGHJK", "22222-22222", "not a code", real[:-1] + ("2" if real[-1] != "2" else "3"), "x"]

    answers = [await linking.type_in_game(g, "P900") for g in guesses]
    after = await linking.type_in_game(real, "P900")

    assert [a["status_code"] for a in answers] == [400] * 5
    assert {a["body"]["error"] for a in answers} == {"unknown_link_code"}
    assert after["status_code"] == 429 and after["body"] == {"error": "rate_limited"}, "even a right code"
    assert await linking.linked_player(STRANGER) is None
    assert len(await _audit(linking, "link.refused")) == 5
    other = await linking.type_in_game(real, "P300")
    assert other["status_code"] == 200, "another player's attempts are counted on their own"


async def test_an_expired_code_is_refused(linking):
    code = await linking.code_for(STRANGER)
    async with linking.store.session() as s, s.begin():
        row = (await s.execute(select(LinkCode))).scalar_one()
        row.expires_at = row.created_at  # ten minutes went by

    answer = await linking.type_in_game(code, "P900")

    assert answer == {"status_code": 400, "body": {"error": "expired_link_code"}}
    assert await linking.linked_player(STRANGER) is None


async def test_a_used_code_cannot_link_again(linking):
    code = await linking.code_for(STRANGER)
    assert (await linking.type_in_game(code, "P900"))["status_code"] == 200

    again = await linking.type_in_game(code, "P300")

    assert again == {"status_code": 400, "body": {"error": "used_link_code"}}
    assert await linking.linked_player(STRANGER) == "P900"
    assert await linking.store.players.id_for_discord("9003") == "P300", "P300's own link untouched"


async def test_a_new_code_replaces_the_older_one(linking):
    older = await linking.code_for(STRANGER)
    newer = await linking.code_for(STRANGER)

    assert (await linking.type_in_game(older, "P900"))["body"] == {"error": "expired_link_code"}
    assert (await linking.type_in_game(newer, "P900"))["body"] == {"status": "applied"}


async def test_asking_for_codes_too_often_is_refused(linking):
    for _ in range(5):
        await linking.code_for(STRANGER)

    text, flags = await linking.ask_code(STRANGER)

    assert flags & EPHEMERAL
    assert CODE.search(text) is None and "너무 자주" in text
    limited = await _audit(linking, "link.code_requested")
    assert [r.code for r in limited] == ["OK"] * 5 + ["RATE_LIMITED"]


async def test_a_code_links_only_the_member_who_asked(linking):
    code = await linking.code_for(STRANGER)
    await linking.type_in_game(code, "P900")

    assert await linking.linked_player(STRANGER) == "P900"
    assert await linking.store.players.id_for_discord("9001") == "P100", "nobody else moved"


async def test_when_dms_are_closed_the_member_is_told_in_the_channel_without_the_account(linking):
    fake = linking.fake
    fake.fail("POST", rf"/channels/{DM_OF_STRANGER}/messages$", status=403, times=5)
    code = await linking.code_for(STRANGER)

    await linking.type_in_game(code, "P900")

    [said] = await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the channel notice")
    assert f"<@{STRANGER}>" in said["content"] and "P900" not in said["content"]
    assert [str(u) for u in said["sent_payload"]["allowed_mentions"]["users"]] == [str(STRANGER)]


async def test_unlink_removes_the_members_own_link_and_is_audited(linking):
    fake = linking.fake
    await linking.type_in_game(await linking.code_for(STRANGER), "P900")

    token = await fake.slash(STRANGER, SUPPORT, "unlink")
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="/unlink's answer")

    assert flags & EPHEMERAL and "P900" in text
    assert await linking.linked_player(STRANGER) is None
    [row] = await _audit(linking, "unlink")
    assert (row.actor, row.target) == (f"discord:{STRANGER}", "P900")
    token = await fake.slash(STRANGER, SUPPORT, "unlink")
    [(text, _)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the second answer")
    assert "연동된 게임 계정이 없어요" in text


async def test_members_see_link_and_unlink_while_staff_commands_stay_hidden(linking):
    synced = {c["name"]: c for c in linking.fake.synced_commands[f"guild:{FakeDiscord.GUILD_ID}"]}

    assert synced["link"].get("default_member_permissions") is None
    assert synced["unlink"].get("default_member_permissions") is None
    assert synced["order"]["default_member_permissions"] is not None


async def test_staff_override_still_links_with_arguments(linking):
    fake = linking.fake
    token = await fake.slash(42, STAFF, "link", {"discord_user_id": str(STRANGER), "player_id": "P900"})
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the staff answer")

    assert flags & EPHEMERAL and "P900" in text and CODE.search(text) is None
    assert await linking.linked_player(STRANGER) == "P900"
    [row] = await _audit(linking, "link")
    assert row.actor == "staff:42"


async def test_a_member_with_arguments_is_denied_the_override_and_audited(linking):
    fake = linking.fake
    token = await fake.slash(9001, SUPPORT, "link", {"discord_user_id": "9001", "player_id": "P900"})
    [(text, flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="the denial")

    assert flags & EPHEMERAL and "⛔" in text
    assert await linking.store.players.id_for_discord("9001") == "P100", "nothing moved"
    [denied] = await _audit(linking, "staff.denied")
    assert (denied.actor, denied.target) == ("player:P100", "/link")
    assert await _audit(linking, "link.code_requested") == [], "no code either"


async def test_a_notice_for_a_member_discord_no_longer_knows_is_given_up_once(linking):
    fake = linking.fake
    now = linking.running.app.conversations.clock()
    async with linking.store.session() as s, s.begin():
        s.add(
            LinkCode(
                code_hash="0" * 64,
                discord_id="123456789",  # not a user of the fake guild: Discord answers 404
                thread_id=f"discord:{SUPPORT}",
                created_at=now,
                expires_at=now,
                state="used",
                used_at=now,
                player_id="P900",
            )
        )

    [row] = await fake.wait_for(lambda: _audit(linking, "link.told"), what="the notice given up")
    rounds = linking.running.bot.link_notices.periodic.rounds
    await fake.wait_for(lambda: linking.running.bot.link_notices.periodic.rounds >= rounds + 2, what="rounds")

    assert row.code == "NOT_TOLD"
    assert len(await _audit(linking, "link.told")) == 1, "not tried again every round"
    assert len(fake.calls_to("POST", r"/users/@me/channels$")) == 1
