"""The staff-channel post of an approval request says when the request came from an untrusted message."""

from __future__ import annotations

from bot.staffroom.discord_staff.channel import format_staff_notice

APPROVAL = {"order_id": "ORD301", "amount": 10000, "player_id": "P300", "thread_id": "discord:555"}


def test_a_flagged_approval_request_says_why_it_waits() -> None:
    flagged = format_staff_notice("approval", {**APPROVAL, "flagged": True})
    assert "ORD301" in flagged and "10,000원" in flagged and "<#555>" in flagged
    assert "claimed authority" in flagged and "권한을 주장" in flagged
    assert flagged.rstrip().endswith("`/coupon approve ORD301`")


def test_an_ordinary_approval_request_carries_no_warning() -> None:
    plain = format_staff_notice("approval", {**APPROVAL, "flagged": False})
    assert "ORD301" in plain and "⚠️" not in plain


def test_an_approval_over_the_threshold_names_the_rule_and_the_figures() -> None:
    over = format_staff_notice(
        "approval", {**APPROVAL, "amount": 50000, "flagged": False, "why": {"threshold": 30000}}
    )
    assert "승인 기준 30,000원 초과: 요청 50,000원" in over
    assert "Over the approval threshold of 30,000 KRW: asked 50,000 KRW" in over
