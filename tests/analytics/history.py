"""A seeded support history with hand-computed figures.

Times are relative to `now`; T0 = now - 25 h. Conversations inside the last 7 days:

| conv | thread          | player       | runs (start → answered)            | events                        | resolution     |
|------|-----------------|--------------|------------------------------------|-------------------------------|----------------|
| A    | discord:1       | player:P100  | T0 → +4 s; T0+10 m → +3 s          | —                             | bot_resolved   |
| B    | discord:1       | player:P100  | T0+2 h → +6 s (idle > 30 m: new)   | escalation T0+2 h+5 s         | escalated      |
| C    | discord:1       | discord:9003 | T0+10 m → +2 s (other player)      | (B's escalation is too late)  | bot_resolved   |
| D    | dm:9002         | player:P200  | T0+3 h → +8 s                      | escalation +30 s, handoff +1 m| handed_off     |
| E    | web:u1:main     | player:P300  | T0+4 h → +20 s                     | staff coupon.approve +10 m    | staff_resolved |
| F    | discord:5       | player:P100  | now-10 m → +3 s                    | — (window still open)         | open           |
| G    | discord:1       | player:P100  | now-8 d (outside the 7 days)       | escalation                    | not counted    |
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

from bot.analytics import record_run, record_vote
from bot.store import AuditEntry, Coupon, Escalation, Order, Player, Store
from tools.results import ToolResult


def outcome(name: str, code: str, ok: bool, sections: tuple[str, ...] = ()) -> Any:
    data = {"hits": [{"citation": s} for s in sections]} if sections else {}
    return SimpleNamespace(name=name, result=ToolResult(ok=ok, code=code, message="", data=data))


KST = ZoneInfo("Asia/Seoul")
S2, S3, R1 = "[보상 정책 §2]", "[보상 정책 §3]", "[환불 정책 §1]"


@dataclass
class Seeded:
    now: datetime
    coupon_times: list[tuple[datetime, int]]
    """(created_at, amount) of the issued coupons inside the window."""


async def seed_history(store: Store, now: datetime) -> Seeded:
    t0 = now - timedelta(hours=25)
    sec, mins = timedelta(seconds=1), timedelta(minutes=1)

    async def run(run_id: str, thread: str, player: str, start: datetime, secs: int, *outs: Any) -> None:
        ok = await record_run(
            store,
            run_id=run_id,
            thread_id=thread,
            player=player,
            started_at=start,
            answered_at=start + secs * sec,
            locale="ko",
            outcomes=outs,
        )
        assert ok

    await run("a1", "discord:1", "player:P100", t0, 4, outcome("search_policy", "OK", True, (S2, S3)))
    await run("a2", "discord:1", "player:P100", t0 + 10 * mins, 3, outcome("issue_coupon", "ISSUED", True))
    await run(
        "b1",
        "discord:1",
        "player:P100",
        t0 + 120 * mins,
        6,
        outcome("search_policy", "OK", True, (S2, R1)),
        outcome("lookup_order", "ORDER_NOT_FOUND", False),
        outcome("escalate_to_staff", "OK", True),
    )
    await run("c1", "discord:1", "discord:9003", t0 + 10 * mins, 2)
    await run(
        "d1",
        "dm:9002",
        "player:P200",
        t0 + 180 * mins,
        8,
        outcome("issue_coupon", "DAILY_LIMIT_REACHED", False),
    )
    await run(
        "e1", "web:u1:main", "player:P300", t0 + 240 * mins, 20, outcome("search_policy", "OK", True, (S2,))
    )
    await run(
        "f1", "discord:5", "player:P100", now - 10 * mins, 3, outcome("search_policy", "OK", True, (R1,))
    )
    old = now - timedelta(days=8)
    await run("g1", "discord:1", "player:P100", old, 5, outcome("search_policy", "ERROR", False, (R1, S3)))

    async with store.session() as s, s.begin():
        s.add_all(
            [
                Player(id="P100", name="루나"),
                Player(id="P200", name="솔"),
                Player(id="P300", name="별"),
            ]
        )
        await s.flush()
        s.add_all(
            [Order(id=f"O{i}", player_id="P100", status="delayed", item="x", amount=39000) for i in range(7)]
        )
        await s.flush()
        coupons = [
            ("C1", "O1", 5000, "active", t0 + 10 * mins),
            ("C2", "O2", 3000, "revoked", t0 + 23 * 60 * mins),
            ("C3", "O3", 2000, "active", now - 10 * mins),
            ("C4", "O4", 10000, "pending", t0 + 60 * mins),
            ("C5", "O5", 8000, "rejected", t0 + 60 * mins),
            ("C6", "O6", 7000, "active", now - timedelta(days=9)),
        ]
        for code, order, amount, status, at in coupons:
            s.add(
                Coupon(
                    code=code,
                    order_id=order,
                    player_id="P100",
                    amount=amount,
                    status=status,
                    issued_by="bot",
                    created_at=at,
                )
            )
        s.add_all(
            [
                Escalation(thread_id="discord:1", summary="b", created_at=t0 + 120 * mins + 5 * sec),
                Escalation(thread_id="dm:9002", summary="d", created_at=t0 + 180 * mins + 30 * sec),
                Escalation(thread_id="discord:1", summary="g", created_at=old + mins),
                AuditEntry(at=t0 + 181 * mins, actor="staff:42", action="handoff", thread_id="dm:9002"),
                AuditEntry(
                    at=t0 + 250 * mins,
                    actor="staff:42",
                    action="coupon.approve",
                    thread_id="web:u1:main",
                    code="OK",
                ),
                # A staff command typed in a player's channel that is not an action on the conversation.
                AuditEntry(
                    at=t0 + 5 * mins,
                    actor="staff:42",
                    action="staff./stats",
                    thread_id="discord:1",
                    code="OK",
                ),
                # A player's own refused approval attempt is not a staff action.
                AuditEntry(
                    at=t0 + 5 * mins,
                    actor="player:P100",
                    action="coupon.approve",
                    thread_id="discord:1",
                    code="DENIED",
                ),
            ]
        )
        for at, code in [
            (t0 + mins, "DAILY_LIMIT_REACHED"),
            (t0 + 2 * mins, "DAILY_LIMIT_REACHED"),
            (t0 + 3 * mins, "ALREADY_ISSUED"),
            (t0 + 4 * mins, "ISSUED"),
            (t0 + 5 * mins, "PENDING_APPROVAL"),
            (old, "DAILY_LIMIT_REACHED"),
        ]:
            s.add(AuditEntry(at=at, actor="player:P100", action="coupon.issue", target="O1", code=code))

    await record_vote(store, run_id="a1", player="player:P100", vote=1, now=now)
    await record_vote(store, run_id="b1", player="player:P100", vote=1, now=now)
    await record_vote(
        store, run_id="b1", player="player:P100", vote=-1, comment="주문을 못 찾았어요", now=now
    )
    await record_vote(store, run_id="d1", player="player:P200", vote=1, now=now)
    return Seeded(
        now=now,
        coupon_times=[(t0 + 10 * mins, 5000), (t0 + 23 * 60 * mins, 3000), (now - 10 * mins, 2000)],
    )


def expected(seeded: Seeded) -> dict[str, Any]:
    """The figures of the table above, by hand."""
    by_day: dict[str, int] = {}
    for at, amount in seeded.coupon_times:
        day = at.astimezone(KST).date().isoformat()  # calendar days of the business time zone
        by_day[day] = by_day.get(day, 0) + amount
    return {
        "conversations": 6,  # A B C D E F
        "bot_resolution_rate": round(2 / 6, 4),  # A, C
        "escalation_rate": round(2 / 6, 4),  # B, D
        "handoffs": 1,  # D
        "first_answer_seconds_p50": 4.0,  # sorted 2 3 4 6 8 20: 3rd of 6
        "first_answer_seconds_p90": 20.0,  # 6th of 6
        "feedback_positive_share": round(2 / 3, 4),  # a1 +1, b1 +1 → -1, d1 +1
        "feedback_votes": 3,
        "coupons_issued": 3,  # C1 active, C2 revoked, C3 active (C4 pending, C5 rejected, C6 too old)
        "coupons_rejected_by_code": {"ALREADY_ISSUED": 1, "DAILY_LIMIT_REACHED": 2},
        "coupon_amount_by_day": dict(sorted(by_day.items())),
        "top_policy_sections": [
            {"section": S2, "count": 3},  # a1, b1, e1
            {"section": R1, "count": 2},  # b1, f1 (g1 too old)
            {"section": S3, "count": 1},  # a1
        ],
        "tool_errors_by_code": {"DAILY_LIMIT_REACHED": 1, "ORDER_NOT_FOUND": 1},
        "first_staff_response_seconds_p50": 30.0,  # D: escalated at +30 s, taken over at +1 m
        "first_staff_response_seconds_p90": 30.0,
        "sla_first_response_met_share": 0.5,  # D within the hour; B never answered, 22 h past its target
        "policy_gaps": 1,  # b1's 👎 with a comment on an answer that searched the policies
    }
