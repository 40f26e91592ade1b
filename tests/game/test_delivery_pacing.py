"""The worker's pace and its reading of answers: exponential backoff with jitter that honours
Retry-After, the rate cap, and which answers are delivered, retried or dead letters (DESIGN.md §11.2)."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from bot.game.delivery import RateCap, RetryPolicy, classify
from bot.game.delivery.poster import backend_reason, retry_after_s

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)


def test_backoff_doubles_is_capped_and_jittered_down_to_half() -> None:
    policy = RetryPolicy(max_attempts=5, first_s=1.0, max_s=10.0)
    rng = random.Random(7)
    waits = [(policy.next_at(NOW, n, rng=rng) - NOW).total_seconds() for n in range(1, 7)]
    for n, wait in enumerate(waits, start=1):
        full = min(10.0, 2 ** (n - 1))
        assert full / 2 <= wait <= full
    assert len({round(w, 6) for w in waits[4:]}) == 2  # capped, still jittered
    assert not policy.gives_up(4) and policy.gives_up(5)


def test_retry_after_wins_over_a_shorter_backoff_even_above_the_cap() -> None:
    policy = RetryPolicy(first_s=0.01, max_s=0.1)
    assert policy.next_at(NOW, 1, retry_after=30) - NOW == timedelta(seconds=30)


@pytest.mark.parametrize(
    ("status", "result"),
    [
        (200, "delivered"),
        (201, "delivered"),
        (409, "delivered"),
        (429, "retry"),
        (500, "retry"),
        (503, "retry"),
        (400, "dead"),
        (401, "dead"),
        (404, "dead"),
        (422, "dead"),
    ],
)
def test_answers_are_sorted_as_the_contract_says(status: int, result: str) -> None:
    assert classify(httpx.Response(status, json={"error": "x"})).result == result


def test_the_backends_reason_and_retry_after_are_read() -> None:
    answer = httpx.Response(429, json={"error": "slow down"}, headers={"Retry-After": "12"})
    sorted_ = classify(answer)
    assert (sorted_.error, sorted_.retry_after) == ("429 slow down", 12.0)
    assert backend_reason(httpx.Response(422, json={"detail": [{"msg": "bad"}]})) == '422 [{"msg": "bad"}]'
    assert backend_reason(httpx.Response(400, text="plain words")) == "400 plain words"
    dated = httpx.Response(503, headers={"Retry-After": "Mon, 02 Mar 2026 01:00:30 GMT"})
    assert retry_after_s(dated, NOW) == 30.0
    assert retry_after_s(httpx.Response(503, headers={"Retry-After": "soon"})) is None


async def test_the_rate_cap_spreads_takes_over_time() -> None:
    cap = RateCap(200, burst=1)
    start = time.perf_counter()
    await asyncio.gather(*(cap.take() for _ in range(41)))
    assert time.perf_counter() - start >= 0.19  # 40 takes after the first at 200/s
