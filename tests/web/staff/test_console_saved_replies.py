"""Saved replies in the staff console over HTTP: the manage page creates, edits and deletes them through
the staff commands (CSRF required, unknown variables refused, text escaped), and a taken-over
conversation's picker sends one filled in the player's language, once per form, audited."""

from __future__ import annotations

from sqlalchemy import select

from bot.store import AuditEntry, Escalation
from bot.store.models import StaffOutbox
from bot.store.saved_replies import get_reply, save_reply
from tests.support.staff_console import sign_in

THREAD = "web:p100:main"
KEY = 'name="reply_key" value="'


async def audit_of(web, prefix: str) -> list[tuple[str, str, str | None, str | None]]:
    async with web.conversations.store.session() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.action.startswith(prefix)))).scalars()
        return [(a.actor, a.action, a.target, a.code) for a in rows]


async def test_the_manage_page_creates_edits_and_deletes_replies_with_csrf(web) -> None:
    staff = await sign_in(web)
    store = web.conversations.store
    form = {"name": "delay", "text_ko": "{player}님 <b>죄송</b>합니다", "text_en": "Sorry, {player}"}

    refused = await staff.client.post("/staff/replies", data=form)  # no CSRF token
    assert refused.status_code == 403 and await get_reply(store, "delay") is None

    made = await staff.client.post("/staff/replies", data={**form, "csrf": staff.csrf})
    assert made.status_code == 303 and "ok=1" in made.headers["location"]
    page = await staff.client.get("/staff/replies")
    assert "{player}님 &lt;b&gt;죄송&lt;/b&gt;합니다" in page.text and "<b>죄송" not in page.text

    await staff.client.post("/staff/replies", data={**form, "text_en": "", "csrf": staff.csrf})
    assert (await get_reply(store, "delay")).text_en == ""

    bad = await staff.client.post(
        "/staff/replies", data={"name": "bad", "text_ko": "{nickname}님", "text_en": "", "csrf": staff.csrf}
    )
    assert "ok=0" in bad.headers["location"] and await get_reply(store, "bad") is None
    flash = await staff.client.get(bad.headers["location"])
    assert "{nickname}" in flash.text and "{player}" in flash.text

    await staff.client.post("/staff/replies/delete", data={"name": "delay", "csrf": staff.csrf})
    assert await get_reply(store, "delay") is None
    assert [a[1:] for a in await audit_of(web, "reply.")] == [
        ("reply.saved", "delay", "CREATED"),
        ("reply.saved", "delay", "UPDATED"),
        ("reply.deleted", "delay", "OK"),
    ]
    assert ("staff:4242", "staff./replies save", "delay", "OK") in await audit_of(web, "staff./replies")


async def test_the_picker_sends_a_filled_reply_once_into_the_taken_over_conversation(web) -> None:
    conv = web.conversations
    await save_reply(
        conv.store,
        name="delay",
        text_ko="{player}님, {order} 보상 쿠폰은 {coupon_code}입니다.",
        text_en="{player}, your coupon for {order} is {coupon_code}.",
        actor="staff:1",
    )
    await conv.memory.append(THREAD, {"role": "user", "content": "쿠폰 언제 와요?"})
    async with conv.store.session() as s, s.begin():
        s.add(Escalation(thread_id=THREAD, player_id="P100", summary="쿠폰"))
    staff = await sign_in(web)
    await staff.client.post(f"/staff/conversations/{THREAD}/handoff", data={"csrf": staff.csrf})
    page = await staff.client.get(f"/staff/conversations/{THREAD}")
    assert 'id="saved-name"' in page.text and '<option value="delay">' in page.text
    key = page.text.split(KEY)[1].split('"')[0] + "-saved"
    form = {"csrf": staff.csrf, "reply_key": key, "name": "delay"}

    missing = await staff.client.post(f"/staff/conversations/{THREAD}/saved-reply", data=form)
    assert "ok=0" in missing.headers["location"]
    sent = {**form, "reply_key": key + "x", "values": "order=ORD001 coupon_code=ARCA-7K2Q"}
    for _ in range(2):  # a double press sends once
        await staff.client.post(f"/staff/conversations/{THREAD}/saved-reply", data=sent)

    expected = "루나님, ORD001 보상 쿠폰은 ARCA-7K2Q입니다."
    async with conv.store.session() as s:
        queued = [(r.thread_id, r.staff, r.text) for r in (await s.execute(select(StaffOutbox))).scalars()]
    assert queued == [(THREAD, "Mina", expected)]
    assert (await conv.memory.recent(THREAD))[-1].content == expected
    assert [a[:3] for a in await audit_of(web, "reply.used")] == [("staff:4242", "reply.used", "delay")]


