"""Widget files over HTTP: uploaded as a raw body, checked by content, sent with the message by id, given
back to the uploader only (and to signed-in staff), shown on the console's conversation page."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.attachments.files import EXE, TWENTY_MB, png
from tests.support.staff_console import sign_in
from tests.support.web import read_sse

ANSWER = "보내주신 화면을 확인했습니다. 담당자가 함께 보고 있어요."


async def _upload(client: Any, name: str, data: bytes, lang: str = "ko") -> Any:
    return await client.post("/api/attachments", params={"name": name, "lang": lang}, content=data)


async def _declare_20_mb(url: str) -> tuple[str, bytes]:
    """An upload that says it will send 20 MB (httpx cannot read an answer that comes before its body)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"POST /api/attachments?name=gameplay.mp4 HTTP/1.1\r\nHost: {host}\r\n"
        f"Content-Length: {TWENTY_MB}\r\n\r\n".encode()
        + b"\x00" * 1024
    )
    await writer.drain()
    raw = await asyncio.wait_for(reader.read(65_536), 5)
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return head.decode(), body


async def _chat(client: Any, message: str, ids: list[str]) -> list[Any]:
    body = {"thread": "main", "message": message, "attachments": ids}
    async with client.stream("POST", "/api/chat", json=body) as r:
        assert r.status_code == 200, await r.aread()
        return [e async for e in read_sse(r)]


async def test_a_screenshot_goes_with_the_message_and_only_its_uploader_and_staff_get_it_back(
    make_web,
) -> None:
    web = await make_web()
    llm = web.script({"final": ANSWER})
    player = web.client("P100")
    image = png()

    up = await _upload(player, "결제 오류.png", image)
    assert up.status_code == 201, up.text
    attachment_id = up.json()["id"]
    events = await _chat(player, "결제가 안 돼요", [attachment_id])
    await web.idle()
    assert any(ANSWER in str(e.data) for e in events)
    said = [
        m["content"] for r in llm.requests if r.purpose == "loop" for m in r.messages if m["role"] == "user"
    ]
    assert any("[the player attached a screenshot: 결제 오류.png, " in t for t in said)

    mine = await player.get(f"/api/attachments/{attachment_id}")
    assert mine.status_code == 200 and mine.content == image
    assert mine.headers["content-type"] == "image/png"
    assert mine.headers["x-content-type-options"] == "nosniff"
    assert mine.headers["content-disposition"].startswith('inline; filename="')
    assert (await web.client("P200").get(f"/api/attachments/{attachment_id}")).status_code == 404
    assert (await web.client().get(f"/api/attachments/{attachment_id}")).status_code == 404
    again = await player.post(
        "/api/chat", json={"thread": "main", "message": "또", "attachments": [attachment_id]}
    )
    assert again.status_code == 400 and again.json()["error"] == "attachment_not_found"

    assert (await web.client().get(f"/staff/attachments/{attachment_id}")).status_code == 401
    other_site = await player.post(
        "/api/attachments",
        params={"name": "x.png"},
        content=image,
        headers={"Origin": "https://evil.example"},
    )
    assert other_site.status_code == 403
    staff = await sign_in(web)
    served = await staff.client.get(f"/staff/attachments/{attachment_id}")
    assert (
        served.status_code == 200
        and served.content == image
        and served.headers["content-type"] == "image/png"
    )
    page = await staff.client.get("/staff/conversations/web:P100:main")
    assert f'<img src="/staff/attachments/{attachment_id}/thumb"' in page.text


async def test_oversized_and_renamed_program_are_refused_clearly_and_the_text_is_still_answered(
    make_web,
) -> None:
    web = await make_web()
    web.script({"final": ANSWER})
    player = web.client("P100")

    head, body = await _declare_20_mb(web.url)
    assert head.startswith("HTTP/1.1 413")  # answered on the declared length, before the bytes arrive
    big = json.loads(body)
    assert big["code"] == "too_large" and "첨부 파일이 너무 큽니다(최대 8.0 MB)" in big["message"]
    exe = await _upload(player, "screenshot.png", EXE)
    assert exe.status_code == 415
    assert "'screenshot.png'는 실행 파일이라 받을 수 없습니다" in exe.json()["message"]
    english = await _upload(player, "notes.pdf", b"%PDF-1.7", lang="en")
    assert "The attachment 'notes.pdf' is not a supported type" in english.json()["message"]

    events = await _chat(player, "결제가 안 돼요", [])
    assert any(ANSWER in str(e.data) for e in events)
    assert await web.conversations.attachments.of_thread("web:P100:main") == []


async def test_a_text_file_is_shown_to_staff_as_escaped_text(make_web) -> None:
    web = await make_web()
    web.script({"final": "로그 파일을 받았습니다. 담당자가 확인할게요."})
    player = web.client("P100")
    up = await _upload(player, "client.log", "오류 E-1042 <script>alert(1)</script>\n".encode())
    assert up.status_code == 201
    await _chat(player, "", [up.json()["id"]])
    await web.idle()
    staff = await sign_in(web)
    page = await staff.client.get("/staff/conversations/web:P100:main")
    assert "오류 E-1042 &lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "<script>alert(1)" not in page.text
