"""Guard rules in words (issue 51): where staff see what a guard did — the conversation view's fact marks,
the audit page, `/audit` — the rule is named in the staff member's language and its key
(`fact.status`) stays behind a tooltip; every rule `arca-bot guards` lists has a name."""

from __future__ import annotations

import html

from bot.engine.call_checks import CALL_RULES
from bot.guard_rules import RULE_WORDS, rule_of, rule_words
from bot.guards.fact_check import FACT_WITHHELD
from bot.guards.pipeline import SENTENCE_RULES
from tests.support.staff_console import sign_in

THREAD = "web:p100:rules"


def test_every_listed_rule_has_a_korean_and_an_english_name() -> None:
    listed = {r.name for r in (*CALL_RULES, *SENTENCE_RULES)}
    assert listed - set(RULE_WORDS) == set()
    for ko, en in RULE_WORDS.values():
        assert any("가" <= ch <= "힣" for ch in ko) and en.isascii()
    assert rule_words("fact.unbacked", "en") == "Unbacked amount, date or number"
    assert rule_words("no.such_rule", "ko") == "no.such_rule"
    assert rule_of('{"rule": "fact.status", "kind": "status"}') == "fact.status"
    assert rule_of("not json") is None and rule_of(None) is None


async def _withheld(web) -> None:
    conv = web.conversations
    await conv.memory.append(THREAD, {"role": "user", "content": "ORD101 상태?"}, kind="query")
    await conv.memory.append_assistant(THREAD, "ORD101은 배송 중입니다.", run_id="run-r1")
    await conv.store.audit(
        actor="player:P100",
        action=FACT_WITHHELD,
        thread_id=THREAD,
        target="run-r1",
        code="REPLACED",
        detail={
            "kind": "status",
            "rule": "fact.status",
            "removed": "ORD101은 배송 지연입니다.",
            "replacement": "ORD101은 배송 중입니다.",
            "mode": "enforce",
        },
    )


async def test_the_audit_page_and_the_conversation_name_the_rule_in_words(web) -> None:
    await _withheld(web)
    staff = await sign_in(web)
    audit = html.unescape((await staff.client.get("/staff/audit")).text)
    assert '<span class="rule" title="guard.fact_withheld">사실 확인: 문장 교체</span>' in audit
    assert '<span class="rule" title="fact.status">조회와 다른 주문 상태</span>' in audit
    english = html.unescape((await staff.client.get("/staff/audit?lang=en")).text)
    assert "Fact check: sentence withheld" in english and "Order status not backed" in english
    page = html.unescape((await staff.client.get(f"/staff/conversations/{THREAD}?lang=ko")).text)
    assert '<span title="fact.status">조회와 다른 주문 상태</span>' in page
