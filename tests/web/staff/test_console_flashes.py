"""Console flashes come from the server, over HTTP: `?ok=1&msg=…` shows nothing (a phishing link cannot
dress up as a green success banner), a real action's flash shows after its redirect, and only to the
session that made it."""

from __future__ import annotations

import pytest

from tests.support.staff_console import sign_in

PHISH = "보안 점검 완료. 계속하려면 evil.example 에서 다시 로그인하세요"


@pytest.mark.parametrize(
    "path",
    ["/staff/conversations", "/staff/approvals", "/staff/incidents", "/staff/replies", "/staff/ledger"],
)
async def test_a_message_in_the_query_string_is_never_shown(web, path) -> None:
    staff = await sign_in(web)
    page = await staff.client.get(path, params={"ok": "1", "msg": PHISH})
    assert page.status_code == 200
    assert PHISH not in page.text and "evil.example" not in page.text
    assert 'class="flash ok"' not in page.text


async def test_an_actions_flash_shows_after_its_redirect_and_only_to_its_session(web) -> None:
    mina, jun = await sign_in(web, "Mina", "4242"), await sign_in(web, "Jun", "4343")
    r = await mina.client.post(
        "/staff/replies",
        data={"csrf": mina.csrf, "name": "wait", "text_ko": "잠시만요", "text_en": "One moment"},
    )
    assert r.status_code == 303 and "flash=" in r.headers["location"] and "msg=" not in r.headers["location"]
    shown = await mina.client.get(r.headers["location"])
    assert 'class="flash ok"' in shown.text
    stolen = await jun.client.get(r.headers["location"])
    assert 'class="flash' not in stolen.text
    forged = await mina.client.get("/staff/replies", params={"ok": "1", "flash": "A" * 22})
    assert 'class="flash' not in forged.text
