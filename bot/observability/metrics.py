"""Prometheus metrics in the bot's own registry, fed by hooks: engine events (`observe_event`), LLM calls
(`on_llm_call`), channel sends and edits (`record_edit_latency`) and error log records; and the
optional `/metrics` endpoint."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server

from bot.vocabulary.result_codes import RESULT_CODES

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from bot.config import Settings


def _fields(event: Any) -> Callable[[str], Any]:
    """Read an event's fields by name, from an event model or from a mapping (its JSON form)."""
    if isinstance(event, Mapping):
        return event.get
    return lambda name: getattr(event, name, None)


_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0)
_EDIT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0)

log = logging.getLogger(__name__)


class ArcaMetrics:
    """The bot's Prometheus metrics in their own `CollectorRegistry` (never the global default one,
    so tests and several bots in one process do not collide)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, *, known_tools: Iterable[str] | None = None
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.known_tools = frozenset(known_tools) if known_tools is not None else None
        """When set, tool names outside it (a model inventing tools) are counted as `other`."""
        r = self.registry
        self.runs = Counter(
            "arca_runs", "Agent runs finished, by why the loop stopped", ["stopped_reason"], registry=r
        )
        self.iterations = Counter(
            "arca_iterations", "Tool-loop iterations (loop LLM calls) started", registry=r
        )
        self.run_iterations = Histogram(
            "arca_run_iterations",
            "Iterations one run took",
            buckets=(1, 2, 3, 4, 5, 8, 13, 21, 34, 50, 100),
            registry=r,
        )
        self.run_duration = Histogram(
            "arca_run_duration_seconds", "Tool-loop duration of a run", buckets=_LATENCY_BUCKETS, registry=r
        )
        self.tool_calls = Counter(
            "arca_tool_calls", "Tool calls by tool and result code", ["tool", "code"], registry=r
        )
        self.tool_duration = Histogram(
            "arca_tool_duration_seconds",
            "Time a tool call took",
            ["tool"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_latency = Histogram(
            "arca_llm_request_duration_seconds",
            "LLM call duration (streams: until the last delta)",
            ["purpose"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_first_token = Histogram(
            "arca_llm_first_token_seconds",
            "Streaming LLM calls: time to the first delta",
            ["purpose"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.llm_tokens = Counter(
            "arca_llm_tokens",
            "Tokens the endpoint reported, by purpose and kind",
            ["purpose", "kind"],
            registry=r,
        )
        self.edit_latency = Histogram(
            "arca_message_edit_duration_seconds",
            "Channel message sends and edits (the streaming answer)",
            ["op"],
            buckets=_EDIT_BUCKETS,
            registry=r,
        )
        self.errors = Counter(
            "arca_errors", "Failures by where they happened and their kind", ["where", "kind"], registry=r
        )
        self.interrupts = Counter(
            "arca_interrupts_injected", "User interrupts injected into a run", registry=r
        )
        self.compactions = Counter("arca_context_compactions", "Context compactions", registry=r)
        self.facts_withheld = Counter(
            "arca_facts_withheld",
            "Answer sentences the fact check withheld (mode=observe: would have withheld), by fact kind",
            ["kind", "mode"],
            registry=r,
        )
        self.shard_info = Gauge(
            "arca_shard_info",
            "Discord shards this process runs (value 1)",
            ["shard_ids", "shard_count"],
            registry=r,
        )

    # ---- label hygiene ----

    def _tool_label(self, name: str) -> str:
        if self.known_tools is not None and name not in self.known_tools:
            return "other"
        return name[:64] if re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", name or "") else "other"

    @staticmethod
    def _code_label(code: str | None) -> str:
        # DESIGN.md §5's codes only: label sets must stay bounded.
        return code if code in RESULT_CODES else "other"

    # ---- hooks ----

    def observe_event(self, event: Any) -> None:
        """A `Conversations` event hook: counts the engine's events and logs each tool call and run end.

        Synchronous and cheap; never raises (a metrics bug must not break a conversation).
        """
        try:
            self._observe(event)
        except Exception:  # the hook is on the hot path of every run
            log.exception("metrics: could not observe %r", getattr(event, "type", event))

    def _observe(self, event: Any) -> None:
        # Events are read by field name (an engine event model or its JSON form as a mapping), so
        # metrics need nothing from the engine: the event protocol is the contract.
        ev = _fields(event)
        kind = ev("type")
        if kind == "thinking" and ev("status") == "start":
            self.iterations.inc()
        elif kind == "iteration" and ev("status") == "done":
            code = ev("code") or ("ERROR" if ev("error") else "OK")
            tool = self._tool_label(str(ev("tool_name") or ""))
            self.tool_calls.labels(tool, self._code_label(code)).inc()
            if ev("iter_elapsed") is not None:
                self.tool_duration.labels(tool).observe(ev("iter_elapsed"))
            if code == "ERROR":
                self.errors.labels("tool", tool).inc()
            # The log line of each call comes from ToolRegistry.execute (with tool and code in context).
        elif kind == "done":
            stopped, iterations, elapsed = str(ev("stopped_reason")), ev("iterations"), ev("elapsed")
            self.runs.labels(stopped[:32]).inc()
            self.run_iterations.observe(iterations)
            self.run_duration.observe(elapsed)
            log.info(
                "run done: %s iteration(s), %.2fs, stopped by %s",
                iterations,
                elapsed,
                stopped,
                extra={"tokens": (ev("usage") or {}).get("total_tokens", 0)},
            )
        elif kind == "inject":
            self.interrupts.inc()
        elif kind == "compact":
            self.compactions.inc()

    def on_llm_call(
        self,
        purpose: str,
        seconds: float,
        *,
        first_token: float | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        error_kind: str | None = None,
    ) -> None:
        """The LLM hook: one finished call (a stream: after its last delta) with latency, time to the
        first delta, tokens booked for it, and the failure kind when it raised."""
        self.llm_latency.labels(purpose).observe(seconds)
        if first_token is not None:
            self.llm_first_token.labels(purpose).observe(first_token)
        if prompt_tokens > 0:
            self.llm_tokens.labels(purpose, "prompt").inc(prompt_tokens)
        if completion_tokens > 0:
            self.llm_tokens.labels(purpose, "completion").inc(completion_tokens)
        if error_kind is not None:
            self.errors.labels("llm", error_kind[:32]).inc()

    def record_edit_latency(self, seconds: float, *, op: str = "edit", ok: bool = True) -> None:
        """The surface hook: one channel message `send`, `edit` or `react` took `seconds`."""
        self.edit_latency.labels(op if op in ("send", "edit", "react") else "other").observe(
            max(seconds, 0.0)
        )
        if not ok:
            self.errors.labels("edit", op).inc()

    def record_fact_withheld(self, kind: str, mode: str) -> None:
        """Count one sentence the output guard's fact check withheld (or, observing, would have)."""
        self.facts_withheld.labels(kind[:16], mode[:8]).inc()

    def record_error(self, where: str, kind: str) -> None:
        """Count a failure that no event shows (a run that raised, a synthesis that broke)."""
        self.errors.labels(where[:32], kind[:32]).inc()

    def set_shards(self, shard_ids: Iterable[int], shard_count: int | None) -> None:
        ids = ",".join(str(i) for i in shard_ids) or "all"
        self.shard_info.labels(ids, str(shard_count or "auto")).set(1)

    def exposition(self) -> bytes:
        """The text a scrape of `/metrics` returns."""
        return generate_latest(self.registry)


