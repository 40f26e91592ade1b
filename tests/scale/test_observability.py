"""Operations: JSON logs with thread/run/tool/code on every line, no secrets in any log line, and
Prometheus counters that move when a scripted run goes through the real `Conversations`."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from bot.app import build_app
from bot.config import load_settings
from bot.conversations import Incoming
from bot.conversations.hooks import FanOut, MetricsHooks, RunInfo
from bot.conversations.renderer import Renderer
from bot.knowledge.embedders import E5Embedder
from bot.knowledge.index import PolicyIndex
from bot.llm.openai_llm import OpenAILLM
from bot.llm.scripted import ScriptedLLM
from bot.observability import (
    LOG_FIELDS,
    ArcaMetrics,
    ErrorCountingHandler,
    configure_logging,
    current_log_context,
    log_context,
    start_metrics_server,
)
from bot.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, fault, reply
from tests.support.context import NOW
from tests.support.scale import seed_ledger
from tests.support.surface import RecordingSurface
from tools.base import Actor

POLICY = """---
id: coupons
title: 보상 정책
lang: ko
version: "1"
effective: 2026-01-01
---

## 1. 적용 대상

배송 지연 상태인 주문만 보상 쿠폰을 받을 수 있습니다.
"""


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = configure_logging(level="INFO", fmt="json", stream=stream)
    try:
        yield stream
    finally:
        logging.getLogger().removeHandler(handler)


def json_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def scrape(url: str) -> dict[tuple[str, frozenset], float]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        assert resp.status == 200
        body = resp.read().decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


# ---- logs -------------------------------------------------------------------------------------------


def test_every_json_line_carries_the_context_fields(log_stream: io.StringIO) -> None:
    log = logging.getLogger("bot.test")
    log.info("outside any context")
    with log_context(thread_id="discord:1", run_id="run1"):
        log.info("in the run")
        with log_context(tool="issue_coupon", code="ISSUED"):
            log.warning("tool finished")
        log.info("back in the run")
    lines = json_lines(log_stream)
    assert all(set(LOG_FIELDS) <= line.keys() for line in lines)
    first, run, tool, back = lines
    assert first["thread_id"] is None and first["message"] == "outside any context"
    assert (run["thread_id"], run["run_id"], run["tool"]) == ("discord:1", "run1", None)
    assert (tool["tool"], tool["code"], tool["level"], tool["thread_id"]) == (
        "issue_coupon",
        "ISSUED",
        "WARNING",
        "discord:1",
    )
    assert back["tool"] is None and back["run_id"] == "run1"


async def test_concurrent_runs_keep_their_own_context(log_stream: io.StringIO) -> None:
    log = logging.getLogger("bot.test")

    async def run(thread: str) -> None:
        with log_context(thread_id=thread, run_id=f"run-{thread}"):
            for step in range(5):
                log.info("step %d of %s", step, thread)
                await asyncio.sleep(0)

    await asyncio.gather(run("discord:1"), run("discord:2"))
    # Only this test's lines: a client another test left open may log when it is garbage-collected.
    lines = [line for line in json_lines(log_stream) if line["logger"] == "bot.test"]
    assert len(lines) == 10
    assert all(line["message"].endswith(line["thread_id"]) for line in lines)
    assert all(line["run_id"] == f"run-{line['thread_id']}" for line in lines)
    assert current_log_context() == {}


def test_secrets_never_reach_a_log_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.zyxwvutsrqponmlkjihgfedcba012"
    key = "sk-proj-abcdefghijklmnop1234567890"
    monkeypatch.setenv("DISCORD_TOKEN", token)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("ARCA_DB_URL", "postgresql+asyncpg://bot:pg-Pass-42@db:5432/arca")
    monkeypatch.setenv("ARCA_LOG_FORMAT", "json")
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path))
    for fmt in ("json", "text"):
        stream = io.StringIO()
        handler = configure_logging(settings, fmt=fmt, stream=stream)
        log = logging.getLogger("bot.test")
        try:
            log.info("connecting with token %s and key %s", token, key)
            log.info("database %s", settings.db_url, extra={"dsn": settings.db_url})
            log.info("an unknown key sk-live-QWERTYUIOPASDFGH12 and Bearer abcdefghijklmnop")
            try:
                raise RuntimeError(f"login failed for {token}")
            except RuntimeError:
                log.exception("Discord said no")
        finally:
            logging.getLogger().removeHandler(handler)
        out = stream.getvalue()
        for secret in (token, key, "pg-Pass-42", "QWERTYUIOPASDFGH12", "abcdefghijklmnop"):
            assert secret not in out, (fmt, secret)
        assert "Discord said no" in out and "bot:***@db:5432" in out
        if fmt == "json":
            assert len(json_lines(stream)) == 4


def test_text_format_appends_the_context(tmp_path: Path) -> None:
    stream = io.StringIO()
    handler = configure_logging(level="INFO", fmt="text", stream=stream)
    try:
        with log_context(thread_id="console:main", tool="lookup_order", code="OK"):
            logging.getLogger("bot.test").info("looked up")
    finally:
        logging.getLogger().removeHandler(handler)
    assert "bot.test: looked up [thread_id=console:main tool=lookup_order code=OK]" in stream.getvalue()


# ---- metrics: a scripted run through the real Conversations, scraped over HTTP ---------------------------


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[Store]:
    store = Store(f"sqlite+aiosqlite:///{tmp_path / 't.db'}")
    await store.open()
    await seed_ledger(store)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def tiny_index(tmp_path: Path) -> Iterator[PolicyIndex]:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "coupons.md").write_text(POLICY, encoding="utf-8")
    index = PolicyIndex(E5Embedder(), chroma_dir=tmp_path / "chroma", policies_dir=policies)
    index.ensure_built(policies)
    try:
        yield index
    finally:
        index.close()


@pytest.mark.slow
async def test_metrics_endpoint_shows_a_scripted_run(
    ledger: Store, tiny_index: PolicyIndex, tmp_path: Path, log_stream: io.StringIO
) -> None:
    metrics = ArcaMetrics(
        known_tools=["lookup_order", "list_my_orders", "issue_coupon", "search_policy", "escalate_to_staff"]
    )
    server = start_metrics_server(metrics, 0)
    try:
        before = await asyncio.to_thread(scrape, server.url)
        assert value(before, "arca_runs_total", stopped_reason="final_answer") == 0

        script = ScriptedLLM(
            [
                {"tool": "lookup_order", "args": {"order_id": "ORD001"}},
                {"tool": "issue_coupon", "args": {"order_id": "ORD001", "amount": 5000}},
                {"final": "ORD001에 5,000원 쿠폰을 발급했습니다."},
            ],
            observer=metrics,
        )
        settings = load_settings(ARCA_DATA_DIR=str(tmp_path), edit_interval=0.0)
        # The app's own wiring: `build_app(metrics=...)` observes every event and the renderer times
        # the surface; the model reports its own calls (as the app's OpenAILLM does); each run logs
        # inside log_context(thread_id, run_id), each tool call inside (tool, code).
        app = await build_app(
            settings,
            llm_factory=lambda: script,
            store=ledger,
            policy_index=tiny_index,
            clock=lambda: NOW,
            metrics=metrics,
        )
        conv = app.conversations
        surface = RecordingSurface()
        actor = await conv.resolve_actor("9001")
        outcome = await conv.handle(
            Incoming("discord:777", actor, "ORD001 배송이 늦어요. 5천원 쿠폰 주세요"), surface
        )
        assert outcome.kind == "answered", outcome
        assert "5,000원" in "\n".join(surface.messages.values())

        after = await asyncio.to_thread(scrape, server.url)
    finally:
        server.close()

    assert value(after, "arca_runs_total", stopped_reason="final_answer") == 1
    assert value(after, "arca_iterations_total") == 3
    assert value(after, "arca_run_iterations_count") == 1
    assert value(after, "arca_tool_calls_total", tool="lookup_order", code="OK") == 1
    assert value(after, "arca_tool_calls_total", tool="issue_coupon", code="ISSUED") == 1
    assert value(after, "arca_tool_duration_seconds_count", tool="issue_coupon") == 1
    assert value(after, "arca_llm_request_duration_seconds_count", purpose="loop") == 3
    assert value(after, "arca_llm_request_duration_seconds_count", purpose="synthesis") == 1
    assert value(after, "arca_message_edit_duration_seconds_count", op="send") >= 1
    assert value(after, "arca_errors_total", where="tool", kind="issue_coupon") == 0

    tool_lines = [
        line
        for line in json_lines(log_stream)
        if line["tool"] is not None and line["message"].startswith("tool ")
    ]
    assert [(line["tool"], line["code"]) for line in tool_lines] == [
        ("lookup_order", "OK"),
        ("issue_coupon", "ISSUED"),
    ]
    run_ids = {line["run_id"] for line in tool_lines}
    assert len(run_ids) == 1 and None not in run_ids
    assert all(line["thread_id"] == "discord:777" for line in tool_lines)
    done = [line for line in json_lines(log_stream) if line["message"].startswith("run done")]
    assert done and done[0]["run_id"] in run_ids


async def test_llm_tokens_latency_and_errors_from_a_real_openai_client() -> None:
    metrics = ArcaMetrics()
    replies = [
        reply("안녕하세요", usage={"prompt_tokens": 11, "completion_tokens": 4}),
        reply("스트림 답변입니다"),
    ]
    async with FakeOpenAIServer(replies) as fake:
        llm = OpenAILLM(
            "fake-model", base_url=fake.base_url, api_key="sk-test", max_retries=0, observer=metrics
        )
        await llm.chat([{"role": "user", "content": "hi"}], purpose="loop")
        streamed = "".join([d async for d in llm.stream_chat([{"role": "user", "content": "hi"}])])
        assert streamed == "스트림 답변입니다"
        fake.enqueue(fault("500"))
        with pytest.raises(Exception, match="HTTP 500"):
            await llm.chat([{"role": "user", "content": "hi"}], purpose="loop")
        await llm.close()
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
    }
    assert value(samples, "arca_llm_tokens_total", purpose="loop", kind="prompt") == 11
    assert value(samples, "arca_llm_tokens_total", purpose="loop", kind="completion") == 4
    streamed_tokens = llm.usage.total_tokens - 15
    assert streamed_tokens > 0
    assert (
        value(samples, "arca_llm_tokens_total", purpose="synthesis", kind="prompt")
        + value(samples, "arca_llm_tokens_total", purpose="synthesis", kind="completion")
        == streamed_tokens
    )
    assert value(samples, "arca_llm_request_duration_seconds_count", purpose="loop") == 2
    assert value(samples, "arca_llm_first_token_seconds_count", purpose="synthesis") == 1
    assert value(samples, "arca_errors_total", where="llm", kind="status") == 1


def test_invented_tool_names_and_codes_do_not_grow_the_label_set() -> None:
    from bot.engine.events import IterationEvent

    metrics = ArcaMetrics(known_tools=["lookup_order"])
    for name in ("lookup_order", "delete_all_orders", "x" * 500):
        metrics.observe_event(
            IterationEvent(
                status="done", iteration=1, tool_name=name, call_id="c", code="WEIRD", iter_elapsed=0.1
            )
        )
    metrics.observe_event(
        {
            "type": "iteration",
            "status": "done",
            "iteration": 2,
            "tool_name": "lookup_order",
            "call_id": "d",
            "error": "boom",
        }
    )
    samples = {
        (s.name, frozenset(s.labels.items())): s.value for f in metrics.registry.collect() for s in f.samples
    }
    assert value(samples, "arca_tool_calls_total", tool="lookup_order", code="other") == 1
    assert value(samples, "arca_tool_calls_total", tool="other", code="other") == 2
    assert value(samples, "arca_tool_calls_total", tool="lookup_order", code="ERROR") == 1
    assert value(samples, "arca_errors_total", where="tool", kind="lookup_order") == 1


def test_metrics_live_in_their_own_registry_and_error_logs_are_counted() -> None:
    first, second = ArcaMetrics(), ArcaMetrics()  # two in one process must not collide
    first.runs.labels("final_answer").inc()
    assert first.registry.get_sample_value("arca_runs_total", {"stopped_reason": "final_answer"}) == 1
    assert REGISTRY.get_sample_value("arca_runs_total", {"stopped_reason": "final_answer"}) is None
    handler = ErrorCountingHandler(first)
    log = logging.getLogger("bot.conversations")
    log.addHandler(handler)
    try:
        log.error("run failed on discord:1")
        log.warning("only a warning")
    finally:
        log.removeHandler(handler)
    samples = {
        (s.name, frozenset(s.labels.items())): s.value for f in first.registry.collect() for s in f.samples
    }
    assert value(samples, "arca_errors_total", where="log", kind="bot.conversations") == 1
    assert b"arca_errors_total{" not in second.exposition()


async def test_the_renderer_times_sends_and_edits_and_counts_failures() -> None:
    metrics = ArcaMetrics()
    surface = RecordingSurface(fail_all_edits=True)
    run = RunInfo("run-1", "test:edits", Actor(discord_id="9001"), "ko")
    renderer = Renderer(
        surface, edit_interval=0.0, on_call=FanOut([MetricsHooks(metrics)]).surface_calls(run)
    )
    await renderer.status("⏳ 주문 확인 중")
    # The edit to the answer fails, so the answer lands as a new message; blanking the status
    # message (this surface cannot delete) fails too.
    await renderer.finish("ORD001은 배송 지연 상태입니다.")
    assert surface.messages == {0: "⏳ 주문 확인 중", 1: "ORD001은 배송 지연 상태입니다."}
    samples = {
        (s.name, frozenset(s.labels.items())): s.value for f in metrics.registry.collect() for s in f.samples
    }
    assert value(samples, "arca_message_edit_duration_seconds_count", op="send") == 2
    assert value(samples, "arca_message_edit_duration_seconds_count", op="edit") == 2
    assert value(samples, "arca_errors_total", where="edit", kind="edit") == 2


@pytest.mark.slow
def test_observability_and_the_tools_import_nothing_from_the_layers_above_them() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, bot.observability, tools.base, tools.ledger;"
        "print(sorted(m for m in sys.modules if m.startswith(('bot.engine', 'bot.conversations', 'bot.players', 'bot.staffroom'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