async def test_a_refused_reply_comes_back_in_its_form_as_typed(web) -> None:
    """Issue 51: a refused save used to empty the form; the typed name and texts are put back, in the new
    reply form, or in the edited reply's own form (opened), not its stored text."""
    staff = await sign_in(web)
    store = web.conversations.store
    typed = {
        "name": "sorry",
        "text_ko": "{nickname}님, 기다려 주셔서 감사합니다",
        "text_en": "Thanks, {nickname}",
    }
    bad = await staff.client.post("/staff/replies", data={**typed, "csrf": staff.csrf})
    page = (await staff.client.get(bad.headers["location"])).text
    assert await get_reply(store, "sorry") is None
    assert 'value="sorry"' in page
    assert (
        ">{nickname}님, 기다려 주셔서 감사합니다</textarea>" in page
        and ">Thanks, {nickname}</textarea>" in page
    )

    good = {"name": "delay", "text_ko": "{player}님 죄송합니다", "text_en": "Sorry, {player}"}
    await staff.client.post("/staff/replies", data={**good, "csrf": staff.csrf})
    edit = {**good, "text_ko": "{player}님 {oops 죄송합니다"}
    refused = await staff.client.post("/staff/replies", data={**edit, "csrf": staff.csrf})
    page = (await staff.client.get(refused.headers["location"])).text
    assert (await get_reply(store, "delay")).text_ko == "{player}님 죄송합니다"
    assert "<details open>" in page and ">{player}님 {oops 죄송합니다</textarea>" in page
    assert 'id="new-name" name="name" required maxlength="40" autocomplete="off" value=""' in page


async def test_flashes_come_in_the_staff_members_language_with_the_right_particle(web) -> None:
    staff = await sign_in(web)
    form = {"name": "sorry", "text_ko": "{player}님 죄송합니다", "text_en": "", "csrf": staff.csrf}
    made = await staff.client.post("/staff/replies", data=form)
    korean = (await staff.client.get(made.headers["location"])).text
    assert "답변 &#39;sorry&#39;를 만들었습니다 [ko]." in korean and "Saved reply" not in korean
    assert "을(를)" not in korean
    english = (await staff.client.get(made.headers["location"] + "&lang=en")).text
    assert "Saved reply &#39;sorry&#39; created [ko]." in english and "만들었습니다" not in english


async def test_on_a_dm_thread_the_pages_saved_reply_is_queued_as_its_typed_reply(web) -> None:
    """Issue 52: on a `dm:` thread (no process posts it) the page's reply box queued its reply, to show
    it as not delivered, while a saved reply from the same page was only kept; both are queued now. The
    same `/reply` run as a command elsewhere still queues only where a process posts it."""
    dm = "dm:9001"
    conv = web.conversations
    await save_reply(conv.store, name="wait", text_ko="잠시만 기다려 주세요.", text_en="", actor="staff:1")
    staff = await sign_in(web)
    await staff.client.post(f"/staff/conversations/{dm}/handoff", data={"csrf": staff.csrf})
    key = (await staff.client.get(f"/staff/conversations/{dm}")).text.split(KEY)[1].split('"')[0]

    typed = {"csrf": staff.csrf, "reply_key": key, "text": "확인 중입니다."}
    saved = {"csrf": staff.csrf, "reply_key": key + "-saved", "name": "wait"}
    assert (await staff.client.post(f"/staff/conversations/{dm}/reply", data=typed)).status_code == 303
    sent = await staff.client.post(f"/staff/conversations/{dm}/saved-reply", data=saved)
    assert "ok=1" in sent.headers["location"]

    async with conv.store.session() as s:
        queued = [(r.thread_id, r.text) for r in (await s.execute(select(StaffOutbox))).scalars()]
    assert queued == [(dm, "확인 중입니다."), (dm, "잠시만 기다려 주세요.")]
    assert [m.content for m in await conv.memory.recent(dm)] == ["확인 중입니다.", "잠시만 기다려 주세요."]
    page = (await staff.client.get(f"/staff/conversations/{dm}")).text
    assert page.count("data-outbox=") == 2
