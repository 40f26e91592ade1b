"""Operations: structured logs that carry thread_id / run_id / tool / code on every line, secret
redaction, and Prometheus metrics (own registry, optional `/metrics` endpoint) fed by engine events.

Hooks for the rest of the bot (nothing here imports conversations, engine or channels):
`configure_logging(settings)`, `log_context(thread_id=..., run_id=..., tool=..., code=...)`,
`ArcaMetrics.observe_event(event)` (a `Conversations` event hook), `MeteredLLM(llm, metrics)`,
`MeteredSurface(surface, metrics)` / `ArcaMetrics.record_edit_latency(...)`, `start_metrics_server(...)`.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server
from sqlalchemy.engine import make_url

from bot.vocabulary.log_context import LOG_FIELDS, context_fields, current_log_context, log_context

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from bot.config import Settings

NOISY_LOGGERS = ("httpx", "httpcore", "chromadb", "discord.gateway", "aiosqlite", "asyncpg")


# ---- log context ------------------------------------------------------------------------------------


class ContextFilter(logging.Filter):
    """Copies the current `log_context` onto each record (`record.thread_id`, …) unless `extra=` set it."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = context_fields()
        for key in LOG_FIELDS:
            if getattr(record, key, None) is None:
                setattr(record, key, ctx.get(key))
        for key, value in ctx.items():
            if key not in LOG_FIELDS and not hasattr(record, key):
                setattr(record, key, value)
        return True


# ---- secrets ---------------------------------------------------------------------------------------

_PATTERNS = (
    # OpenAI-style keys
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{12,}"), "sk-***"),
    # Discord bot tokens: three base64url parts separated by dots
    (re.compile(r"\b[A-Za-z0-9_\-]{23,28}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,}"), "***"),
    # Passwords inside URLs: scheme://user:password@host
    (re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/\s@]*:)[^@\s/]+@"), r"\g<head>***@"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-]{8,}"), r"\1***"),
)


class SecretRedactor:
    """Replaces known secret values and secret-shaped strings (API keys, bot tokens, URL passwords)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret that contains another is replaced whole.
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text


def secret_values(settings: Settings) -> list[str]:
    """Every secret the settings hold: tokens, API keys, passwords inside the database / Chroma URLs."""
    found: list[str] = []
    for secret in (settings.discord_token, settings.openai_api_key):
        if secret is not None:
            found.append(secret.get_secret_value())
    for model in settings.models.values():
        if model.api_key is not None:
            found.append(model.api_key.get_secret_value())
    for url in (settings.db_url, settings.chroma_url):
        if url:
            try:
                password = make_url(url).password
            except Exception:  # not an SQLAlchemy URL (a Chroma http URL): the URL pattern covers it
                password = None
            if password:
                found.append(str(password))
    return [s.strip() for s in found if s and s.strip()]


# ---- formatters ------------------------------------------------------------------------------------

_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None)).keys()
    | {"message", "asctime", "taskName", *LOG_FIELDS}
)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, thread_id, run_id, tool, code (+ extras)."""

    def __init__(self, redactor: SecretRedactor | None = None) -> None:
        super().__init__()
        self.redact = redactor or SecretRedactor()

    def format(self, record: logging.LogRecord) -> str:
        ctx = context_fields()
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": self.redact(record.getMessage()),
        }
        for key in LOG_FIELDS:
            value = getattr(record, key, None)
            entry[key] = value if value is not None else ctx.get(key)
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = self._plain(value)
        if record.exc_info:
            entry["exc"] = self.redact(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exc"] = self.redact(record.exc_text)
        return json.dumps(entry, ensure_ascii=False, default=str)

    def _plain(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, int | float | bool) or value is None:
            return value
        return self.redact(str(value))


class TextFormatter(logging.Formatter):
    """The human format, with the context fields appended as `key=value` and secrets redacted."""

    def __init__(self, redactor: SecretRedactor | None = None) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self.redact = redactor or SecretRedactor()

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ctx = context_fields()
        fields = []
        for key in LOG_FIELDS:
            value = getattr(record, key, None) or ctx.get(key)
            if value:
                fields.append(f"{key}={value}")
        if fields:
            head, sep, rest = text.partition("\n")
            text = f"{head} [{' '.join(fields)}]{sep}{rest}"
        return self.redact(text)


def configure_logging(
    settings: Settings | None = None,
    *,
    level: str | None = None,
    fmt: str | None = None,
    stream: TextIO | None = None,
    secrets: Iterable[str] = (),
) -> logging.Handler:
    """Install one stderr handler on the root logger: `ARCA_LOG_FORMAT` text or json, context, redaction.

    Replaces handlers a previous call installed (safe to call again, e.g. in tests).
    """
    level = (level or (settings.log_level if settings else "INFO")).upper()
    fmt = (fmt or (settings.log_format if settings else "text")).lower()
    redactor = SecretRedactor([*secrets, *(secret_values(settings) if settings else [])])
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter(redactor) if fmt == "json" else TextFormatter(redactor))
    handler._arca = True  # type: ignore[attr-defined]  # marks handlers this function owns
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_arca", False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level, logging.INFO))
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return handler


