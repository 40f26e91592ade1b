"""Files in the widget and the console, in a real headless Chromium: a player attaches a screenshot (📎),
a 20 MB video and a renamed program, and drops a log file on the chat; the two bad files are refused with
a clear Korean sentence, the text is answered, and staff see the screenshot and the log on the
conversation page. Screenshots go to tests/web/output/."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.attachments.files import EXE, TWENTY_MB, png
from tests.support.browser import DESKTOP, open_widget, send, shot
from tests.support.staff_console import link

ANSWER = "보내주신 결제 오류 화면과 로그를 받았습니다. 담당자가 확인할게요."


def _screenshot_png() -> bytes:
    return png(width=320, height=200, rgb=(58, 79, 214))


async def test_a_player_attaches_files_and_staff_see_the_screenshot(
    browser,
    make_web,
    tmp_path: Path,
) -> None:
    web = await make_web()
    web.script({"final": ANSWER})
    files = tmp_path / "files"
    files.mkdir()
    (files / "결제오류.png").write_bytes(_screenshot_png())
    (files / "screenshot.png").write_bytes(EXE)
    with (files / "gameplay.mp4").open("wb") as big:
        big.truncate(TWENTY_MB)

    page = await open_widget(browser, web, viewport=DESKTOP, fragment=f"token={web.token('P100')}&lang=ko")
    await expect(page.locator("#attach")).to_have_attribute("aria-label", "파일 첨부")
    await page.locator("#attach-input").set_input_files(
        [str(files / "결제오류.png"), str(files / "gameplay.mp4"), str(files / "screenshot.png")]
    )
    # A log file dropped on the chat joins them.
    await page.evaluate(
        """() => {
          const dt = new DataTransfer();
          dt.items.add(new File(["E-1042 payment timeout\\n"], "client.log", { type: "text/plain" }));
          const zone = document.querySelector("main.chat");
          zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
          zone.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
        }"""
    )
    await expect(page.locator("#pending-files .chip")).to_have_count(4)
    await shot(page, "attach-pending")

    await send(page, "결제 오류 화면 보냅니다")
    user = page.locator(".msg.user").last
    await expect(user.locator(".files")).to_have_text(["첨부: 결제오류.png", "첨부: client.log"])
    notes = user.locator(".note")
    await expect(notes).to_have_count(2)
    await expect(notes.nth(0)).to_contain_text(
        "첨부 파일이 너무 커서 보내지 않았습니다: 'gameplay.mp4' 20.0 MB (최대 8.0 MB)"
    )
    await expect(notes.nth(1)).to_contain_text("'screenshot.png'는 실행 파일이라 받을 수 없습니다")
    await expect(page.locator(".msg.bot .bubble").last).to_contain_text("담당자가 확인할게요")
    await expect(page.locator("#pending-files")).to_be_hidden()
    await web.idle()
    await shot(page, "attach-answered")
    await page.reload()  # the history shows the files as file lines, not as the model's notes
    await expect(page.locator(".msg.user .files")).to_have_text(["첨부: 결제오류.png", "첨부: client.log"])
    await expect(page.locator(".msg.user .bubble").first).to_have_text("결제 오류 화면 보냅니다")
    assert page.errors == [] or all("415" in e for e in page.errors), page.errors  # type: ignore[attr-defined]

    console = await (await browser.new_context(viewport=DESKTOP, locale="ko-KR")).new_page()
    await console.goto(await link(web))
    await console.get_by_role("button", name="로그인").press("Enter")
    await expect(console).to_have_url(f"{web.url}/staff/conversations")
    await console.goto(f"{web.url}/staff/conversations/web:P100:main")
    thumb = console.locator(".attachments img.thumb")
    await expect(thumb).to_have_count(1)
    await expect(thumb).to_have_attribute("alt", "결제오류.png")
    # The thumbnail loads lazily: bring it into view and wait for the picture itself, 320 pixels wide.
    await thumb.scroll_into_view_if_needed()
    await expect(thumb).to_have_js_property("naturalWidth", 320)
    await expect(console.locator("pre.attachment-text")).to_have_text("E-1042 payment timeout\n")
    await expect(console.locator(".attachments-card h2")).to_contain_text("첨부 파일 (2)")
    await shot(console, "attach-staff-conversation")
