"""Logging: one stderr handler, text or JSON lines, every line carrying the log context fields
(thread_id, run_id, tool, code), and secrets redacted from messages and tracebacks."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from bot.vocabulary.log_context import LOG_FIELDS, context_fields

if TYPE_CHECKING:
    from bot.config import Settings

NOISY_LOGGERS = ("httpx", "httpcore", "chromadb", "discord.gateway", "aiosqlite", "asyncpg")


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
    # JWTs (web channel player tokens, visitor cookies): a base64url JSON header starts with "eyJ"
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), "***"),
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
    for secret in (settings.discord_token, settings.openai_api_key, settings.web_secret):
        if secret is not None:
            found.append(secret.get_secret_value())
    for model in settings.models.values():
        if model.api_key is not None:
            found.append(model.api_key.get_secret_value())
    for url in (settings.db_url, settings.chroma_url):
        if url:
            from bot.store.urls import password_of  # here: SQLAlchemy costs every command ~0.7 s to import

            password = password_of(url)  # None for a Chroma http URL: the URL pattern covers it
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
