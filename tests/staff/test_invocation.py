"""What a handler receives: the invocation's language (Hangul → ko, else en) from what was typed, and the
typed values of `dispatch_values` checked by the text form's rules."""

from __future__ import annotations

from typing import Any

import pytest

from bot.staff import Invocation, Param, StaffCommand, StaffRegistry, StaffReply
from bot.staff.registry import ArgumentError, check_values
from tools.base import Actor

SEEN: list[tuple[Invocation, dict[str, Any]]] = []


async def _record(inv: Invocation, args: dict[str, Any]) -> StaffReply:
    SEEN.append((inv, args))
    return StaffReply("ok")


NOTE = StaffCommand(
    "note add",
    (Param("who"), Param("amount", int, minimum=1), Param("channel", optional=True, channel=True)),
    "",
    _record,
)


class _Store:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def audit(self, **row: Any) -> None:
        self.rows.append(row)


class _Conversations:
    staff_role = "Support Staff"

    def __init__(self) -> None:
        self.store = _Store()


STAFF = Actor(discord_id="42", roles=frozenset({"Support Staff"}), is_staff=True)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    SEEN.clear()


@pytest.mark.parametrize(
    ("line", "locale"),
    [("/note add 민수 5000", "ko"), ("/note add kim 5000", "en"), ("/note add ㅋㅋ 1", "ko")],
)
async def test_the_invocation_answers_in_the_language_of_the_line(line: str, locale: str) -> None:
    reply = await StaffRegistry([NOTE]).dispatch(
        line, actor=STAFF, channel="console:ops", conversations=_Conversations()
    )

    assert reply.ok
    [(inv, _)] = SEEN
    assert inv.locale == locale


async def test_typed_values_reach_the_handler_as_given_and_are_audited() -> None:
    conversations = _Conversations()

    reply = await StaffRegistry([NOTE]).dispatch_values(
        NOTE, {"who": "민수", "amount": 5000}, actor=STAFF, channel="discord:7", conversations=conversations
    )

    assert reply.ok
    [(inv, args)] = SEEN
    assert args == {"who": "민수", "amount": 5000, "channel": "discord:7"} and inv.locale == "ko"
    assert [(r["action"], r["target"], r["code"]) for r in conversations.store.rows] == [
        ("staff./note add", "민수", "OK")
    ]


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"amount": 5}, "missing <who>"),
        ({"who": "x", "amount": 0}, "at least 1"),
        ({"who": "x", "amount": "5000"}, "whole number"),
        ({"who": "x", "amount": True}, "whole number"),
        ({"who": "x", "amount": 1, "extra": 1}, "unknown option"),
    ],
)
def test_typed_values_keep_the_text_forms_rules(values: dict[str, Any], error: str) -> None:
    with pytest.raises(ArgumentError, match=error):
        check_values(NOTE, values, "discord:7")
