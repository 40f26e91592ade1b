"""Driving real headless Chromium (Debian's `chromium`, Playwright for Python): where it is, its
flags, the viewports, opening the player widget, typing, and screenshots into tests/web/output/ (git-ignored).
The `browser` fixture is in tests/web/conftest.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, Page, expect

CHROMIUM = os.environ.get("ARCA_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT = Path(__file__).parents[1] / "web" / "output"
EXPECT_WITHIN_MS = 15_000
"""How long an `expect(...)` waits for the page (Playwright's default is 5 s, which a loaded 2-core CI
machine running Chromium, the server and the test on one loop can overrun); a passing check returns as
soon as the page matches."""
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


async def open_widget(browser: Browser, web: Any, *, viewport: dict[str, int], fragment: str) -> Page:
    context = await browser.new_context(viewport=viewport, locale="ko-KR")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # A 404 for a thread not started yet is the API working; anything else in the console is a defect.
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text) if msg.type == "error" and "status of 404" not in msg.text else None
        ),
    )
    page.errors = errors  # type: ignore[attr-defined]
    await page.goto(f"{web.url}/#{fragment}")
    await expect(page.locator("#who")).not_to_have_text("무엇이든 물어보세요")
    return page


async def send(page: Page, text: str) -> None:
    await page.locator("#input").fill(text)
    await page.locator("#input").press("Enter")


async def shot(page: Page, name: str) -> Path:
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path
