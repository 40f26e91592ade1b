"""The test services: PostgreSQL and Chroma on loopback (`scripts/services.sh start` sets ARCA_TEST_PG_URL and
ARCA_TEST_CHROMA_URL), the SQLite / PostgreSQL parameter, and fresh databases on the server."""

from __future__ import annotations

import os
import uuid

import pytest
from sqlalchemy.engine import make_url

PG_ENV = "ARCA_TEST_PG_URL"
CHROMA_ENV = "ARCA_TEST_CHROMA_URL"
NEEDS = {"postgres": PG_ENV, "chroma_server": CHROMA_ENV}

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pg_admin_url() -> str:
    return os.environ[PG_ENV]


def asyncpg_dsn(url: str) -> str:
    """The libpq-style DSN asyncpg takes for an SQLAlchemy `postgresql+asyncpg://` URL."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def create_pg_database() -> str:
    """A fresh, empty database on the test server; returns its SQLAlchemy URL."""
    import asyncpg

    name = f"arca_t_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(asyncpg_dsn(pg_admin_url()))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return make_url(pg_admin_url()).set(database=name).render_as_string(hide_password=False)


async def drop_pg_database(url: str) -> None:
    import asyncpg

    name = make_url(url).database
    conn = await asyncpg.connect(asyncpg_dsn(pg_admin_url()))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
