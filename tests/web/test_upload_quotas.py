"""Widget uploads under a flood, over HTTP: a signed-in player's unsent uploads stop at their quota with a
sentence in their language (429); anonymous visitors of one address share a byte budget (new visitors are
cheap to make); the web server runs the sweep of unsent uploads."""

from __future__ import annotations

from typing import Any

from tests.attachments.files import png


async def _upload(client: Any, data: bytes, lang: str = "ko") -> Any:
    return await client.post("/api/attachments", params={"name": "shot.png", "lang": lang}, content=data)


async def test_a_players_unsent_uploads_stop_at_the_quota(make_web) -> None:
    web = await make_web()
    web.conversations.attachments.unsent_files = 3
    player = web.client("P100")
    for n in range(3):
        assert (await _upload(player, png(rgb=(n, 0, 0)))).status_code == 201
    refused = await _upload(player, png(rgb=(9, 9, 9)))
    assert refused.status_code == 429 and refused.json()["code"] == "quota"
    assert "보내지 않은 첨부 파일이 너무 많아" in refused.json()["message"]
    english = await _upload(player, png(rgb=(9, 9, 8)), lang="en")
    assert "too many files waiting to be sent" in english.json()["message"]
    assert (await _upload(web.client("P200"), png(rgb=(9, 9, 9)))).status_code == 201


async def test_anonymous_visitors_of_one_address_share_a_byte_budget(make_web) -> None:
    shots = [png(200, 200, (n, 5, 5)) for n in range(3)]
    web = await make_web(attachment_address_bytes=sum(map(len, shots)) + 10, new_visitors_ip=50)
    for shot in shots:  # three visitors (fresh cookies), one upload each
        r = await _upload(web.client(), shot)
        assert r.status_code == 201, r.text
    refused = await _upload(web.client(), png(200, 200, (7, 7, 7)))
    assert refused.status_code == 429 and refused.json()["code"] == "address_quota"
    assert "잠시 후 다시 보내 주세요" in refused.json()["message"]
    # A signed-in player behind the same address has limits of their own.
    assert (await _upload(web.client("P100"), png(200, 200, (7, 7, 7)))).status_code == 201


async def test_the_web_server_runs_the_sweep_of_unsent_uploads(make_web) -> None:
    web = await make_web()
    assert web.server.app.state.upload_sweep.running
