"""The storage part of `Settings`: the data directory, the database, the Chroma server, the policy
documents and the embedding model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from bot.config.sources import blank_is_none, env


class StorageSettings(BaseSettings):
    data_dir: Path = Field(default=Path("var"), validation_alias=env("ARCA_DATA_DIR"))
    db_url: str | None = Field(default=None, validation_alias=env("ARCA_DB_URL"))
    chroma_url: str | None = Field(default=None, validation_alias=env("ARCA_CHROMA_URL"))
    policies_dir: Path = Field(default=Path("policies"), validation_alias=env("ARCA_POLICIES_DIR"))
    embedding_model: str | None = Field(default=None, validation_alias=env("ARCA_EMBEDDING_MODEL"))

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
