"""Attachments on a player's Discord message, through the real discord.py client against the fake
Discord: the screenshot is downloaded, checked and kept; a 20 MB file (never downloaded) and a renamed
program are refused with a clear reply; the text is answered either way."""

from __future__ import annotations

from bot.llm.scripted import ScriptedLLM
from tests.attachments.files import EXE, TWENTY_MB, png
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
ANSWER = "보내주신 결제 오류 화면 확인했습니다. 담당자가 살펴볼 수 있게 남겨 두었어요."


async def test_a_screenshot_is_kept_and_bad_files_are_refused_while_the_text_is_answered(harness, fake):
    llm = ScriptedLLM([{"final": ANSWER}])
    bot = await harness.start(llm)
    image = png()
    files = [("결제오류.png", image), ("gameplay.mp4", b"\x00" * TWENTY_MB), ("screenshot.png", EXE)]

    await fake.user_says(SUPPORT, 9001, "결제가 안 돼요. 화면 첨부합니다", files=files)
    await fake.wait_for(
        lambda: any(m["content"] == ANSWER for m in fake.bot_messages(SUPPORT)), what="the answer"
    )
    await bot.idle()

    said = [m["content"] for m in fake.bot_messages(SUPPORT)]
    assert any("'gameplay.mp4'는 20.0 MB로 너무 큽니다(최대 8.0 MB)" in s for s in said)
    assert any("'screenshot.png'는 실행 파일이라 받을 수 없습니다" in s for s in said)
    assert ANSWER in said
    assert [d.rsplit("/", 1)[-1] for d in fake.downloads] == [
        "결제오류.png",
        "screenshot.png",
    ]  # not the 20 MB

    loop_texts = [
        m["content"] for r in llm.requests if r.purpose == "loop" for m in r.messages if m["role"] == "user"
    ]
    assert any("[the player attached a screenshot: 결제오류.png, " in t for t in loop_texts)
    box = bot.conversations.attachments
    [kept] = await box.of_thread(f"discord:{SUPPORT}")
    assert (kept.name, kept.mime, kept.owner) == ("결제오류.png", "image/png", "player:P100")
    assert await box.read(kept) == image
    assert (harness.data_dir / "attachments" / kept.sha256[:2] / kept.sha256).read_bytes() == image

    token = await fake.slash(42, SUPPORT, "thread", sub="show")
    [(text, _flags)] = await fake.wait_for(lambda: fake.interaction_texts(token), what="/thread show")
    assert "첨부 파일 1개 / attachments:" in text
    assert "- 결제오류.png (image/png, " in text and f"id {kept.id}" in text
    assert "gameplay.mp4" not in text.split("attachments:")[1]
