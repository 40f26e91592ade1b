"""The console's incident forms under bad input, over HTTP: a `||` inside the Korean notice stays in it.
(More of the forms' hardening: dates, amounts, a large CSV — below.)"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from typing import Any

from bot.web_kit.body_limits import INCIDENT_FORM_CAP
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


NO_MACHINERY = ("Traceback", "OverflowError", "ValueError", "Exception", "Internal Server Error")


def _clean(text: str) -> None:
    for word in NO_MACHINERY:
        assert word not in text, word


async def _after(staff: Staff, r: Any) -> str:
    """The page a refused form redirects to."""
    assert r.status_code == 303 and "ok=0" in r.headers["location"], (r.status_code, r.text[:300])
    page = await staff.client.get(r.headers["location"])
    assert page.status_code == 200
    return page.text


async def test_a_date_out_of_range_is_a_korean_form_error_with_the_form_kept(web) -> None:
    staff = await sign_in(web)
    r = await _declare(
        staff,
        title="결제 오류",
        scope="orders",
        status_delayed="1",
        since="0001-01-01",
        start="0001-01-01T00:00",
    )
    page = await _after(staff, r)
    _clean(page)
    assert "2000년부터 2100년 사이의 날짜를 입력하세요" in page
    assert 'value="결제 오류"' in page and "택배사 파업으로 배송이 늦어집니다.</textarea>" in page
    assert 'value="orders" checked' in page and 'name="status_delayed" value="1" checked' in page
    assert 'name="since" value="0001-01-01"' in page
    assert await web.conversations.store.incidents.list() == []


async def test_an_english_staff_member_reads_the_error_in_english(web) -> None:
    staff = await sign_in(web)
    staff.client.cookies.set("arca_staff_lang", "en", path="/staff")
    page = await _after(staff, await _declare(staff, start="9999-12-31T23:59", end="0001-01-01T00:00"))
    _clean(page)
    assert "enter a date between 2000 and 2100" in page and "날짜를 입력하세요" not in page


async def test_the_ledger_filter_with_day_one_is_a_page_not_a_500(web) -> None:
    staff = await sign_in(web)
    page = await staff.client.get("/staff/ledger", params={"day": "0001-01-01"})
    assert page.status_code == 200
    _clean(page.text)
    assert (
        "2000년 1월 1일부터 2100년 12월 31일 사이로 입력하세요" in page.text
        and 'value="0001-01-01"' in page.text
    )


async def test_a_huge_amount_is_a_form_error_without_an_exception_name(web) -> None:
    staff = await sign_in(web)
    here = f"/staff/incidents/{await _incident_id(staff)}"
    for field in ("amount", "budget", "cap"):
        data = {"csrf": staff.csrf, "amount": "5000", "per": "player", field: str(10**20)}
        page = await _after(staff, await staff.client.post(f"{here}/compensate", data=data))
        _clean(page)
        assert (
            "너무 큰 금액입니다" in page and f'value="{10**20}"' in page and 'value="player" selected' in page
        )
    incident = await web.conversations.store.incidents.get(int(here.rsplit("/", 1)[1]))
    assert incident.comp_state is None


async def test_a_players_csv_over_64_kib_is_declared(web) -> None:
    staff = await sign_in(web)
    players = "player_id\n" + "".join(f"P{n:07d}\n" for n in range(20_000))  # ~180 KiB
    r = await _declare(staff, scope="players", players_csv=players)
    assert r.status_code == 303 and "ok=1" in r.headers["location"], r.text[:300]
    (incident,) = await web.conversations.store.incidents.list()
    assert len(incident.scope.player_ids) == 20_000


async def _declare_too_large(url: str, cookie: str = "") -> tuple[str, str]:
    """A declare form that says it is 5 MB (a browser sends the length first): the answer's head and body."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST /staff/incidents HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000000\r\n\r\n".encode()
        + b"title=x&players_csv="
        + b"P0000001%0A" * 100
    )
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(65_536), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.decode(), body.decode()


async def test_a_form_over_the_limit_gets_a_page_in_the_staff_language(web) -> None:
    head, body = await _declare_too_large(web.url)
    assert head.startswith("HTTP/1.1 413") and "text/html" in head
    assert "입력한 내용이 너무 큽니다" in body and "뒤로 가기" in body and "4 MB" in body
    head, body = await _declare_too_large(web.url, "arca_staff_session=x; arca_staff_lang=en")
    assert head.startswith("HTTP/1.1 413") and "The form is too large" in body


async def test_the_declare_form_names_its_limit_for_the_page_check(web) -> None:
    staff = await sign_in(web)
    page = await staff.client.get("/staff/incidents")
    assert f'data-max-bytes="{INCIDENT_FORM_CAP}"' in page.text


async def test_a_command_that_breaks_says_so_without_the_exception(web, monkeypatch) -> None:
    staff = await sign_in(web)
    incident_id = await _incident_id(staff)
    registry = web.conversations.staff

    async def broken(inv: Any, args: dict[str, Any]) -> Any:
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    monkeypatch.setitem(
        registry.commands, "incident close", replace(registry.commands["incident close"], handler=broken)
    )
    page = await _after(
        staff, await staff.client.post(f"/staff/incidents/{incident_id}/close", data={"csrf": staff.csrf})
    )
    _clean(page)
    assert "명령을 처리하지 못했습니다" in page and "SQLite" not in page


async def test_a_failing_policy_search_is_a_sentence_not_an_exception(web, monkeypatch) -> None:
    staff = await sign_in(web)

    async def broken(query: str, top_k: int = 3) -> list[Any]:
        raise ValueError("Expected where to have exactly one operator, got {}")

    monkeypatch.setattr(web.conversations.services.policy_search, "search", broken)
    page = await staff.client.get("/staff/policies", params={"q": "환불"})
    assert page.status_code == 200
    _clean(page.text)
    assert "정책 검색을 하지 못했습니다" in page.text and "operator" not in page.text
