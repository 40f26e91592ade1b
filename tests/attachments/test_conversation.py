"""A message with files, through `Conversations`: refused files get a reply in the player's language, the
text is answered anyway, kept files are linked to the thread and named to the model."""

from __future__ import annotations

from sqlalchemy import select

from bot.attachments import Upload
from bot.conversations import Incoming
from bot.conversations.recording import RecordingSurface
from bot.store import AuditEntry, ThreadMessage
from tests.attachments.files import EXE, TWENTY_MB, png
from tests.support.attachments import AttachApp

THREAD = "console:attach"


async def _never() -> bytes:
    raise AssertionError("an oversized file was downloaded")


async def test_refused_files_get_a_korean_reply_and_the_text_is_still_answered(attach_app: AttachApp) -> None:
    attach_app.script({"final": "보내주신 화면 확인했습니다. 담당자가 자세히 살펴볼게요."})
    actor = await attach_app.conv.resolve_actor("9001")
    surface = RecordingSurface()
    files = [
        Upload.of_bytes("결제오류.png", png()),
        Upload("video.mp4", TWENTY_MB, _never),
        Upload.of_bytes("screenshot.png", EXE),
    ]
    outcome = await attach_app.conv.handle(
        Incoming(THREAD, actor, "결제가 안 돼요, 화면 첨부합니다", attachments=files), surface
    )

    assert outcome.kind == "answered"
    said = surface.all_text
    assert "'video.mp4'는 20.0 MB로 너무 큽니다(최대 8.0 MB)" in said
    assert "'screenshot.png'는 실행 파일이라 받을 수 없습니다" in said
    assert "담당자가 자세히 살펴볼게요" in said  # the text was answered
    async with attach_app.app.store.session() as s:
        rows = (
            (await s.execute(select(ThreadMessage).where(ThreadMessage.thread_id == THREAD))).scalars().all()
        )
        refused = (
            (await s.execute(select(AuditEntry).where(AuditEntry.action == "attachment.refused")))
            .scalars()
            .all()
        )
    query = next(r.content for r in rows if r.role == "user")
    assert query.startswith("결제가 안 돼요, 화면 첨부합니다")
    assert "[the player attached a screenshot: 결제오류.png, " in query
    assert "video.mp4" not in query and "screenshot.png" not in query
    assert sorted(e.code for e in refused) == ["executable", "too_large"]
    kept = await attach_app.conv.attachments.of_thread(THREAD)
    assert [(a.name, a.mime) for a in kept] == [("결제오류.png", "image/png")]


async def test_an_english_player_is_refused_in_english(attach_app: AttachApp) -> None:
    attach_app.script({"final": "Thanks, I have noted your message."})
    actor = await attach_app.conv.resolve_actor("9002")
    surface = RecordingSurface()
    files = [Upload.of_bytes("setup.log", EXE)]
    await attach_app.conv.handle(
        Incoming(THREAD, actor, "the game crashes at start", attachments=files), surface
    )
    said = surface.all_text
    assert "The attachment 'setup.log' is a program and cannot be accepted" in said
    assert "Thanks, I have noted your message." in said


async def test_a_screenshot_without_text_is_still_a_message(attach_app: AttachApp) -> None:
    attach_app.script({"final": "스크린샷을 받았습니다. 어떤 문제인지 한 줄로 알려 주세요."})
    actor = await attach_app.conv.resolve_actor("9001")
    surface = RecordingSurface()
    outcome = await attach_app.conv.handle(
        Incoming(THREAD, actor, "", attachments=[Upload.of_bytes("shot.png", png())]), surface
    )
    assert outcome.kind == "answered"
    assert "스크린샷을 받았습니다" in surface.all_text
