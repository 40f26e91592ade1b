"""`GET /api/notices`: the open incidents' notices that concern the caller, in the widget's language: a
player gets those for everyone and those whose scope covers them (orders by status, a CSV of players);
an anonymous visitor only those for everyone; a closed incident's notice is gone; a bad token is 401.
`GET /api/notices/stream` pushes the caller's list at once and again within seconds of each change."""

from __future__ import annotations

import asyncio

from bot.store.incident_scope import IncidentScope
from tests.support.web import read_sse


async def _open(web, title: str, scope: IncidentScope, ko: str, en: str = "") -> int:
    conv = web.conversations
    incident = await conv.store.incidents.open(
        title=title, notice_ko=ko, notice_en=en, scope=scope, actor="cli", now=conv.clock()
    )
    return incident.id


async def _texts(client, lang: str = "ko") -> list[str]:
    r = await client.get("/api/notices", params={"lang": lang})
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    assert r.json()["poll"] > 0
    return [n["text"] for n in r.json()["notices"]]


async def test_notices_follow_the_callers_scope_language_and_close(make_web) -> None:
    web = await make_web("native")
    everyone = await _open(web, "점검", IncidentScope("all"), "점검 연장", "Maintenance extended")
    await _open(web, "지연", IncidentScope("orders", statuses=("delayed",)), "택배 지연")  # P100 has one
    await _open(web, "P200", IncidentScope("players", player_ids=("P200",)), "P200 공지")
    await _open(web, "P900", IncidentScope("orders", statuses=("delayed",), item="없는 상품"), "아무도 없음")

    assert sorted(await _texts(web.client("P100"))) == ["점검 연장", "택배 지연"]
    assert sorted(await _texts(web.client("P100"), "en")) == [
        "Maintenance extended",
        "택배 지연",
    ]  # no English: Korean
    assert sorted(await _texts(web.client("P200"))) == ["P200 공지", "점검 연장", "택배 지연"]
    assert await _texts(web.client()) == ["점검 연장"]  # an anonymous visitor

    await web.conversations.store.incidents.close(everyone, actor="cli", now=web.conversations.clock())
    assert await _texts(web.client("P100")) == ["택배 지연"]

    bad = await web.client(headers={"Authorization": "Bearer nope"}).get("/api/notices")
    assert bad.status_code == 401


async def test_the_stream_pushes_a_declaration_an_update_and_a_close_within_seconds(make_web) -> None:
    web = await make_web("native")
    store, now = web.conversations.store, web.conversations.clock()
    async with web.client("P100").stream("GET", "/api/notices/stream", params={"lang": "ko"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = read_sse(r)

        async def pushed() -> list[str]:
            # the watch reads every second; the wait allows for a loaded CI machine (4 s once ran out)
            event = await asyncio.wait_for(anext(events), 15)
            assert event.event == "notices"
            return [n["text"] for n in event.data["notices"]]

        assert await pushed() == []  # at once: nothing open
        everyone = await _open(web, "점검", IncidentScope("all"), "서버 점검이 14시까지 연장됩니다.")
        await _open(web, "P200", IncidentScope("players", player_ids=("P200",)), "P200 공지")  # not P100's
        assert await pushed() == ["서버 점검이 14시까지 연장됩니다."]
        await store.incidents.update_notice(
            everyone, notice_ko="서버가 13시 30분에 열렸습니다.", notice_en=None, actor="cli"
        )
        assert await pushed() == ["서버가 13시 30분에 열렸습니다."]
        await store.incidents.close(everyone, actor="cli", now=now)
        assert await pushed() == []
