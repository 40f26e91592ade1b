"""The claim check's mailbox rule (bot/guards/mailbox.py): the bot says a reward is in the player's
in-game mailbox only once the game confirmed the grant; before that the sentence becomes "issued, on
its way"; a refused grant, delivery `none` and no coupon at all each get their own honest sentence."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.guards import check_claims
from bot.guards.mailbox import parse_arrival
from bot.store import Store, utcnow
from bot.store.game_deliveries import Outcome as Posted
from bot.vocabulary.particles import particle
from tests.support.context import LUNA, NOW
from tests.support.deliveries import open_store
from tests.support.store import sqlite_url
from tests.support.tools import seed
from tools.coupon_rules import CouponRules
from tools.ledger import issue_for_player


@pytest.mark.parametrize(
    "sentence",
    [
        "보상 쿠폰이 게임 우편함에 도착했습니다.",
        "쿠폰을 우편함으로 보내 드렸어요!",
        "우편함에 쿠폰이 들어가 있어요.",
        "Your coupon has arrived in your in-game mailbox.",
        "It is in your mailbox now.",
        "I've sent the coupon to your mailbox.",
    ],
)
def test_arrival_claims_are_found(sentence: str) -> None:
    assert parse_arrival(sentence) is not None


@pytest.mark.parametrize(
    "sentence",
    [
        "쿠폰은 곧 우편함에 도착할 예정입니다.",
        "우편함에 도착하면 알려 드릴게요.",
        "우편함에 도착했는지 확인해 주세요.",
        "It will arrive in your mailbox shortly.",
        "It has not arrived in your mailbox yet.",
        "Once it is in your mailbox, open it from the menu.",
        "쿠폰을 발급해 드렸습니다.",
    ],
)
def test_promises_questions_and_plain_issuance_are_not_arrival_claims(sentence: str) -> None:
    assert parse_arrival(sentence) is None


def test_granted_means_the_mailbox_only_when_coupons_go_to_the_game() -> None:
    assert parse_arrival("보상 쿠폰 지급이 완료되었습니다.", granted_means_mailbox=True) is not None
    assert parse_arrival("보상 쿠폰 지급이 완료되었습니다.") is None


async def _issued(tmp_path: Path, *, game: bool) -> tuple[Store, list]:
    store = await open_store(sqlite_url(tmp_path / "arca.db"), game=game)
    await seed(store)
    result = await issue_for_player(
        store, CouponRules(), actor=LUNA, order_id="ORD001", amount=5000, idempotency_key="k", now=NOW
    )
    return store, [("issue_coupon", result)]


async def _post(store: Store, result: str, error: str | None = None) -> None:
    now = utcnow()
    (job,) = await store.game_deliveries.lease("t", now=now, lease=timedelta(seconds=30), limit=1)
    await store.game_deliveries.record("t", [Posted(job.id, result, error)], now=now)


ARRIVED = "쿠폰 5,000원이 게임 우편함에 도착했습니다. 확인해 보세요!"


async def test_before_the_game_confirms_the_bot_says_on_its_way_then_arrived(tmp_path: Path) -> None:
    store, outcomes = await _issued(tmp_path, game=True)
    try:
        early = await check_claims(ARRIVED, outcomes=outcomes, store=store)
        assert early.replaced and early.text.startswith("쿠폰은 발급되었고 게임 우편함으로 보내는 중입니다.")
        assert early.details[0]["why"] == "the game has not confirmed the grant yet"
        granted = await check_claims("보상 쿠폰 지급이 완료되었습니다.", outcomes=outcomes, store=store)
        assert granted.replaced  # "지급 완료" means "in the game" when coupons are delivered there
        await _post(store, "delivered")
        later = await check_claims(ARRIVED, outcomes=outcomes, store=store)
        assert not later.replaced and later.text == ARRIVED
        code = outcomes[0][1].data["coupon"]["code"]
        named = await check_claims(f"코드 {code} 쿠폰이 우편함에 도착했어요.", outcomes=[], store=store)
        assert not named.replaced
        en = await check_claims(
            "The coupon has arrived in your in-game mailbox.", outcomes=outcomes, store=store, locale="en"
        )
        assert not en.replaced
    finally:
        await store.close()


async def test_a_refused_grant_is_not_said_to_have_arrived(tmp_path: Path) -> None:
    store, outcomes = await _issued(tmp_path, game=True)
    try:
        await _post(store, "dead", "422 unknown player")
        said = await check_claims("It is in your mailbox now.", outcomes=outcomes, store=store, locale="en")
        assert said.text.startswith(
            "The coupon has been issued, but sending it to your in-game mailbox ran into"
        )
    finally:
        await store.close()


async def test_with_delivery_none_the_bot_says_to_enter_the_code(tmp_path: Path) -> None:
    store, outcomes = await _issued(tmp_path, game=False)
    try:
        code = outcomes[0][1].data["coupon"]["code"]
        said = await check_claims(ARRIVED, outcomes=outcomes, store=store)
        assert said.text.startswith(
            f"쿠폰은 발급되었습니다. 게임에서 쿠폰 코드 {particle(code, '을/를')} 입력해"
        )
        plain = await check_claims("쿠폰 5,000원을 지급했습니다.", outcomes=outcomes, store=store)
        assert not plain.replaced  # "지급" is only issuance when nothing goes to the game
    finally:
        await store.close()


async def test_a_mailbox_claim_without_any_coupon_says_none_was_issued(tmp_path: Path) -> None:
    store = await open_store(sqlite_url(tmp_path / "arca.db"))
    try:
        said = await check_claims("보상이 우편함에 도착했습니다.", outcomes=[], store=store)
        assert said.text == "쿠폰은 발급되지 않았습니다."
    finally:
        await store.close()
