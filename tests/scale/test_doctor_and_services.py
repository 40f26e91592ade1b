"""`arca-bot doctor` on PostgreSQL, and the contract of scripts/services.sh (what CI evals)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.doctor import check_database
from bot.store import Store
from bot.store.models import SCHEMA_VERSION
from tests.support.scale import seed_ledger

REPO = Path(__file__).resolve().parents[2]
SERVICES = REPO / "scripts" / "services.sh"


@pytest.mark.postgres
async def test_doctor_reports_postgres_version_and_schema(pg_url: str, tmp_path: Path) -> None:
    store = Store(pg_url)
    await store.open()
    await seed_ledger(store)
    await store.close()
    check = await check_database(load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_DB_URL=pg_url))
    assert check.status == "ok", check.detail
    assert (
        check.detail.startswith("postgresql ")
        and f"schema v{SCHEMA_VERSION}" in check.detail
        and "2 players" in check.detail
    )


async def test_doctor_says_how_to_fix_an_unreachable_postgres(tmp_path: Path) -> None:
    url = "postgresql+asyncpg://bot:hunter2-secret@127.0.0.1:1/arca"
    check = await check_database(load_settings(ARCA_DATA_DIR=str(tmp_path), ARCA_DB_URL=url))
    assert check.status == "fail" and "hunter2-secret" not in check.detail
    assert "PostgreSQL" in check.fix and "ARCA_DB_URL" in check.fix


def test_services_script_prints_exactly_the_export_lines(tmp_path: Path) -> None:
    env = {**os.environ, "ARCA_PG_PORT": "55999", "ARCA_CHROMA_PORT": "8799"}
    done = subprocess.run(["bash", str(SERVICES), "env"], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "export ARCA_TEST_PG_URL=postgresql+asyncpg://arca@127.0.0.1:55999/arca_test",
        "export ARCA_TEST_CHROMA_URL=http://127.0.0.1:8799",
    ]


def test_services_script_rejects_an_unknown_command() -> None:
    done = subprocess.run(
        ["bash", str(SERVICES), "restart-everything"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "usage:" in done.stderr and done.stdout == ""


@pytest.mark.postgres
@pytest.mark.chroma_server
def test_services_status_sees_both_services_up() -> None:
    # Only meaningful where the services were started by the script with its default ports.
    done = subprocess.run(["bash", str(SERVICES), "status"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "PostgreSQL: up" in done.stderr and "Chroma server: up" in done.stderr