# ---- metrics ---------------------------------------------------------------------------------------

RESULT_CODES = frozenset(
    {
        "OK",
        "ISSUED",
        "ORDER_NOT_FOUND",
        "NOT_LINKED",
        "NOT_ELIGIBLE_STATUS",
        "INVALID_AMOUNT",
        "AMOUNT_OVER_LIMIT",
        "ALREADY_ISSUED",
        "DAILY_LIMIT_REACHED",
        "PENDING_APPROVAL",
        "DENIED",
        "ERROR",
    }
)
"""DESIGN.md §5; a label value outside this set becomes `other` (label sets must stay bounded)."""

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
        if isinstance(event, Mapping):
            from bot.engine.events import event_adapter

            event = event_adapter.validate_python(event)
        kind = getattr(event, "type", None)
        if kind == "thinking" and event.status == "start":
            self.iterations.inc()
        elif kind == "iteration" and event.status == "done":
            code = event.code or ("ERROR" if event.error else "OK")
            tool = self._tool_label(event.tool_name)
            self.tool_calls.labels(tool, self._code_label(code)).inc()
            if event.iter_elapsed is not None:
                self.tool_duration.labels(tool).observe(event.iter_elapsed)
            if code == "ERROR":
                self.errors.labels("tool", tool).inc()
            # The log line of each call comes from ToolRegistry.execute (with tool and code in context).
        elif kind == "done":
            self.runs.labels(event.stopped_reason[:32]).inc()
            self.run_iterations.observe(event.iterations)
            self.run_duration.observe(event.elapsed)
            log.info(
                "run done: %s iteration(s), %.2fs, stopped by %s",
                event.iterations,
                event.elapsed,
                event.stopped_reason,
                extra={"tokens": event.usage.get("total_tokens", 0)},
            )
        elif kind == "inject":
            self.interrupts.inc()
        elif kind == "compact":
            self.compactions.inc()

    def record_edit_latency(self, seconds: float, *, op: str = "edit", ok: bool = True) -> None:
        """One channel message `send` or `edit` took `seconds` (call from the channel or `MeteredSurface`)."""
        self.edit_latency.labels(op if op in ("send", "edit", "react") else "other").observe(
            max(seconds, 0.0)
        )
        if not ok:
            self.errors.labels("edit", op).inc()

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


# ---- wrappers ---------------------------------------------------------------------------------------


