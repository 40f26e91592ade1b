"""The console's "questions without a policy" page in real headless Chromium: policy gaps grouped by
similar question with counts, the last date and links to the conversations; the CSV export is
formula-safe; screenshot in tests/web/output/staff/gaps.png."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path

import numpy as np
from playwright.async_api import expect

from bot.store.policy_gaps import GapRecord, add_policy_gaps
from tests.support.staff_console import open_console, shot

TOPICS = (("펫", "pet"), ("창고", "storage"))


class TopicEmbedder:
    """A test double of the index's embedder: one axis per topic word, so wordings of one topic (in
    either language) are similar and others are not."""

    name, dim, min_relevance = "test/topics", len(TOPICS) + 1, 0.0

    def embed_query(self, text: str) -> np.ndarray:
        v = np.array([float(any(w in text.lower() for w in ws)) for ws in TOPICS] + [0.1], dtype=np.float32)
        return v / np.linalg.norm(v)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts])


async def test_gaps_are_grouped_by_question_linked_to_conversations_and_exported(browser, web) -> None:
    conv = web.conversations
    conv.services.policy_search.embedder = TopicEmbedder()
    now = conv.clock()
    await add_policy_gaps(
        conv.store,
        [
            GapRecord("abstained", "펫 이름 바꾸는 비용", "discord:11", now - timedelta(days=2)),
            GapRecord("abstained", "펫 이름 바꾸는 비용", "web:p100:main", now - timedelta(hours=5)),
            GapRecord("escalated", "how much is a pet rename", "discord:12", now - timedelta(hours=1)),
            GapRecord(
                "disliked",
                '=HYPERLINK("x") 길드 창고 복구',
                "discord:13",
                now - timedelta(days=1),
                detail="창고 규정이 없어요",
            ),
            GapRecord("abstained", "아주 오래된 질문", "discord:14", now - timedelta(days=90)),
        ],
    )
    page = await open_console(browser, web)
    await page.get_by_role("link", name="미답변 질문").click()
    await expect(page.locator("h1")).to_have_text("정책 없는 질문")
    rows = page.locator("#gaps tbody tr")
    await expect(rows).to_have_count(2)  # the 90-day-old one is outside the last 30 days
    first = rows.nth(0)
    await expect(first.locator("strong")).to_have_text("펫 이름 바꾸는 비용")
    await expect(first.locator("td.num")).to_have_text("3")
    await expect(first).to_contain_text("how much is a pet rename")
    await expect(first).to_contain_text("상담원 연결 1")
    await expect(rows.nth(1).locator("td.num")).to_have_text("1")
    await first.locator("summary").click()
    await shot(page, "gaps")

    async with page.expect_download() as info:
        await page.locator("#gaps-csv").click()
    text = Path(await (await info.value).path()).read_text(encoding="utf-8-sig")
    exported = list(csv.DictReader(io.StringIO(text)))
    assert [(r["question"], r["count"]) for r in exported] == [
        ("펫 이름 바꾸는 비용", "3"),
        ('\'=HYPERLINK("x") 길드 창고 복구', "1"),  # a formula is exported as text
    ]
    assert exported[0]["conversations"].split() == ["discord:12", "web:p100:main", "discord:11"]

    await first.get_by_role("link", name="web:p100:main").click()
    await expect(page.locator("h1")).to_have_text("web:p100:main")
    await page.goto(f"{web.url}/staff/gaps?lang=en&days=120")
    await expect(page.locator("h1")).to_have_text("Questions without a policy")
    await expect(page.locator("#gaps tbody tr")).to_have_count(3)
    assert page.errors == []  # type: ignore[attr-defined]
