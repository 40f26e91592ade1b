"""Both rooms send a staff reply through the desk's one function (`bot.desk.staff_reply`): the console's
reply box and `/reply` (here run by the console's saved-reply button, as Discord runs it) keep the reply as a
staff answer and queue it. The page's two ways queue for every thread kind (a `dm:` reply is then shown as
not delivered); `/reply` run anywhere else queues only where a process posts it."""

from __future__ import annotations

from typing import Any

import pytest

import bot.staff.replies as staff_replies
import bot.staffroom.console.routes as console_routes
from bot.desk import staff_reply
from bot.store.outbox import reply_statuses
from bot.store.saved_replies import save_reply
from tests.support.context import STAFF
from tests.support.staff_console import sign_in


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, bool]]:
    """Every call of the desk's function, by caller: (room, thread, queued)."""
    calls: list[tuple[str, str, bool]] = []

    def spy(room: str) -> Any:
        async def send(memory: Any, store: Any, thread_id: str, text: str, **kw: Any) -> None:
            calls.append((room, thread_id, kw.get("queue", True)))
            await staff_reply.send_staff_reply(memory, store, thread_id, text, **kw)

        return send

    monkeypatch.setattr(console_routes, "send_staff_reply", spy("console"))
    monkeypatch.setattr(staff_replies, "send_staff_reply", spy("command"))
    return calls


@pytest.mark.parametrize("thread", ["web:P100:main", "dm:9001"])
async def test_the_reply_box_and_the_reply_command_send_through_the_desk(
    web: Any, sent: list[tuple[str, str, bool]], thread: str
) -> None:
    store = web.conversations.store
    await save_reply(
        store, name="wait", text_ko="잠시만 기다려 주세요.", text_en="One moment.", actor="staff:1"
    )
    staff = await sign_in(web)
    here = f"/staff/conversations/{thread}"
    await staff.client.post(f"{here}/handoff", data={"csrf": staff.csrf})

    await staff.client.post(f"{here}/reply", data={"csrf": staff.csrf, "text": "담당자 미나입니다."})
    await staff.client.post(f"{here}/saved-reply", data={"csrf": staff.csrf, "name": "wait", "values": ""})

    # The same command typed as a line (Discord, a terminal) in this thread.
    conv = web.conversations
    await conv.staff.dispatch("/reply wait", actor=STAFF, channel=thread, conversations=conv)

    posted = thread.startswith("web:")
    assert sent == [("console", thread, True), ("command", thread, True), ("command", thread, posted)]
    history = [m.content for m in await conv.memory.recent(thread)]
    assert history.count("잠시만 기다려 주세요.") == 2 and "담당자 미나입니다." in history
    queued = [s.reply.text for s in await reply_statuses(store, thread)]
    from_page = ["담당자 미나입니다.", "잠시만 기다려 주세요."]
    assert queued == ([*from_page, "잠시만 기다려 주세요."] if posted else from_page)
