"""The Chroma side of the policy index: the client (embedded folder or server) and its collection.

An embedded index lives in `<data dir>/chroma`. When that folder is deleted under a running process,
Chroma's cached client keeps reading the deleted files and refuses writes ("attempt to write a
readonly database"); `ChromaStore.check_folder` notices the missing folder and drops the cached
client, so the next reindex creates a fresh index there.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bot.knowledge.documents import KnowledgeError

log = logging.getLogger(__name__)

SQLITE_FILE = "chroma.sqlite3"


class IndexFolderMissing(KnowledgeError):
    """The embedded index folder was deleted while the process had it open."""


def _client(*, chroma_dir: Path | None, chroma_url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_url:
        url = urlparse(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
        if not url.hostname:
            raise KnowledgeError(f"ARCA_CHROMA_URL is not a URL: {chroma_url!r}")
        ssl = url.scheme == "https"
        return chromadb.HttpClient(
            host=url.hostname, port=url.port or (443 if ssl else 8000), ssl=ssl, settings=chroma_settings
        )
    if chroma_dir is None:
        raise KnowledgeError("no Chroma location: set a data dir or ARCA_CHROMA_URL")
    chroma_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(chroma_dir), settings=chroma_settings)


def _forget_cached_system(path: str) -> None:
    """Chroma shares one system per folder in the process; a deleted folder's system must go."""
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(path, None)
    SharedSystemClient._identifier_to_refcount.pop(path, None)
    if system is not None:
        try:
            system.stop()
        except Exception:  # the files are gone; stopping is best effort
            log.debug("stopping the stale Chroma system failed", exc_info=True)


class ChromaStore:
    """One Chroma collection, opened lazily, with the metadata that says how it was built."""

    def __init__(
        self, *, chroma_dir: Path | None, chroma_url: str | None, collection_name: str, client: Any = None
    ) -> None:
        self.chroma_dir = Path(chroma_dir) if chroma_dir is not None else None
        self.chroma_url = chroma_url
        self.collection_name = collection_name
        self._client = client
        self._opened = False

    def client(self) -> Any:
        if self._client is None:
            self._client = _client(chroma_dir=self.chroma_dir, chroma_url=self.chroma_url)
            self._opened = True
        return self._client

    def folder_missing(self) -> bool:
        """True when an embedded index this process opened has since been deleted from disk."""
        if self.chroma_url or self.chroma_dir is None or not self._opened:
            return False
        return not (self.chroma_dir / SQLITE_FILE).is_file()

    def check_folder(self) -> None:
        """Raise `IndexFolderMissing` (after dropping the stale client) when the folder was deleted."""
        if self.folder_missing():
            assert self.chroma_dir is not None
            log.warning("the policy index folder %s was deleted; it will be rebuilt", self.chroma_dir)
            self.reset()
            raise IndexFolderMissing(
                f"the policy index folder {self.chroma_dir} was deleted; rebuild it with "
                "`/policy reindex` or `arca-bot index`"
            )

    def reset(self) -> None:
        if self.chroma_dir is not None and not self.chroma_url:
            _forget_cached_system(str(self.chroma_dir))
        self._client = None
        self._opened = False

    def get(self) -> Any | None:
        from chromadb.errors import NotFoundError

        try:
            # embedding_function=None: we always pass vectors, and Chroma's default function would
            # try to download a model the first time anything asked it to embed.
            return self.client().get_collection(self.collection_name, embedding_function=None)
        except (NotFoundError, ValueError):
            return None

    def create(self, metadata: dict[str, Any]) -> Any:
        return self.client().create_collection(
            self.collection_name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=metadata,
        )

    def delete(self) -> None:
        self.client().delete_collection(self.collection_name)
