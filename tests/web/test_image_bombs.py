"""Screenshots over HTTP: a decompression-bomb PNG is refused at upload in the player's language; the
console shows a thumbnail the server drew (a small JPEG), never the player's file; an image past the limit
kept before it existed gets no thumbnail and is served as a download only."""

from __future__ import annotations

import io
import uuid
from typing import Any

from PIL import Image

from bot.attachments import Upload
from bot.store.attachments import add_attachment
from bot.store.models import utcnow
from tests.attachments.files import png
from tests.attachments.test_image_pixels import bomb
from tests.support.staff_console import sign_in
from tests.support.web import read_sse


async def _upload(client: Any, name: str, data: bytes, lang: str = "ko") -> Any:
    return await client.post("/api/attachments", params={"name": name, "lang": lang}, content=data)


async def test_a_bomb_is_refused_at_upload(make_web) -> None:
    web = await make_web()
    player = web.client("P100")
    r = await _upload(player, "screenshot.png", bomb())
    assert r.status_code == 413 and r.json()["code"] == "too_many_pixels"
    assert "해상도가 너무 큽니다" in r.json()["message"]
    r = await _upload(player, "screenshot.png", bomb(), lang="en")
    assert "too large in pixels" in r.json()["message"]


async def test_the_console_shows_a_server_drawn_thumbnail(make_web) -> None:
    web = await make_web()
    web.script({"final": "확인했습니다."})
    player = web.client("P100")
    up = await _upload(player, "결제 오류.png", png(1280, 720))
    attachment_id = up.json()["id"]
    body = {"thread": "main", "message": "결제가 안 돼요", "attachments": [attachment_id]}
    async with player.stream("POST", "/api/chat", json=body) as r:
        [e async for e in read_sse(r)]
    await web.idle()
    staff = await sign_in(web)
    page = await staff.client.get("/staff/conversations/web:P100:main")
    assert f'<img src="/staff/attachments/{attachment_id}/thumb"' in page.text
    assert f'<img src="/staff/attachments/{attachment_id}"' not in page.text
    thumb = await staff.client.get(f"/staff/attachments/{attachment_id}/thumb")
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/jpeg"
    assert thumb.headers["x-content-type-options"] == "nosniff"
    with Image.open(io.BytesIO(thumb.content)) as picture:
        assert picture.format == "JPEG" and max(picture.size) == 320
    assert (await web.client().get(f"/staff/attachments/{attachment_id}/thumb")).status_code == 401


async def test_an_old_bomb_gets_no_thumbnail_and_is_only_a_download(make_web) -> None:
    web = await make_web()
    box = web.conversations.attachments
    data = bomb()
    sha = await box.files.put(data)  # kept before the pixel limit existed
    attachment_id = uuid.uuid4().hex
    await add_attachment(
        web.conversations.store,
        {
            "id": attachment_id,
            "sha256": sha,
            "name": "old.png",
            "mime": "image/png",
            "kind": "image",
            "size": len(data),
            "owner": "web:P100",
            "thread_id": "web:P100:main",
            "created_at": utcnow(),
            "linked_at": utcnow(),
        },
    )
    staff = await sign_in(web)
    assert (await staff.client.get(f"/staff/attachments/{attachment_id}/thumb")).status_code == 404
    raw = await staff.client.get(f"/staff/attachments/{attachment_id}")
    assert raw.status_code == 200 and raw.headers["content-disposition"].startswith("attachment;")
    fine = await box.take(Upload.of_bytes("ok.png", png()), owner="web:P100")
    served = await staff.client.get(f"/staff/attachments/{fine.id}")
    assert served.headers["content-disposition"].startswith("inline;")
