"""The staff console's conversation page marks what the fact check withheld beside the delivered answer:
the withheld sentence struck through and what replaced it, escaped (a model's text is never markup)."""

from __future__ import annotations

from playwright.async_api import expect

from bot.guards.fact_check import FACT_WITHHELD
from tests.support.staff_console import open_console, shot


async def test_conversation_page_marks_the_withheld_sentence_and_its_replacement(browser, web) -> None:
    conv = web.conversations
    thread = "web:p100:facts"
    await conv.memory.append(thread, {"role": "user", "content": "ORD101 주문 상태 알려주세요"}, kind="query")
    answer = "주문 ORD101의 현재 상태는 배송 중입니다."
    await conv.memory.append_assistant(thread, answer, run_id="run-facts-1")
    await conv.store.audit(
        actor="player:P100",
        action=FACT_WITHHELD,
        thread_id=thread,
        target="run-facts-1",
        code="REPLACED",
        detail={
            "kind": "status",
            "fact": "ORD101 delayed",
            "why": "the lookup says ORD101 is shipping",
            "removed": "ORD101 주문은 <b>배송 지연</b> 상태입니다.<script>window.pwned=1</script>",
            "replacement": answer,
            "mode": "enforce",
        },
    )
    page = await open_console(browser, web)
    await page.goto(f"{web.url}/staff/conversations/{thread}")
    marks = page.locator(".withheld li")
    await expect(marks).to_have_count(1)
    await expect(marks.locator("del")).to_have_text(
        "ORD101 주문은 <b>배송 지연</b> 상태입니다.<script>window.pwned=1</script>"
    )
    await expect(marks.locator("ins")).to_have_text(answer)
    await expect(marks).to_contain_text("status")
    assert await page.evaluate("window.pwned === undefined")
    assert await page.locator(".withheld b").count() == 0
    await shot(page, "conversation-fact-marks")
    assert not page.errors  # type: ignore[attr-defined]