class ErrorCountingHandler(logging.Handler):
    """Counts every ERROR-or-worse log record as `arca_errors_total{where="log", kind=<logger>}`.

    Attach to the root logger: failures that are only logged (a run that raised, a broken staff sink)
    become visible in metrics without touching the code that logs them.
    """

    def __init__(self, metrics: ArcaMetrics) -> None:
        super().__init__(level=logging.ERROR)
        self.metrics = metrics

    def emit(self, record: logging.LogRecord) -> None:
        top = ".".join(record.name.split(".")[:2])
        self.metrics.record_error("log", top)


# ---- /metrics endpoint -------------------------------------------------------------------------------


@dataclass
class MetricsServer:
    """The running `/metrics` HTTP endpoint (a daemon thread of prometheus-client's WSGI server)."""

    httpd: WSGIServer
    host: str

    @property
    def port(self) -> int:
        return int(self.httpd.server_port)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def start_metrics_server(metrics: ArcaMetrics, port: int, host: str = "127.0.0.1") -> MetricsServer:
    """Serve `metrics` on http://host:port/metrics (port 0: any free port). Loopback by default:
    expose it further only behind your Prometheus network."""
    httpd, _thread = start_http_server(port, addr=host, registry=metrics.registry)
    return MetricsServer(httpd=httpd, host=host)


def metrics_from_settings(
    settings: Settings, *, known_tools: Iterable[str] | None = None
) -> tuple[ArcaMetrics, MetricsServer | None]:
    """The process's metrics, and its endpoint when `ARCA_METRICS_PORT` is set."""
    metrics = ArcaMetrics(known_tools=known_tools)
    metrics.set_shards(settings.shard_ids, settings.shard_count)
    server = None
    if settings.metrics_port is not None:
        server = start_metrics_server(metrics, settings.metrics_port, settings.metrics_host)
        log.info("metrics on %s", server.url)
    return metrics, server
