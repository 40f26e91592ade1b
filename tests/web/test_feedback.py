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
    web.script(
        {"tool": "lookup_order", "args": {"order_id": "ORD001"}}, {"final": "ORD001은 배송 지연 중입니다."}
    )
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


async def test_each_answer_names_its_run_so_a_vote_on_an_earlier_answer_goes_to_it(make_web):
    web = await make_web()
    luna = web.client("P100")
    answers = []
    for question, final in (
        ("ORD001 상태?", "ORD001은 배송 중입니다."),
        ("ORD002 상태?", "ORD002는 도착했습니다."),
    ):
        web.script({"tool": "lookup_order", "args": {"order_id": question[:6]}}, {"final": final})
        events = await web.chat(luna, question, thread="orders")
        await web.idle()
        [done] = [e.data for e in events if e.event == "done"]
        answers.append(done["run_id"])
    async with web.conversations.store.session() as s:
        runs = {r.run_id: r for r in (await s.execute(select(Run))).scalars()}
    first, second = answers
    assert set(answers) == set(runs) and first != second

    # The history lists each answer with its run, as the stream's `done` named it.
    history = (await luna.get("/api/threads/orders")).json()["messages"]
    assert [m.get("run") for m in history if m["role"] == "assistant"] == [first, second]
    assert all("run" not in m for m in history if m["role"] == "user")

    # A vote naming the first answer goes to it, not to the thread's latest.
    r = await luna.post("/api/threads/orders/feedback", json={"vote": "down", "run": first})
    assert r.status_code == 200 and r.json() == {"run": first, "vote": "down", "changed": True}
    assert await _votes(web) == [(first, -1, None, runs[first].thread_id)]
    r = await luna.post("/api/threads/orders/feedback", json={"vote": "up"})
    assert r.json()["run"] == second
    assert sorted(await _votes(web)) == sorted(
        [(first, -1, None, runs[first].thread_id), (second, 1, None, runs[second].thread_id)]
    )
