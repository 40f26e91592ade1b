"""Policy gaps (issue 24): the questions no policy answered are kept with their conversation, on SQLite
and on PostgreSQL (`postgres` marker): abstained searches, an escalation after one, and a 👎 with a
comment on an answer that searched the policies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from bot.analytics.feedback import record_vote
from bot.analytics.record import record_run
from bot.memory import ThreadMemory
from bot.store import Store
from bot.store.policy_gaps import GapRecord, add_policy_gaps, count_policy_gaps, policy_gaps
from tools.results import ToolResult

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


def call(name: str, data: dict[str, Any], args: dict[str, Any] | None = None) -> Any:
    return SimpleNamespace(
        name=name, args=args or {}, result=ToolResult(ok=True, code="OK", message="", data=data)
    )


async def run(store: Store, run_id: str, thread: str, *outcomes: Any, at: datetime = NOW) -> None:
    assert await record_run(
        store,
        run_id=run_id,
        thread_id=thread,
        player="player:P100",
        started_at=at - timedelta(seconds=5),
        answered_at=at,
        locale="ko",
        outcomes=outcomes,
    )


async def test_an_abstained_search_and_the_escalation_after_it_are_kept_with_the_conversation(
    store: Store,
) -> None:
    nothing = call("search_policy", {"hits": [], "query": "펫 이름 바꾸는 비용"})
    found = call("search_policy", {"hits": [{"citation": "[보상 정책 §2 발급 한도]"}], "query": "쿠폰 한도"})
    escalate = call("escalate_to_staff", {}, {"summary": "펫 이름 변경 규정이 없음"})
    await run(store, "r1", "discord:1", nothing, escalate)
    await run(store, "r2", "discord:2", found)  # answered: no gap
    await run(store, "r3", "discord:3", found, escalate)  # escalated, but a policy was found

    gaps = await policy_gaps(store)
    assert {(g.kind, g.question, g.thread_id, g.run_id, g.detail) for g in gaps} == {
        ("abstained", "펫 이름 바꾸는 비용", "discord:1", "r1", None),
        ("escalated", "펫 이름 바꾸는 비용", "discord:1", "r1", "펫 이름 변경 규정이 없음"),
    }
    assert await count_policy_gaps(store) == 2


async def test_a_thumbs_down_with_a_comment_on_a_policy_answer_keeps_the_players_question(
    store: Store,
) -> None:
    memory = ThreadMemory(store)
    await memory.append("web:u1:main", {"role": "user", "content": "길드 창고 아이템 복구 되나요?"})
    answer = call("search_policy", {"hits": [{"citation": "[버그 악용 §1]"}], "query": "길드 창고 복구"})
    await run(store, "r1", "web:u1:main", answer, at=datetime.now(UTC) + timedelta(seconds=1))
    await run(
        store, "r2", "web:u1:main", call("lookup_order", {}), at=datetime.now(UTC) + timedelta(seconds=1)
    )

    await record_vote(store, run_id="r1", player="player:P100", vote=1, comment="좋아요")
    await record_vote(
        store, run_id="r2", player="player:P100", vote=-1, comment="주문이 아니라 길드 얘기예요"
    )
    assert await policy_gaps(store) == []  # a 👍, and a 👎 on an answer that searched no policy

    await record_vote(store, run_id="r1", player="player:P100", vote=-1, comment="창고 규정이 없다네요")
    [gap] = await policy_gaps(store)
    assert (gap.kind, gap.question, gap.detail) == (
        "disliked",
        "길드 창고 아이템 복구 되나요?",
        "창고 규정이 없다네요",
    )
    assert gap.thread_id == "web:u1:main" and gap.run_id == "r1"


async def test_gaps_are_listed_newest_first_and_counted_since_a_date(store: Store) -> None:
    old, new = NOW - timedelta(days=10), NOW - timedelta(hours=1)
    await add_policy_gaps(
        store,
        [
            GapRecord("abstained", "  펫   이름 변경  ", "discord:1", old),
            GapRecord("abstained", "pet rename cost", "discord:2", new, "r9", "player:P200"),
            GapRecord("abstained", "   ", "discord:3", new),  # nothing asked: not kept
        ],
    )
    gaps = await policy_gaps(store)
    assert [(g.question, g.at) for g in gaps] == [("pet rename cost", new), ("펫 이름 변경", old)]
    assert await count_policy_gaps(store, since=NOW - timedelta(days=7)) == 1
    assert await count_policy_gaps(store) == 2
