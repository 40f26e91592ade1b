"""The policy index: chunks of policies/ in a Chroma collection, searched densely plus a tuned lexical signal.

`PolicyIndex` owns the Chroma client, the embedder and the in-memory BM25 over the same chunks. Every
Chroma and embedder call runs on one dedicated worker thread in the async API, so embedding never
blocks the event loop and the (not thread-safe) model is used by one thread at a time.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import numpy as np

from bot.knowledge.documents import Chunk, KnowledgeError, chunk_documents, load_policies
from bot.knowledge.embedders import Embedder, make_embedder
from bot.knowledge.lexical import AliasTable, LexicalIndex

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)

COLLECTION_NAME = "arca_policies"
INDEX_FORMAT = 1
"""Bump when chunking or stored metadata change: an index of another format is rebuilt."""

DEFAULT_LEXICAL_WEIGHT = 0.03
"""Weight of the max-normalised BM25 score added to the dense cosine. Tuned on
tests/retrieval_eval.yaml with bench/retrieval.py over both the shipped corpus and its Korean-only
variant; pure dense (0.0) is the baseline it must not fall below (tests/knowledge checks that).
Measured: recall@3 0.86 → 0.94 on the shipped corpus, 0.73 → 0.88 on its Korean-only variant."""

CANDIDATES = 40
"""How many dense and how many lexical candidates are re-scored; far more than any top_k we serve."""

EMBED_BATCH = 16
UPSERT_BATCH = 512
"""Chroma writes are much cheaper in large batches than per embedding batch."""


class EmptyQueryError(KnowledgeError, ValueError):
    """The search query is empty or only whitespace."""


@dataclass(frozen=True)
class PolicyHit:
    """One retrieved policy passage, with what a citation needs."""

    source: str
    """The document's file name, e.g. `compensation.md`."""
    doc_id: str
    title: str
    section: str
    """The `##` heading, e.g. `2. 발급 한도`."""
    score: float
    """Dense cosine plus the weighted lexical signal; higher is better."""
    text: str
    lang: str

    @property
    def citation(self) -> str:
        """`[보상 정책 §2 발급 한도]`: the label an answer quotes."""
        section = self.section
        head, _, rest = section.partition(" ")
        if head.endswith(".") and head[:-1].isdigit() and rest:
            section = f"{head[:-1]} {rest}"
        return f"[{self.title} §{section}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReindexCounts:
    """What a (re)index did to the collection."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = False
    """True when the whole collection was rebuilt (new index, other embedder or format)."""

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged

    def __str__(self) -> str:
        how = "rebuilt" if self.rebuilt else "updated"
        return (
            f"index {how}: {self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.unchanged} unchanged ({self.total} chunks)"
        )


@dataclass(frozen=True)
class _Candidate:
    chunk_id: str
    metadata: dict[str, Any]
    text: str
    dense: float
    lexical: float


def _chroma_client(*, chroma_dir: Path | None, chroma_url: str | None) -> Any:
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


class PolicyIndex:
    """Build, update and search the policy knowledge base (the `PolicySearcher` of tools/base.py)."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        chroma_dir: Path | None = None,
        chroma_url: str | None = None,
        policies_dir: Path | None = None,
        collection_name: str = COLLECTION_NAME,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        aliases: AliasTable | None = None,
        min_score: float | None = None,
        client: Any = None,
    ) -> None:
        self.embedder = embedder
        self.policies_dir = Path(policies_dir) if policies_dir is not None else None
        self.collection_name = collection_name
        self.lexical_weight = lexical_weight
        self.aliases = aliases if aliases is not None else AliasTable.load()
        self.min_score = min_score if min_score is not None else embedder.min_relevance
        self._chroma_dir = Path(chroma_dir) if chroma_dir is not None else None
        self._chroma_url = chroma_url
        self._client = client
        self._collection: Any = None
        self._lexical: LexicalIndex | None = None
        self._built_at: str | None = None
        self._lock = threading.RLock()
        self._executor: ThreadPoolExecutor | None = None
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def from_settings(
        cls, settings: Settings, embedder: Embedder | None = None, **kwargs: Any
    ) -> PolicyIndex:
        """The index the settings describe: Chroma server or `<data dir>/chroma`, `ARCA_EMBEDDING_MODEL`."""
        return cls(
            embedder if embedder is not None else make_embedder(settings),
            chroma_dir=settings.chroma_dir,
            chroma_url=settings.chroma_url,
            policies_dir=settings.policies_dir,
            **kwargs,
        )

    # ---- collection -----------------------------------------------------------------------

    def _chroma(self) -> Any:
        if self._client is None:
            self._client = _chroma_client(chroma_dir=self._chroma_dir, chroma_url=self._chroma_url)
        return self._client

    def _expected_metadata(self) -> dict[str, str | int]:
        return {"embedder": self.embedder.name, "dim": int(self.embedder.dim), "format": INDEX_FORMAT}

    def _existing_collection(self) -> Any | None:
        from chromadb.errors import NotFoundError

        try:
            # embedding_function=None: we always pass vectors, and Chroma's default function would
            # try to download a model the first time anything asked it to embed.
            return self._chroma().get_collection(self.collection_name, embedding_function=None)
        except (NotFoundError, ValueError):
            return None

    def _matches(self, collection: Any) -> bool:
        meta = collection.metadata or {}
        return all(meta.get(k) == v for k, v in self._expected_metadata().items())

    def _create_collection(self, extra: dict[str, Any]) -> Any:
        return self._chroma().create_collection(
            self.collection_name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={**self._expected_metadata(), **extra},
        )

    def _open(self) -> Any | None:
        """The current collection if it exists and was built by this embedder, else None."""
        if self._collection is None:
            collection = self._existing_collection()
            if collection is not None and self._matches(collection):
                self._collection = collection
        return self._collection

    def is_built(self) -> bool:
        with self._lock:
            collection = self._open()
            return collection is not None and collection.count() > 0

    def count(self) -> int:
        with self._lock:
            collection = self._open()
            return 0 if collection is None else int(collection.count())

    # ---- indexing -------------------------------------------------------------------------

    def reindex(self, policies_dir: Path | None = None) -> ReindexCounts:
        """Make the index hold exactly the documents of `policies_dir`, re-embedding changed chunks only.

        Defaults to the directory the index was last built from (or the configured one). A collection
        built by another embedder or index format is dropped and rebuilt in full. The documents are
        all parsed before the index is touched, so a malformed file leaves the index as it was.
        """
        directory = Path(policies_dir) if policies_dir is not None else self._remembered_dir()
        chunks = chunk_documents(load_policies(directory))
        with self._lock:
            return self._sync(chunks, directory)

    def build(self, policies_dir: Path) -> ReindexCounts:
        """Index `policies_dir` (incrementally when an index of the same embedder exists)."""
        return self.reindex(policies_dir)

    def ensure_built(self, policies_dir: Path | None = None) -> ReindexCounts | None:
        """Build from `policies_dir` when there is no usable index yet; an existing index is left as is."""
        with self._lock:
            if self.is_built():
                return None
            return self.reindex(policies_dir)

    def _remembered_dir(self) -> Path:
        collection = self._open()
        remembered = (collection.metadata or {}).get("policies_dir") if collection is not None else None
        if remembered:
            return Path(remembered)
        if self.policies_dir is not None:
            return self.policies_dir
        raise KnowledgeError("no policy directory given and none recorded in the index")

    def _sync(self, chunks: list[Chunk], directory: Path) -> ReindexCounts:
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise KnowledgeError("two chunks share an id; policy file names must be unique")
        extra = {"policies_dir": str(directory.resolve()), "built_at": datetime.now(UTC).isoformat()}
        rebuilt = False
        collection = self._existing_collection()
        if collection is not None and not self._matches(collection):
            old = collection.metadata or {}
            log.info(
                "policy index was built by %s (dim %s, format %s); rebuilding for %s",
                old.get("embedder"),
                old.get("dim"),
                old.get("format"),
                self.embedder.name,
            )
            self._chroma().delete_collection(self.collection_name)
            collection = None
        if collection is None:
            collection = self._create_collection(extra)
            rebuilt = True
        self._collection = collection

        existing = collection.get(include=["metadatas"])
        stored = {
            i: (m or {}).get("hash")
            for i, m in zip(existing["ids"], existing["metadatas"] or [], strict=False)
        }
        wanted = {c.chunk_id: c for c in chunks}
        fresh = [c for c in chunks if c.chunk_id not in stored]
        changed = [c for c in chunks if c.chunk_id in stored and stored[c.chunk_id] != c.content_hash]
        removed = [i for i in stored if i not in wanted]

        to_embed = fresh + changed
        for start in range(0, len(to_embed), UPSERT_BATCH):
            batch = to_embed[start : start + UPSERT_BATCH]
            vectors = np.concatenate(
                [
                    self.embedder.embed_passages([c.passage for c in batch[i : i + EMBED_BATCH]])
                    for i in range(0, len(batch), EMBED_BATCH)
                ]
            )
            collection.upsert(
                ids=[c.chunk_id for c in batch],
                embeddings=vectors,
                documents=[c.text for c in batch],
                metadatas=[c.metadata() for c in batch],
            )
        if removed:
            collection.delete(ids=removed)
        collection.modify(metadata={**self._expected_metadata(), **extra})
        self._set_lexical(chunks)
        self._built_at = extra["built_at"]
        counts = ReindexCounts(
            added=len(fresh),
            updated=len(changed),
            removed=len(removed),
            unchanged=len(chunks) - len(to_embed),
            rebuilt=rebuilt,
        )
        log.info("%s from %s", counts, directory)
        return counts

    def _set_lexical(self, chunks: Sequence[Chunk]) -> None:
        self._lexical = LexicalIndex(
            [c.chunk_id for c in chunks], [f"{c.title} {c.section}\n{c.text}" for c in chunks]
        )

    def _lexical_index(self, collection: Any) -> LexicalIndex:
        if self._lexical is None:
            got = collection.get(include=["documents", "metadatas"])
            texts = [
                f"{(m or {}).get('title', '')} {(m or {}).get('section', '')}\n{d or ''}"
                for d, m in zip(got["documents"], got["metadatas"], strict=False)
            ]
            self._lexical = LexicalIndex(got["ids"], texts)
        return self._lexical

    # ---- search ---------------------------------------------------------------------------

    def _query_vector(self, query: str) -> np.ndarray:
        cached = self._query_cache.get(query)
        if cached is not None:
            self._query_cache.move_to_end(query)
            return cached
        vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        self._query_cache[query] = vector
        if len(self._query_cache) > 512:
            self._query_cache.popitem(last=False)
        return vector

    def _current(self) -> Any | None:
        """The collection as it is now: another process (`arca-bot index`, a second bot) may have
        rebuilt or updated it since we opened it, which `built_at` in its metadata tells."""
        collection = self._existing_collection()
        if collection is None or not self._matches(collection):
            self._collection = self._lexical = self._built_at = None
            return None
        stamp = (collection.metadata or {}).get("built_at")
        if stamp != self._built_at:
            self._lexical, self._built_at = None, stamp
        self._collection = collection
        return collection

    def _candidates(self, query: str) -> list[_Candidate]:
        """Dense top candidates ∪ lexical top candidates, each with both raw scores."""
        collection = self._current()
        if collection is None:
            return []
        total = collection.count()
        if total == 0:
            return []
        vector = self._query_vector(query)
        found = collection.query(
            query_embeddings=[vector],
            n_results=min(CANDIDATES, total),
            include=["metadatas", "documents", "distances"],
        )
        rows: dict[str, dict[str, Any]] = {}
        for cid, meta, doc, dist in zip(
            found["ids"][0], found["metadatas"][0], found["documents"][0], found["distances"][0], strict=False
        ):
            rows[cid] = {"metadata": meta or {}, "text": doc or "", "dense": 1.0 - float(dist)}

        lexical = self._lexical_index(collection)
        lexical_query = self.aliases.expand(query)
        lexical_top = dict(lexical.top(lexical_query, CANDIDATES))
        missing = [cid for cid in lexical_top if cid not in rows]
        if missing:
            got = collection.get(ids=missing, include=["metadatas", "documents", "embeddings"])
            embeddings = np.asarray(got["embeddings"], dtype=np.float32)
            for i, cid in enumerate(got["ids"]):
                rows[cid] = {
                    "metadata": got["metadatas"][i] or {},
                    "text": got["documents"][i] or "",
                    "dense": float(embeddings[i] @ vector),
                }
        lexical_scores = lexical.score_ids(lexical_query, rows)
        return [
            _Candidate(cid, row["metadata"], row["text"], row["dense"], lexical_scores.get(cid, 0.0))
            for cid, row in rows.items()
        ]

    def search_sync(
        self,
        query: str,
        top_k: int = 3,
        *,
        lexical_weight: float | None = None,
        min_score: float | None = None,
    ) -> list[PolicyHit]:
        """The `top_k` best passages for `query` whose dense similarity clears the relevance floor."""
        query = (query or "").strip()
        if not query:
            raise EmptyQueryError("the search query is empty")
        top_k = max(1, int(top_k))
        weight = self.lexical_weight if lexical_weight is None else lexical_weight
        floor = self.min_score if min_score is None else min_score
        with self._lock:
            candidates = self._candidates(query)
        if not candidates:
            return []
        best_lexical = max(c.lexical for c in candidates)

        def combined(c: _Candidate) -> float:
            lexical = c.lexical / best_lexical if best_lexical > 0 else 0.0
            return c.dense + weight * lexical

        # The floor applies to the dense score alone: the lexical part is normalised per query, so
        # even a nonsense question would get a full lexical bonus on its best-matching chunk.
        ranked = sorted((c for c in candidates if c.dense >= floor), key=combined, reverse=True)
        return [
            PolicyHit(
                source=str(c.metadata.get("source", "")),
                doc_id=str(c.metadata.get("doc_id", "")),
                title=str(c.metadata.get("title", "")),
                section=str(c.metadata.get("section", "")),
                score=round(combined(c), 4),
                text=c.text,
                lang=str(c.metadata.get("lang", "")),
            )
            for c in ranked[:top_k]
        ]

    # ---- async API (the bot) --------------------------------------------------------------

    def _worker(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-index")
        return self._executor

    async def search(self, query: str, top_k: int = 3) -> list[PolicyHit]:
        """`search_sync` on the index's own worker thread, so the event loop keeps running."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), lambda: self.search_sync(query, top_k))

    async def areindex(self, policies_dir: Path | None = None) -> ReindexCounts:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), lambda: self.reindex(policies_dir))

    async def aensure_built(self, policies_dir: Path | None = None) -> ReindexCounts | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), lambda: self.ensure_built(policies_dir))

    def close(self) -> None:
        """Stop the worker thread; the Chroma data stays on disk."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
