"""The console's incident forms under bad input, over HTTP: a `||` inside the Korean notice stays in it.
(More of the forms' hardening: dates, amounts, a large CSV — below.)"""

from __future__ import annotations

import re
from typing import Any

from tests.support.staff_console import Staff, sign_in

KO_WITH_BARS = "A||B 등급 상품의 배송이 늦어집니다."


async def _declare(staff: Staff, **fields: str) -> Any:
    data = {
        "csrf": staff.csrf,
        "title": "택배 지연",
        "notice_ko": "택배사 파업으로 배송이 늦어집니다.",
        "notice_en": "Deliveries are late.",
        "scope": "all",
        **fields,
    }
    return await staff.client.post("/staff/incidents", data=data)


async def _incident_id(staff: Staff) -> int:
    r = await _declare(staff)
    found = re.match(r"/staff/incidents/([0-9]+)\?", r.headers["location"])
    assert r.status_code == 303 and found, r.headers.get("location")
    return int(found.group(1))


async def test_a_separator_inside_the_korean_notice_stays_in_it(web) -> None:
    staff = await sign_in(web)
    incident_id = await _incident_id(staff)
    here = f"/staff/incidents/{incident_id}"
    for en in ("", "Items A and B are late."):
        r = await staff.client.post(
            f"{here}/update", data={"csrf": staff.csrf, "notice_ko": KO_WITH_BARS, "notice_en": en}
        )
        assert r.status_code == 303
        incident = await web.conversations.store.incidents.get(incident_id)
        assert incident.notice_ko == KO_WITH_BARS
        assert incident.notice_en == (en or "Deliveries are late.")
    player = web.client("P100")
    assert [n["text"] for n in (await player.get("/api/notices")).json()["notices"]] == [KO_WITH_BARS]
