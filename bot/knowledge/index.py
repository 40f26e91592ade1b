"""The policy index: chunks of a policies folder in a Chroma collection, searched densely (e5) and
lexically (BM25 over Korean morphemes and English stems), fused, with an abstain decision.

`PolicyIndex` owns the Chroma store, the embedder and the in-memory BM25 rebuilt from the stored terms.
Async searches run on a few worker threads (the loop never embeds; a long query does not hold up the
others), those that arrive together as one batch (`bot.knowledge.batching`); indexing on its own.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.knowledge.analysis import ANALYZER_VERSION, analyze_query, keyword_head
from bot.knowledge.background import BACKGROUND
from bot.knowledge.batching import QueryVectors, SearchBatcher, outcome_of
from bot.knowledge.chroma import ChromaStore, ChunkSnapshot, IndexFolderMissing, Nearest, nearest
from bot.knowledge.documents import Chunk, KnowledgeError, chunk_documents, load_policies
from bot.knowledge.embedders import Embedder, make_embedder
from bot.knowledge.fusion import DEFAULT_FUSION, Candidate, Evidence, FusionParams, dense_evidence, fuse
from bot.knowledge.hits import EmptyQueryError, PolicyHit, ReindexCounts
from bot.knowledge.lexical import LexicalIndex, chunk_terms

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)

COLLECTION_NAME = "arca_policies"
INDEX_FORMAT = 2
"""Bump when chunking, stored metadata or the analyzer change: an index of another format is rebuilt."""

CANDIDATES = 40
"""How many dense and how many lexical candidates are fused; far more than any top_k we serve."""

MAX_QUERY_CHARS = 2000
"""A query is cut to this first: no policy question needs more (the embedder caps it further)."""

EMBED_BATCH, UPSERT_BATCH = 16, 512
SEARCH_WORKERS, QUERY_CACHE, SEARCH_BATCH = 2, 512, 16

Progress = Callable[[int, int], None]
"""`progress(done, total)`: chunks embedded so far during a (re)index."""


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
        fusion: FusionParams = DEFAULT_FUSION,
        min_score: float | None = None,
        client: Any = None,
    ) -> None:
        self.embedder = embedder
        self.policies_dir = Path(policies_dir) if policies_dir is not None else None
        """The configured policies folder: the one source of truth for every reindex without a folder."""
        self.fusion = fusion
        self.min_score = min_score if min_score is not None else embedder.min_relevance
        """Dense similarity floor under which a passage is never returned (model scale)."""
        self.store = ChromaStore(
            chroma_dir=chroma_dir, chroma_url=chroma_url, collection_name=collection_name, client=client
        )
        self._collection: Any = None
        self._lexical: LexicalIndex | None = None
        self._chunks: ChunkSnapshot | None = None
        self._batch_nearest: dict[bytes, Nearest] = {}
        """The dense candidates of the vectors of the batch being searched (under `_lock`)."""
        self._batch_collection: Any = None  # checked once a batch (under `_lock`), not once a request
        self._built_at: str | None = None
        self._lock = threading.RLock()
        self._executors: dict[str, ThreadPoolExecutor] = {}
        self._query_vector = QueryVectors(embedder, QUERY_CACHE)
        """The query's vector; a repeated query is not embedded again (`cache_clear()` to empty)."""
        self._batcher: SearchBatcher[tuple[str, int], list[PolicyHit]] = SearchBatcher(
            self.search_many_sync,
            lambda: self._worker("search"),
            lanes=SEARCH_WORKERS,
            max_batch=SEARCH_BATCH,
        )
        self._cache_lock = threading.Lock()
        self._background_vectors: np.ndarray | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, embedder: Embedder | None = None, **kwargs: Any
    ) -> PolicyIndex:
        """The index the settings describe: Chroma server or `<data dir>/chroma`, `ARCA_EMBEDDING_MODEL`."""
        kwargs.setdefault("policies_dir", settings.policies_dir)
        return cls(
            embedder if embedder is not None else make_embedder(settings),
            chroma_dir=settings.chroma_dir,
            chroma_url=settings.chroma_url,
            **kwargs,
        )

    # ---- collection -----------------------------------------------------------------------

    def _expected_metadata(self) -> dict[str, str | int]:
        return {
            "embedder": self.embedder.name,
            "dim": int(self.embedder.dim),
            "format": INDEX_FORMAT,
            "analyzer": ANALYZER_VERSION,
        }

    def _matches(self, collection: Any) -> bool:
        meta = collection.metadata or {}
        return all(meta.get(k) == v for k, v in self._expected_metadata().items())

    def _open(self) -> Any | None:
        """The current collection if it exists and was built by this embedder, else None."""
        if self.store.folder_missing():
            self.store.reset()
            self._collection = self._lexical = self._built_at = None
        if self._collection is None:
            collection = self.store.get()
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

    def reindex(self, policies_dir: Path | None = None, *, progress: Progress | None = None) -> ReindexCounts:
        """Make the index hold exactly the documents of `policies_dir`, re-embedding changed chunks only.

        Defaults to the configured policies folder (the directory the index was last built from only
        when none is configured). A collection built by another embedder or index format, or whose
        folder was deleted, is rebuilt in full. The documents are all parsed before the index is
        touched, so a malformed file leaves the index as it was.
        """
        directory = Path(policies_dir) if policies_dir is not None else self._default_dir()
        chunks = chunk_documents(load_policies(directory))
        with self._lock:
            return self._sync(chunks, directory, progress)

    def build(self, policies_dir: Path, *, progress: Progress | None = None) -> ReindexCounts:
        return self.reindex(policies_dir, progress=progress)

    def ensure_built(
        self, policies_dir: Path | None = None, *, progress: Progress | None = None
    ) -> ReindexCounts | None:
        """Build from `policies_dir` when there is no usable index yet; an existing index is left as is."""
        with self._lock:
            if self.is_built():
                return None
            return self.reindex(policies_dir, progress=progress)

    def _default_dir(self) -> Path:
        if self.policies_dir is not None:
            return self.policies_dir
        collection = self._open()
        remembered = (collection.metadata or {}).get("policies_dir") if collection is not None else None
        if remembered:
            return Path(remembered)
        raise KnowledgeError("no policy directory given and none recorded in the index")

    def _fresh_collection(self, extra: dict[str, Any]) -> tuple[Any, bool]:
        if self.store.folder_missing():
            self.store.reset()  # the folder was deleted: a new client writes a new index there
        collection = self.store.get()
        if collection is not None and not self._matches(collection):
            old = collection.metadata or {}
            log.info(
                "policy index was built by %s (dim %s, format %s); rebuilding for %s",
                old.get("embedder"),
                old.get("dim"),
                old.get("format"),
                self.embedder.name,
            )
            self.store.delete()
            collection = None
        if collection is None:
            return self.store.create({**self._expected_metadata(), **extra}), True
        return collection, False

    def _sync(self, chunks: list[Chunk], directory: Path, progress: Progress | None) -> ReindexCounts:
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise KnowledgeError("two chunks share an id; policy file names must be unique")
        extra = {"policies_dir": str(directory.resolve()), "built_at": datetime.now(UTC).isoformat()}
        collection, rebuilt = self._fresh_collection(extra)
        self._collection = collection

        existing = collection.get(include=["metadatas"])
        stored = {
            i: (m or {}).get("hash")
            for i, m in zip(existing["ids"], existing["metadatas"] or [], strict=False)
        }
        wanted = {c.chunk_id for c in chunks}
        fresh = [c for c in chunks if c.chunk_id not in stored]
        changed = [c for c in chunks if c.chunk_id in stored and stored[c.chunk_id] != c.content_hash]
        removed = [i for i in stored if i not in wanted]

        to_embed = fresh + changed
        done = 0
        if progress is not None:
            progress(0, len(to_embed))
        for start in range(0, len(to_embed), UPSERT_BATCH):
            batch = to_embed[start : start + UPSERT_BATCH]
            vectors = []
            for i in range(0, len(batch), EMBED_BATCH):
                vectors.append(self.embedder.embed_passages([c.passage for c in batch[i : i + EMBED_BATCH]]))
                done += len(vectors[-1])
                if progress is not None:
                    progress(done, len(to_embed))
            collection.upsert(
                ids=[c.chunk_id for c in batch],
                embeddings=np.concatenate(vectors),
                documents=[c.text for c in batch],
                metadatas=[{**c.metadata(), **chunk_terms(c.title, c.section, c.text)} for c in batch],
            )
        if removed:
            collection.delete(ids=removed)
        collection.modify(metadata={**self._expected_metadata(), **extra})
        self._lexical, self._built_at = None, extra["built_at"]
        counts = ReindexCounts(
            added=len(fresh),
            updated=len(changed),
            removed=len(removed),
            unchanged=len(chunks) - len(to_embed),
            rebuilt=rebuilt,
        )
        log.info("%s from %s", counts, directory)
        return counts

    # ---- search ---------------------------------------------------------------------------

    def _current(self) -> Any | None:
        """The collection as it is now: another process (`arca-bot index`, a second bot) may have
        rebuilt or updated it since we opened it, which `built_at` in its metadata tells."""
        self.store.check_folder()
        collection = self.store.get()
        if collection is None or not self._matches(collection):
            self._collection = self._lexical = self._built_at = None
            return None
        stamp = (collection.metadata or {}).get("built_at")
        if stamp != self._built_at or self._lexical is None or self._chunks is None:
            self._chunks = ChunkSnapshot.read(collection)
            self._lexical = LexicalIndex.from_stored(self._chunks.ids, self._chunks.metadatas)
            self._built_at = stamp
        self._collection = collection
        return collection

    def warm_up(self) -> None:
        """Load the Korean analyzer and embed the background sentences now, not on a player's first
        question (together ~2 s)."""
        analyze_query("쿠폰")
        self._background()

    def _background(self) -> np.ndarray:
        """Vectors of the everyday sentences the abstain decision compares a query with (once)."""
        with self._cache_lock:
            if self._background_vectors is None:
                self._background_vectors = np.asarray(
                    self.embedder.embed_passages(list(BACKGROUND)), dtype=np.float32
                )
            return self._background_vectors

    def _candidates(
        self,
        vector: np.ndarray,
        terms: tuple[str, ...],
        heading_weight: float,
        *,
        head: str | None = None,
        head_weight: float = 0.0,
    ) -> tuple[list[Candidate], list[float], LexicalIndex | None, np.ndarray]:
        """Dense top candidates ∪ lexical top candidates, each with both raw scores; the dense scores
        of the dense top list and the BM25 of every chunk."""
        collection = self._batch_collection or self._current()
        total = 0 if self._lexical is None else len(self._lexical)
        if collection is None or total == 0 or self._lexical is None or self._chunks is None:
            return [], [], None, np.zeros(0, dtype=np.float32)
        found = self._batch_nearest.get(vector.tobytes())
        ids, distances = found or nearest(collection, [vector], min(CANDIDATES, total))[0]
        chunks = self._chunks
        chunks.cover(collection, ids)
        dense = {cid: 1.0 - float(dist) for cid, dist in zip(ids, distances, strict=True)}
        dense_scores = list(dense.values())

        lexical = self._lexical
        scores = lexical.scores(terms, heading_weight, head=head, head_weight=head_weight)
        top = [i for i in np.argsort(-scores)[:CANDIDATES] if scores[i] > 0]
        for i in top:
            if lexical.ids[i] not in dense:
                dense[lexical.ids[i]] = chunks.similarity(lexical.ids[i], vector)
        candidates = []
        for cid, similarity in dense.items():
            position = lexical.position(cid)
            score = float(scores[position]) if position is not None else 0.0
            candidates.append(Candidate(cid, *chunks.row(cid), similarity, score))
        return candidates, dense_scores, lexical, scores

    def explain(self, query: str, *, fusion: FusionParams | None = None) -> tuple[list[PolicyHit], Evidence]:
        """Every fused candidate above the dense floor, best first, and the abstain evidence (no cut)."""
        params = fusion or self.fusion
        query = (query or "").strip()[:MAX_QUERY_CHARS]
        if not query:
            raise EmptyQueryError("the search query is empty")
        vector = self._query_vector(query)
        terms = analyze_query(query)
        with self._lock:
            candidates, dense_scores, lexical, bm25 = self._candidates(
                vector, terms, params.heading_weight, head=keyword_head(query), head_weight=params.head_weight
            )
        fused = fuse(candidates, params, dense_pool=dense_scores, lexical_pool=bm25)
        ranked = [r for r in fused if r.candidate.dense >= self.min_score]
        top, margin = dense_evidence(dense_scores)
        coverage = lexical.coverage(terms, ranked[0].candidate.chunk_id) if ranked and lexical else 0.0
        background = Evidence.background_of(self._background() @ vector, params.background_k)
        hits = [PolicyHit.from_metadata(r.candidate.metadata, r.candidate.text, r.score) for r in ranked]
        return hits, Evidence(top, margin, coverage, background)

    def search_sync(
        self, query: str, top_k: int = 3, *, fusion: FusionParams | None = None
    ) -> list[PolicyHit]:
        """The `top_k` best passages for `query`, or `[]` when no policy covers it."""
        params = fusion or self.fusion
        hits, evidence = self.explain(query, fusion=params)
        if not hits or evidence.score(params) < params.abstain_below:
            return []
        return hits[: max(1, int(top_k))]

    def search_many_sync(self, requests: list[tuple[str, int]]) -> list[list[PolicyHit] | BaseException]:
        """`search_sync` for each (query, top_k), the distinct queries embedded in one batch and sent to
        Chroma in one query; a failing request (an empty query) yields its exception in its place."""
        queries = list(
            dict.fromkeys(q for q in ((q or "").strip()[:MAX_QUERY_CHARS] for q, _ in requests) if q)
        )
        vectors = self._query_vector.many(queries)
        with self._lock:
            collection = self._current()
            if collection is not None and self._lexical is not None and vectors:
                found = nearest(collection, vectors, min(CANDIDATES, len(self._lexical)))
                self._batch_nearest = {v.tobytes(): f for v, f in zip(vectors, found, strict=True)}
                self._batch_collection = collection
            try:
                return [outcome_of(self.search_sync, query, top_k) for query, top_k in requests]
            finally:
                self._batch_nearest = {}
                self._batch_collection = None

    # ---- async API (the bot) --------------------------------------------------------------

    def _worker(self, lane: str) -> ThreadPoolExecutor:
        if lane not in self._executors:
            workers = SEARCH_WORKERS if lane == "search" else 1
            self._executors[lane] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix=f"policy-index-{lane}"
            )
        return self._executors[lane]

    async def search(self, query: str, top_k: int = 3) -> list[PolicyHit]:
        """`search_sync` on the index's search workers, so the event loop keeps running; searches that
        arrive together run as one batch (`search_many_sync`)."""
        return await self._batcher.submit((query, top_k))

    async def areindex(self, policies_dir: Path | None = None) -> ReindexCounts:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker("index"), lambda: self.reindex(policies_dir))

    async def aensure_built(self, policies_dir: Path | None = None) -> ReindexCounts | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker("index"), lambda: self.ensure_built(policies_dir))

    def close(self) -> None:
        """Stop the worker threads; the Chroma data stays on disk."""
        for executor in self._executors.values():
            executor.shutdown(wait=True)
        self._executors.clear()


__all__ = ["EmptyQueryError", "IndexFolderMissing", "PolicyHit", "PolicyIndex", "ReindexCounts"]
