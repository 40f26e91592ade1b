"""Reading a database URL (`ARCA_DB_URL`) the way the store's engine will: the SQLite file it names and
the password it carries, for the checks and log redaction that run before (or without) a store."""

from __future__ import annotations

from sqlalchemy.engine import make_url


def sqlite_file_of(url: str) -> str | None:
    """The file a SQLite URL names; None for another backend, an in-memory or `file:` URI database, or
    a URL that does not parse (the store reports that itself when it opens)."""
    try:
        parsed = make_url(url)
    except Exception:
        return None
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        return None
    return database


def password_of(url: str) -> str | None:
    """The password inside a database URL; None without one or for a URL that is not SQLAlchemy's
    (a Chroma http URL)."""
    try:
        password = make_url(url).password
    except Exception:
        return None
    return str(password) if password else None
