"""Operations: structured logs that carry thread_id / run_id / tool / code on every line, secret
redaction, and Prometheus metrics (own registry, optional `/metrics` endpoint) fed by hooks.

The parts: the log context fields live in the shared vocabulary (`bot.vocabulary.log_context`, so
every layer can set them); `logging_setup` (handler, formatters, redaction); `metrics` (`ArcaMetrics`,
whose `observe_event` is a `Conversations` event hook and whose `on_llm_call` / `record_edit_latency`
are the hooks the models (`bot.llm.hooks`) and the `Renderer` call, and the endpoint). Nothing here
imports the engine, conversations or channels.
"""

from bot.observability.logging_setup import (
    NOISY_LOGGERS,
    ContextFilter,
    JsonFormatter,
    SecretRedactor,
    TextFormatter,
    configure_logging,
    secret_values,
)
from bot.observability.metrics import (
    RESULT_CODES,
    ArcaMetrics,
    ErrorCountingHandler,
    MetricsServer,
    metrics_from_settings,
    start_metrics_server,
)
from bot.vocabulary.log_context import LOG_FIELDS, current_log_context, log_context

__all__ = [
    "LOG_FIELDS",
    "NOISY_LOGGERS",
    "RESULT_CODES",
    "ArcaMetrics",
    "ContextFilter",
    "ErrorCountingHandler",
    "JsonFormatter",
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
