"""One open escalation per conversation, through the engine with a model on the wire (the fake OpenAI
server): the model calling `escalate_to_staff` twice in a run, again in the next run, and the player's
"상담원 연결" all land on the one ticket; staff get one card, the audit one `escalate` row, and the model
reads a result it can say honestly."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from bot.store import AuditEntry, Escalation
from tests.fakes.openai_server import FakeOpenAIServer, reply
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
STAFF = FakeDiscord.STAFF_CHANNEL
ALREADY = "이미 운영진에게 연결 요청이 접수되어 있어요 (#1)"


def _escalate(summary: str, call_id: str) -> dict:
    return reply(tool_calls=[{"id": call_id, "name": "escalate_to_staff", "arguments": {"summary": summary}}])


def _tool_results(server: FakeOpenAIServer) -> dict[str, str]:
    """Every tool result the model was shown, by its call id, in the order first shown."""
    seen: dict[str, str] = {}
    for request in server.requests:
        for message in request.get("messages", []):
            if message.get("role") == "tool":
                seen.setdefault(message["tool_call_id"], message["content"])
    return seen


@pytest.mark.slow
async def test_the_model_escalating_twice_and_the_player_asking_again_open_one_escalation(harness, fake):
    async with FakeOpenAIServer() as llm_server:
        settings = harness.settings(
            model="fake-model", openai_base_url=llm_server.base_url, openai_api_key="sk-t"
        )
        llm_server.enqueue(
            _escalate("ORD001 환불 요청, 운영진 판단 필요", "call_a"),
            _escalate("ORD001 환불 요청 (다시)", "call_b"),
            reply("운영진에게 전달했어요. 이 대화에서 답변드릴 거예요."),
            reply("운영진에게 전달했어요. 이 대화에서 답변드릴 거예요."),
        )
        running = await harness.start(settings=settings)
        await fake.user_says(SUPPORT, 9001, "환불해 주세요. 사람한테 넘겨 주세요, 급해요 정말로")
        await fake.wait_for(lambda: fake.bot_messages(STAFF), what="the escalation card")
        await running.idle()

        llm_server.enqueue(
            _escalate("플레이어가 다시 재촉함", "call_c"),
            reply("이미 요청이 접수되어 있어요. 조금만 기다려 주세요."),
            reply("이미 요청이 접수되어 있어요. 조금만 기다려 주세요."),
        )
        await fake.user_says(SUPPORT, 9001, "아직이에요? 빨리 좀 처리해 주세요")
        await fake.wait_for(
            lambda: any("조금만 기다려" in m["content"] for m in fake.bot_messages(SUPPORT)),
            what="the second answer",
        )
        await running.idle()
        await fake.user_says(SUPPORT, 9001, "상담원 연결")
        await fake.wait_for(
            lambda: any(
                "이미 상담원 연결을 요청하셨습니다(접수 번호 #1)" in m["content"]
                for m in fake.bot_messages(SUPPORT)
            ),
            what="the notice for the words",
        )
        await running.idle()

        async with running.conversations.store.session() as s:
            escalations = list((await s.execute(select(Escalation.id))).scalars())
            opened = list(
                (await s.execute(select(AuditEntry.target).where(AuditEntry.action == "escalate"))).scalars()
            )
    assert escalations == [1]
    assert opened == ["escalation:1"], "the audit ledger holds one opening"
    assert len(fake.bot_messages(STAFF)) == 1, "staff got one card"
    results = _tool_results(llm_server)
    assert list(results) == ["call_a", "call_b", "call_c"], json.dumps(results, ensure_ascii=False)
    assert "운영진에게 전달했습니다(접수 번호 #1)" in results["call_a"]
    assert ALREADY in results["call_b"] and ALREADY in results["call_c"]
