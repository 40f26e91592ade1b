"""Output guard: mass mentions, the actor's own contact details, and streaming that only releases checked text."""

from __future__ import annotations

import pytest

from bot.guards.output import OutputGuard
from tools.base import Actor

LUNA = Actor(discord_id="9001", player_id="P100")


async def test_mass_and_role_mentions_are_neutralised(store) -> None:
    guard = OutputGuard(store=store, actor=LUNA)
    v = await guard.check("@everyone 공지! <@&555> 확인 @here", outcomes=[])
    assert "@everyone" not in v.text and "@here" not in v.text and "<@&555>" not in v.text
    assert v.mentions_neutralized


async def test_for_actor_lets_the_players_own_contact_details_through(store) -> None:
    guard = await OutputGuard.for_actor(store, LUNA, thread_id="test:1")
    v = await guard.check("연락처 010-1111-2222, 다른 분 010-3333-4444.", outcomes=[])
    assert v.text == "연락처 010-1111-2222, 다른 분 [전화번호 비공개]."
    assert v.redactions == ["phone"]


async def test_stream_never_releases_an_unchecked_false_claim(store) -> None:
    guard = OutputGuard(store=store, actor=LUNA, thread_id="test:1")
    stream = guard.stream(outcomes=[])
    released = []
    answer = "확인했습니다. 30,000원 쿠폰을 발급했습니다. 좋은 하루 되세요!"
    for i in range(0, len(answer), 3):
        released.append(await stream.feed(answer[i : i + 3]))
        assert "발급했습니다" not in "".join(released)
    final = await stream.finish()
    assert final.startswith("".join(released))
    assert final == "확인했습니다. 쿠폰은 발급되지 않았습니다. 좋은 하루 되세요!"
    assert stream.verdict().replaced


@pytest.mark.parametrize("chunk", [1, 2, 5, 17, 1000])
async def test_streamed_and_whole_text_give_the_same_final_text(store, chunk: int) -> None:
    guard = OutputGuard(store=store, actor=LUNA, own_phones=["010-1111-2222"])
    answer = (
        "ORD001 확인했습니다.\n쿠폰을 발급해 드렸어요. 코드는 ARCA-FAKE-2345입니다. 문의는 010-5555-6666 또는 "
        "help@arca.example 로 주세요. @everyone"
    )
    whole = await guard.check(answer, outcomes=[])
    stream = guard.stream(outcomes=[])
    pieces = [await stream.feed(answer[i : i + chunk]) for i in range(0, len(answer), chunk)]
    final = await stream.finish()
    assert final == whole.text and final.startswith("".join(pieces))
    assert "발급해 드렸어요" not in final and "ARCA-FAKE-2345" not in final
    assert "010-5555-6666" not in final and "help@arca.example" not in final and "@everyone" not in final


async def test_honest_answer_streams_through_unchanged(store) -> None:
    guard = OutputGuard(store=store, actor=LUNA)
    answer = "ORD002는 배송 완료 상태라 쿠폰을 발급할 수 없습니다. 다른 도움이 필요하시면 말씀해 주세요."
    stream = guard.stream(outcomes=[])
    out = "".join([await stream.feed(answer[:20]), await stream.feed(answer[20:])])
    final = await stream.finish()
    assert final == answer and out + answer[len(out) :] == answer
    assert not stream.verdict().replaced
