"""Signed-in players who share an address (a PC방, a carrier's NAT) during an incident: each is limited by
their own identity, not by the address's anonymous budget; all of them together by the (larger) signed-in
budget of the address; anonymous visitors of that address still share its own budget."""

from __future__ import annotations

from bot.config import load_settings


async def test_ten_players_behind_one_address_are_each_answered(make_web) -> None:
    web = await make_web(rate_limit=2, rate_limit_ip=3, rate_limit_ip_signed=12, rate_window=30.0)
    players = [f"P{n}00" for n in range(1, 11)]
    for _ in players:
        web.script({"final": "네, 확인했습니다."})
    for player in players:  # ten messages from one address: over the anonymous budget of 3
        events = await web.chat(web.client(player), "결제 장애 언제 끝나요?")
        assert any(e.event == "done" for e in events), player
    own = web.client("P100")
    web.script({"final": "네."})
    await web.chat(own, "또 질문", thread="second")
    r = await own.post("/api/chat", json={"thread": "third", "message": "세 번째"})
    assert r.status_code == 429, "each player still has their own limit"
    web.script({"final": "네."})
    await web.chat(web.client("P900"), "안녕")  # the 12th signed-in message of the address
    r = await web.client("P901").post("/api/chat", json={"thread": "main", "message": "안녕"})
    assert r.status_code == 429, "all signed-in players of one address together are capped too"
    web.script({"final": "네."})
    events = await web.chat(web.client(), "안녕")  # the address's anonymous budget is its own
    assert any(e.event == "done" for e in events)


def test_the_signed_in_budget_is_a_documented_setting_with_a_larger_default(tmp_path) -> None:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path))
    assert settings.web_rate_limit_ip_signed == 600 > settings.web_rate_limit_ip == 60
    assert (
        load_settings(
            ARCA_DATA_DIR=str(tmp_path), ARCA_WEB_RATE_LIMIT_IP_SIGNED="50"
        ).web_rate_limit_ip_signed
        == 50
    )
