"""The Chroma side of the policy index: the client (embedded folder or server) and its collection.

An embedded index lives in `<data dir>/chroma`. When that folder is deleted under a running process,
Chroma's cached client keeps reading the deleted files and refuses writes ("attempt to write a
readonly database"); `ChromaStore.check_folder` notices the missing folder and drops the cached
client, so the next reindex creates a fresh index there.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from bot.knowledge.documents import KnowledgeError

log = logging.getLogger(__name__)

SQLITE_FILE = "chroma.sqlite3"

SETTLED_S = 2.0
"""A file stamp is trusted only when the file was last written this long before it was taken: a file
system's clock ticks coarsely (a few ms, seconds on some), so a write in the same tick as the stamp's
could leave its time and size as they were."""

FileStamp = tuple[int, ...]
"""The embedded index's SQLite file's inode, size, modification and change times (ns), and its
write-ahead log's size and times (-1 without one)."""

Nearest = tuple[list[str], list[float]]
"""A vector's nearest chunks: their ids and cosine distances, nearest first."""


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
        self._sqlite = str(self.chroma_dir / SQLITE_FILE) if self.chroma_dir is not None else ""
        self._wal = f"{self._sqlite}-wal"
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

    def file_stamp(self) -> FileStamp | None:
        """A stamp of the embedded index's SQLite file (and of its write-ahead log, should Chroma ever
        keep one: today it commits into the file itself) that changes whenever anything writes to it;
        None when it cannot be trusted to: a Chroma server, a client handed in, a missing file, or a
        file changed within the last `SETTLED_S` seconds. Taken before the collection is read, an equal
        stamp later means nothing was written since that read."""
        if self.chroma_url or self.chroma_dir is None or not self._opened:
            return None
        try:
            main = os.stat(self._sqlite)
        except OSError:
            return None
        try:
            wal = os.stat(self._wal)
            wal_stamp = (wal.st_size, wal.st_mtime_ns, wal.st_ctime_ns)
        except OSError:
            wal_stamp = (-1, -1, -1)
        changed = max(main.st_mtime_ns, main.st_ctime_ns, wal_stamp[1], wal_stamp[2])
        if changed > time.time_ns() - int(SETTLED_S * 1e9):
            return None
        return (main.st_ino, main.st_size, main.st_mtime_ns, main.st_ctime_ns, *wal_stamp)

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


def nearest(collection: Any, vectors: list[np.ndarray], n_results: int) -> list[Nearest]:
    """The `n_results` nearest chunks of each vector, in one Chroma query for them all (ids and
    distances only; the texts come from the `ChunkSnapshot`)."""
    found = collection.query(query_embeddings=vectors, n_results=n_results, include=["distances"])
    return [
        (list(ids), [float(d) for d in dists])
        for ids, dists in zip(found["ids"], found["distances"], strict=True)
    ]


class ChunkSnapshot:
    """Every stored chunk's metadata, text and vector, read once per build of the index.

    A search asks Chroma only for the nearest ids and distances and takes the rest from here: fetching
    documents and metadatas with each query cost more than the HNSW search itself, and a lexical
    candidate Chroma did not return gets its dense similarity from the stored vector without a call.
    """

    def __init__(self, got: dict[str, Any]) -> None:
        self.ids: list[str] = list(got["ids"])
        self.metadatas: list[dict[str, Any]] = [
            m or {} for m in (got.get("metadatas") or [{}] * len(self.ids))
        ]
        self.documents: list[str] = [d or "" for d in (got.get("documents") or [""] * len(self.ids))]
        embeddings = got.get("embeddings")
        self.embeddings = np.asarray(embeddings if embeddings is not None else [], dtype=np.float32)
        self._position = {cid: i for i, cid in enumerate(self.ids)}

    @classmethod
    def read(cls, collection: Any) -> ChunkSnapshot:
        return cls(collection.get(include=["metadatas", "documents", "embeddings"]))

    def __len__(self) -> int:
        return len(self.ids)

    def cover(self, collection: Any, ids: list[str]) -> None:
        """Read chunks written after the snapshot (another process is mid-update) before they are used."""
        new = [cid for cid in dict.fromkeys(ids) if cid not in self._position]
        if not new:
            return
        got = collection.get(ids=new, include=["metadatas", "documents", "embeddings"])
        more = ChunkSnapshot(got)
        for cid, meta, doc in zip(more.ids, more.metadatas, more.documents, strict=True):
            self._position[cid] = len(self.ids)
            self.ids.append(cid)
            self.metadatas.append(meta)
            self.documents.append(doc)
        if len(more):
            self.embeddings = np.concatenate(
                [self.embeddings.reshape(-1, more.embeddings.shape[1]), more.embeddings]
            )

    def row(self, chunk_id: str) -> tuple[dict[str, Any], str]:
        """(metadata, text) of a chunk."""
        i = self._position[chunk_id]
        return self.metadatas[i], self.documents[i]

    def rows(self) -> list[tuple[dict[str, Any], str]]:
        """(metadata, text) of every chunk, in `ids` order."""
        return list(zip(self.metadatas, self.documents, strict=True))

    def similarity(self, chunk_id: str, vector: np.ndarray) -> float:
        """Cosine similarity of the stored (unit) vector with `vector` (unit): what Chroma reports as 1 - distance."""
        return float(self.embeddings[self._position[chunk_id]] @ vector)