class MeteredLLM:
    """Wraps any `LLM` (OpenAI or scripted): latency per purpose, tokens, errors. Everything else is
    delegated, so the engine and the replay runner see the wrapped model's own attributes."""

    def __init__(self, inner: Any, metrics: ArcaMetrics) -> None:
        self.inner = inner
        self.metrics = metrics
        # Token accounting from the model's cumulative `usage` (OpenAILLM keeps one, streams included):
        # each finished call books the growth since the last booking, so every token is counted once
        # even when runs share the model; without `usage`, a chat result's own usage is booked.
        self._booked = self._cumulative()

    @property
    def abilities(self) -> dict[str, Any]:
        return self.inner.abilities

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"MeteredLLM({self.inner!r})"

    def _cumulative(self) -> tuple[int, int] | None:
        usage = getattr(self.inner, "usage", None)
        if usage is None or not hasattr(usage, "prompt_tokens"):
            return None
        return int(usage.prompt_tokens), int(usage.completion_tokens)

    def _book(self, purpose: str, result_usage: Any = None) -> None:
        now = self._cumulative()
        if now is not None and self._booked is not None:
            prompt, completion = now[0] - self._booked[0], now[1] - self._booked[1]
            self._booked = now
        elif result_usage is not None:
            prompt = int(getattr(result_usage, "prompt_tokens", 0) or 0)
            completion = int(getattr(result_usage, "completion_tokens", 0) or 0)
        else:
            return
        if prompt > 0:
            self.metrics.llm_tokens.labels(purpose, "prompt").inc(prompt)
        if completion > 0:
            self.metrics.llm_tokens.labels(purpose, "completion").inc(completion)

    def _failed(self, purpose: str, exc: BaseException) -> None:
        self.metrics.errors.labels("llm", str(getattr(exc, "kind", type(exc).__name__))[:32]).inc()
        self._book(purpose)

    async def chat(self, messages: list[dict[str, Any]], *, purpose: str = "loop", **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            result = await self.inner.chat(messages, purpose=purpose, **kwargs)
        except Exception as exc:
            self.metrics.llm_latency.labels(purpose).observe(time.perf_counter() - start)
            self._failed(purpose, exc)
            raise
        self.metrics.llm_latency.labels(purpose).observe(time.perf_counter() - start)
        self._book(purpose, getattr(result, "usage", None))
        return result

    async def stream_chat(
        self, messages: list[dict[str, Any]], *, purpose: str = "synthesis"
    ) -> AsyncIterator[str]:
        start = time.perf_counter()
        first = True
        try:
            async for delta in self.inner.stream_chat(messages, purpose=purpose):
                if first:
                    self.metrics.llm_first_token.labels(purpose).observe(time.perf_counter() - start)
                    first = False
                yield delta
        except Exception as exc:
            self.metrics.llm_latency.labels(purpose).observe(time.perf_counter() - start)
            self._failed(purpose, exc)
            raise
        self.metrics.llm_latency.labels(purpose).observe(time.perf_counter() - start)
        self._book(purpose)


class MeteredSurface:
    """Wraps a channel `Surface` (send / edit / react): each call's latency goes to `record_edit_latency`."""

    def __init__(self, inner: Any, metrics: ArcaMetrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def _timed(self, op: str, call: Any) -> Any:
        start = time.perf_counter()
        try:
            result = await call
        except Exception:
            self.metrics.record_edit_latency(time.perf_counter() - start, op=op, ok=False)
            raise
        self.metrics.record_edit_latency(time.perf_counter() - start, op=op)
        return result

    async def send(self, text: str) -> Any:
        return await self._timed("send", self.inner.send(text))

    async def edit(self, handle: Any, text: str) -> None:
        await self._timed("edit", self.inner.edit(handle, text))

    async def react(self, ref: Any, emoji: str) -> None:
        await self._timed("react", self.inner.react(ref, emoji))


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


__all__ = [
    "LOG_FIELDS",
    "ArcaMetrics",
    "ContextFilter",
    "ErrorCountingHandler",
    "JsonFormatter",
    "MeteredLLM",
    "MeteredSurface",
    "MetricsServer",
    "SecretRedactor",
    "TextFormatter",
    "configure_logging",
    "current_log_context",
    "log_context",
    "metrics_from_settings",
    "secret_values",
    "start_metrics_server",
]
