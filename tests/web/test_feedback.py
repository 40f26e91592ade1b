"""The widget's 👍 / 👎: `POST /api/threads/{thread}/feedback` stores a vote through the same
table as the Discord buttons; one per answer per player, changeable; only the identity that asked."""

from __future__ import annotations

from sqlalchemy import select

from bot.store import Feedback, Run


async def _votes(web) -> list[tuple[str, int, str | None, str]]:
    async with web.conversations.store.session() as s:
        return [
            (f.run_id, f.vote, f.comment, f.thread_id) for f in (await s.execute(select(Feedback))).scalars()
        ]


async def test_a_vote_is_stored_changed_and_refused_to_other_identities(make_web):
    web = await make_web()
    web.script({"final": "ORD001은 배송 지연 중입니다."})
    luna = web.client("P100")
    await web.chat(luna, "ORD001 상태 알려주세요", thread="orders")
    await web.idle()
    async with web.conversations.store.session() as s:
        [run] = (await s.execute(select(Run))).scalars()
    assert run.player == "player:P100" and run.thread_id.endswith(":orders")

    r = await luna.post("/api/threads/orders/feedback", json={"vote": "up"})
    assert r.status_code == 200 and r.json() == {"run": run.run_id, "vote": "up", "changed": True}
    r = await luna.post(
        "/api/threads/orders/feedback", json={"vote": "down", "comment": "더 자세히 알려주세요"}
    )
    assert r.json()["changed"] is True
    assert await _votes(web) == [(run.run_id, -1, "더 자세히 알려주세요", run.thread_id)]

    r = await web.client("P200").post("/api/threads/orders/feedback", json={"vote": "up", "run": run.run_id})
    assert r.status_code == 404 and r.json()["error"] == "answer_not_found"
    r = await web.client().post("/api/threads/orders/feedback", json={"vote": "up"})
    assert r.status_code == 404
    assert (await luna.post("/api/threads/orders/feedback", json={"vote": "meh"})).status_code == 400
    assert await _votes(web) == [(run.run_id, -1, "더 자세히 알려주세요", run.thread_id)]
