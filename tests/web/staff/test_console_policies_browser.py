"""The console's policy page in real headless Chromium, over the project's real policy index: a search
shows what the bot's search is given (the best three sections, each with the section it brings along),
and a question no policy covers says so and points to the gaps list; screenshot in
tests/web/output/staff/policies-search.png."""

from __future__ import annotations

from playwright.async_api import expect

from tests.support.staff_console import open_console, shot, sign_in
from tools.policy_search import DEFAULT_TOP_K


async def test_a_search_shows_each_hit_with_the_section_it_brings_along(browser, web, policy_index) -> None:
    web.conversations.services.policy_search = policy_index
    page = await open_console(browser, web)
    await page.get_by_role("link", name="정책").click()
    await expect(page.locator("h1")).to_have_text("정책 문서")

    await page.get_by_label("검색").fill("보상 쿠폰 하루에 몇 장까지 받을 수 있어요?")
    await page.get_by_role("button", name="봇이 찾을 내용 보기").click()
    hits = page.locator("ol.hits > li")
    await expect(hits).to_have_count(DEFAULT_TOP_K)
    expected = await policy_index.search("보상 쿠폰 하루에 몇 장까지 받을 수 있어요?", DEFAULT_TOP_K)
    for i, hit in enumerate(expected):
        item = hits.nth(i)
        await expect(item.locator("> strong")).to_have_text(hit.citation)
        along = item.locator(".along")
        if hit.neighbour_section:
            await expect(along.locator("strong")).to_have_text(hit.neighbour_citation)
            await expect(along.locator("small")).to_have_text(hit.neighbour_source)
            await expect(along).to_contain_text(hit.neighbour_text.split("\n")[0][:40])
        else:
            await expect(along).to_have_count(0)
    assert any(h.neighbour_section for h in expected), "no hit brought a section along: nothing was shown"
    assert "1일 발급 한도" in " ".join((h.citation + h.neighbour_citation) for h in expected)
    await shot(page, "policies-search")

    await page.get_by_label("검색").fill("오늘 점심 뭐 먹을까요?")
    await page.get_by_role("button", name="봇이 찾을 내용 보기").click()
    empty = page.locator("ol.hits > li.empty")
    await expect(empty).to_contain_text("관련 정책이 없습니다")
    await empty.get_by_role("link", name="정책 없는 질문").click()
    await expect(page.locator("h1")).to_have_text("정책 없는 질문")
    assert page.errors == []  # type: ignore[attr-defined]


async def test_the_query_is_shown_back_escaped(web, policy_index) -> None:
    """A query pasted from a player's message is shown back in the search box: its markup stays text."""
    web.conversations.services.policy_search = policy_index
    staff = await sign_in(web)
    page = await staff.client.get("/staff/policies", params={"q": "<img src=x onerror=alert(1)> 쿠폰 한도"})
    assert page.status_code == 200
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=alert(1)&gt; 쿠폰 한도" in page.text
    assert 'class="along"' in page.text
