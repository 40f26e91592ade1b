"""Staff replies over HTTP: a reply to a conversation nobody took over is not sent (the bot may be answering
it) and says so, with the text kept and carried through the takeover; parallel identical replies without a
form key are one send."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from bot.store.models import StaffOutbox
from bot.store.saved_replies import save_reply
from tests.support.staff_console import sign_in

THREAD = "web:P100:main"
HERE = f"/staff/conversations/{THREAD}"


async def _outbox(web) -> list[str]:
    async with web.conversations.store.session() as s:
        rows = (await s.execute(select(StaffOutbox).where(StaffOutbox.thread_id == THREAD))).scalars().all()
    return [r.text for r in rows]


async def test_a_reply_without_a_takeover_is_not_sent_and_the_text_is_kept(web) -> None:
    await web.conversations.memory.append(THREAD, {"role": "user", "content": "환불은 언제 되나요?"})
    staff = await sign_in(web)
    r = await staff.client.post(f"{HERE}/reply", data={"csrf": staff.csrf, "text": "지금 확인해 드릴게요."})
    assert r.status_code == 303 and "ok=0" in r.headers["location"]
    assert await _outbox(web) == []
    history = [m.content for m in await web.conversations.memory.recent(THREAD)]
    assert "지금 확인해 드릴게요." not in history
    page = (await staff.client.get(r.headers["location"])).text
    assert "먼저 &#39;상담원이 이어받기&#39;를 눌러" in page and "지금 확인해 드릴게요.</textarea>" in page
    assert 'name="text" value="지금 확인해 드릴게요."' in page  # carried by the Take over button
    # Taking over with the carried text puts it back into the reply box.
    r = await staff.client.post(f"{HERE}/handoff", data={"csrf": staff.csrf, "text": "지금 확인해 드릴게요."})
    page = (await staff.client.get(r.headers["location"])).text
    assert 'name="text" rows="3" required>지금 확인해 드릴게요.</textarea>' in page


async def test_a_saved_reply_without_a_takeover_is_not_sent(web) -> None:
    await save_reply(
        web.conversations.store,
        name="wait",
        text_ko="잠시만 기다려 주세요.",
        text_en="One moment please.",
        actor="staff:1",
    )
    staff = await sign_in(web)
    r = await staff.client.post(
        f"{HERE}/saved-reply", data={"csrf": staff.csrf, "name": "wait", "values": "order=ORD001"}
    )
    assert r.status_code == 303 and "ok=0" in r.headers["location"]
    assert await _outbox(web) == []
    page = (await staff.client.get(r.headers["location"])).text
    assert "<code>wait</code>" in page and 'name="values" value="order=ORD001"' in page
    r = await staff.client.post(
        f"{HERE}/handoff",
        data={"csrf": staff.csrf, "saved_name": "wait", "values": "order=ORD001"},
    )
    page = (await staff.client.get(r.headers["location"])).text
    assert (
        'value="wait" selected' in page
        and 'id="saved-values" name="values" autocomplete="off" value="order=ORD001"' in page
    )


async def test_parallel_identical_replies_without_a_key_are_one_send(web) -> None:
    await web.conversations.memory.append(THREAD, {"role": "user", "content": "상담원 불러 주세요"})
    staff = await sign_in(web)
    await staff.client.post(f"{HERE}/handoff", data={"csrf": staff.csrf})
    form = {"csrf": staff.csrf, "text": "담당자 미나입니다."}
    answers = await asyncio.gather(*(staff.client.post(f"{HERE}/reply", data=form) for _ in range(5)))
    assert [r.status_code for r in answers] == [303] * 5
    assert await _outbox(web) == ["담당자 미나입니다."]
    history = [m.content for m in await web.conversations.memory.recent(THREAD)]
    assert history.count("담당자 미나입니다.") == 1
    # Other words are another reply.
    await staff.client.post(f"{HERE}/reply", data={**form, "text": "확인했습니다."})
    assert await _outbox(web) == ["담당자 미나입니다.", "확인했습니다."]
