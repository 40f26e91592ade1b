"""The console's incidents over HTTP: no session → 401 and a bad CSRF token → 403 on every incident
route; a declaration by status, by a CSV of players (with a start and a planned end) is stored and
audited under the staff member; a plan is previewed, approved once and issued; the report's CSV is
formula-safe. The browser walk is in test_console_incidents_browser.py."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from typing import Any

from sqlalchemy import select

from bot.store import AuditEntry, Coupon
from tests.support.staff_console import sign_in

GETS = [
    "/staff/incidents",
    "/staff/incidents/1",
    "/staff/incidents/1/live",
    "/staff/incidents/1/report",
    "/staff/incidents/1/report?format=csv",
    "/staff/incidents.js",
]
POSTS = [
    "/staff/incidents",
    *(f"/staff/incidents/1/{a}" for a in ("update", "close", "compensate", "approve", "cancel")),
]


async def _declare(staff: Any, **fields: str) -> int:
    data = {
        "csrf": staff.csrf,
        "title": "택배 지연",
        "notice_ko": "택배사 파업으로 배송이 3일 늦어집니다.",
        "notice_en": "Deliveries are 3 days late.",
        "scope": "orders",
        "status_delayed": "1",
        **fields,
    }
    r = await staff.client.post("/staff/incidents", data=data)
    assert r.status_code == 303, r.text
    found = re.match(r"/staff/incidents/([0-9]+)\?ok=1", r.headers["location"])
    assert found, r.headers["location"]
    return int(found.group(1))


async def test_every_incident_route_needs_a_session_and_each_change_the_csrf_token(web) -> None:
    anonymous = web.client()
    for path in GETS:
        assert (await anonymous.get(path)).status_code == 401, path
    for path in POSTS:
        assert (await anonymous.post(path, data={"title": "x"})).status_code == 401, path
    staff = await sign_in(web)
    incident_id = await _declare(staff)
    for path in POSTS:
        path = path.replace("/1/", f"/{incident_id}/")
        r = await staff.client.post(
            path, data={"csrf": "wrong", "title": "x", "notice_ko": "x", "amount": "1"}
        )
        assert r.status_code == 403, path
    assert len(await web.conversations.store.incidents.list()) == 1  # the refused declaration stored nothing
    still = await web.conversations.store.incidents.get(incident_id)
    assert still.status == "open" and still.comp_state is None


async def test_declare_by_csv_with_a_start_and_planned_end_is_stored_and_audited(web) -> None:
    staff = await sign_in(web, name="Mina", staff_id="4242")
    incident_id = await _declare(
        staff,
        scope="players",
        players_csv="player_id,name\nP100,루나\nP200,솔\nP100,루나\n",
        start="2026-03-02T09:00",
        end="2026-03-02T18:30",
    )
    store = web.conversations.store
    incident = await store.incidents.get(incident_id)
    assert incident.scope.kind == "players" and incident.scope.player_ids == ("P100", "P200")
    assert incident.started_at.isoformat() == "2026-03-02T00:00:00+00:00"  # 09:00 in Seoul
    assert incident.ended_at.isoformat() == "2026-03-02T09:30:00+00:00"
    async with store.session() as s:
        rows = (
            await s.execute(select(AuditEntry).where(AuditEntry.target == f"incident:{incident_id}"))
        ).scalars()
        actions = {(a.action, a.actor) for a in rows}
    assert {("incident.open", "staff:4242"), ("incident.planned_end", "staff:4242")} <= actions

    page = await staff.client.get("/staff/incidents")
    assert "CSV 플레이어 2명" in page.text and "택배 지연" in page.text

    bad = await staff.client.post(
        "/staff/incidents", data={"csrf": staff.csrf, "title": "x", "notice_ko": "y", "scope": "players"}
    )
    assert bad.status_code == 303 and "ok=0" in bad.headers["location"]
    assert len(await store.incidents.list()) == 1


async def test_preview_approve_and_report_through_the_console(web) -> None:
    staff = await sign_in(web)
    store = web.conversations.store
    incident_id = await _declare(staff)
    here = f"/staff/incidents/{incident_id}"
    r = await staff.client.post(
        f"{here}/compensate", data={"csrf": staff.csrf, "amount": "5,000", "per": "order"}
    )
    assert r.status_code == 303 and r.headers["location"] == here
    page = await staff.client.get(here)
    assert 'id="preview"' in page.text and "daily_max_count" in page.text
    shown = int(re.search(r'id="pv-orders">([0-9,]+)<', page.text).group(1).replace(",", ""))
    assert shown > 0

    approvals = await asyncio.gather(
        staff.client.post(f"{here}/approve", data={"csrf": staff.csrf}),
        staff.client.post(f"{here}/approve", data={"csrf": staff.csrf}),
    )
    assert all(a.status_code == 303 for a in approvals)
    for _ in range(100):
        if (await store.incidents.get(incident_id)).comp_state == "done":
            break
        await asyncio.sleep(0.1)
    async with store.session() as s:
        keys = list(
            (
                await s.execute(
                    select(Coupon.idempotency_key).where(
                        Coupon.idempotency_key.like(f"incident:{incident_id}:%")
                    )
                )
            ).scalars()
        )
    assert len(keys) == len(set(keys)) == shown  # two approvals, each coupon once

    async with staff.client.stream("GET", f"{here}/live") as live:
        body = (await live.aread()).decode()
    assert "event: progress" in body and '"finished": true' in body and f'"issued": {shown}' in body

    report = await staff.client.get(f"{here}/report")
    assert f">{shown:,}<" in report.text
    exported = await staff.client.get(f"{here}/report?format=csv")
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(exported.text.lstrip("\ufeff"))))
    assert ["compensation", "orders_compensated", str(shown)] in rows


async def test_a_notice_updated_or_closed_in_the_console_is_what_the_widget_gets(web) -> None:
    staff = await sign_in(web, staff_id="4242")
    store = web.conversations.store
    incident_id = await _declare(staff, scope="all")
    player = web.client("P100")
    assert [n["text"] for n in (await player.get("/api/notices")).json()["notices"]] == [
        "택배사 파업으로 배송이 3일 늦어집니다."
    ]
    here = f"/staff/incidents/{incident_id}"
    r = await staff.client.post(
        f"{here}/update",
        data={"csrf": staff.csrf, "notice_ko": "배송이 5일 늦어집니다.", "notice_en": "5 days late."},
    )
    assert r.status_code == 303 and "ok=1" in r.headers["location"]
    got = (await player.get("/api/notices", params={"lang": "en"})).json()["notices"]
    assert [(n["text"], n["version"]) for n in got] == [("5 days late.", 2)]
    r = await staff.client.post(f"{here}/close", data={"csrf": staff.csrf})
    assert r.status_code == 303 and "ok=1" in r.headers["location"]
    assert (await player.get("/api/notices")).json()["notices"] == []
    async with store.session() as s:
        rows = (
            await s.execute(select(AuditEntry).where(AuditEntry.target == f"incident:{incident_id}"))
        ).scalars()
        assert {(a.action, a.actor) for a in rows} >= {
            ("incident.update", "staff:4242"),
            ("incident.close", "staff:4242"),
        }


async def test_an_approval_of_a_plan_changed_since_its_preview_is_refused(web) -> None:
    mina, jun = (
        await sign_in(web, name="Mina", staff_id="4242"),
        await sign_in(web, name="Jun", staff_id="4343"),
    )
    store = web.conversations.store
    incident_id = await _declare(mina)
    here = f"/staff/incidents/{incident_id}"
    await mina.client.post(f"{here}/compensate", data={"csrf": mina.csrf, "amount": "5000"})
    seen = re.search(r'name="plan" value="([^"]+)"', (await mina.client.get(here)).text).group(1)
    await jun.client.post(f"{here}/compensate", data={"csrf": jun.csrf, "amount": "9000"})  # meanwhile
    r = await mina.client.post(f"{here}/approve", data={"csrf": mina.csrf, "plan": seen})
    assert r.status_code == 303 and "ok=0" in r.headers["location"]
    incident = await store.incidents.get(incident_id)
    assert incident.comp_state == "previewed" and incident.comp_amount == 9000
    async with store.session() as s:
        issued = (
            await s.execute(select(Coupon.id).where(Coupon.idempotency_key.like(f"incident:{incident_id}:%")))
        ).all()
    assert issued == []


async def test_the_report_csv_is_formula_safe(web) -> None:
    staff = await sign_in(web)
    store = web.conversations.store
    incident_id = await _declare(staff, scope="players", players_csv="P100\n-SUM1\n")
    here = f"/staff/incidents/{incident_id}"
    await staff.client.post(
        f"{here}/compensate", data={"csrf": staff.csrf, "amount": "1000", "per": "player"}
    )
    await staff.client.post(f"{here}/approve", data={"csrf": staff.csrf})
    for _ in range(100):
        if (await store.incidents.get(incident_id)).comp_state == "done":
            break
        await asyncio.sleep(0.1)
    exported = await staff.client.get(f"{here}/report?format=csv")
    rows = list(csv.reader(io.StringIO(exported.text.lstrip("\ufeff"))))
    assert ["excluded", "'-SUM1", "no_order"] in rows  # an unknown player, never a formula
    assert ["compensation", "players_compensated", "1"] in rows


async def test_the_incident_page_and_report_give_times_as_staff_read_them(web) -> None:
    staff = await sign_in(web)
    incident_id = await _declare(
        staff, status_delayed="", since="2026-03-01", start="2026-03-02T09:00", end="2026-03-02T18:30"
    )
    page = (await staff.client.get(f"/staff/incidents/{incident_id}")).text
    assert "시작 2026년 3월 2일(월) 09:00 · 종료 2026년 3월 2일(월) 18:30" in page
    assert "2026년 3월 1일(일) 00:00부터" in page, "the scope's day too"
    report = (await staff.client.get(f"/staff/incidents/{incident_id}/report")).text
    assert "2026년 3월 2일(월) 09:00 → 2026년 3월 2일(월) 18:30" in report
    english = (await staff.client.get(f"/staff/incidents/{incident_id}?lang=en")).text
    assert "start Mon Mar 2, 2026 09:00 · end Mon Mar 2, 2026 18:30" in english
    assert "2026-03-02 09:00" not in page + report + english
