"""The policy index: chunks of a policies folder in a Chroma collection, searched densely (e5) and
lexically (BM25 over Korean morphemes and English stems), fused, with an abstain decision.

`PolicyIndex` owns the Chroma store, the embedder and the in-memory BM25 rebuilt from the stored terms.
Async searches run on a few worker threads (the loop never embeds; a long query does not hold up the
others), those that arrive together as one batch (`bot.knowledge.batching`); indexing on its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.knowledge.abstain import Yardstick
from bot.knowledge.analysis import ANALYZER_VERSION, MAX_QUERY_CHARS, analyze_query, keyword_head, search_text
from bot.knowledge.background import text_languages
from bot.knowledge.batching import QueryVectors, SearchBatcher, outcome_of
from bot.knowledge.candidates import CANDIDATES, CandidateSet, gather, steered_alone
from bot.knowledge.chroma import (
    ChromaStore,
    ChunkSnapshot,
    FileStamp,
    IndexFolderMissing,
    Nearest,
    nearest,
)
from bot.knowledge.context import with_neighbours
from bot.knowledge.documents import Chunk, KnowledgeError, chunk_documents, load_policies
from bot.knowledge.embedders import E5Embedder, Embedder, make_embedder
from bot.knowledge.fitted import FittedParts
from bot.knowledge.fusion import DEFAULT_FUSION, Evidence, FusionParams, fuse
from bot.knowledge.hits import EmptyQueryError, PolicyHit, ReindexCounts
from bot.knowledge.indexing import Progress, write_chunks
from bot.knowledge.lexical import LexicalIndex
from bot.knowledge.second_dense import SecondDense
from bot.loop_share import BackgroundExecutor
from bot.vocabulary.language import detect_language

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)

COLLECTION_NAME = "arca_policies"
INDEX_FORMAT = 2
"""Bump when chunking, stored metadata or the analyzer change: an index of another format is rebuilt."""

SEARCH_WORKERS, QUERY_CACHE, SEARCH_BATCH = 2, 512, 16

LANE_WARM_UP = "쿠폰은 하루에 몇 장까지 받을 수 있나요? How many coupons can I get a day, 2 or 3?"
"""Analysed by each search lane as the bot starts (`PolicyIndex.warm_up`): Kiwi's first analysis on a
thread costs 5–7 ms more than the next ones (its state is per thread, and a first Latin-script sentence
more again), which fell on each lane's first player question (26–34 ms against 12–15 for the next)."""


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
        second: SecondDense | None = None,
        fitted_dir: Path | None = None,
    ) -> None:
        self.embedder = embedder
        self.second = second
        """A second dense model fused beside `embedder` when `fusion.second_weight` is set (issue 24)."""
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
        self._read_stamp: FileStamp | None = None
        """The index file's stamp taken before the collection was last read (None: read it again)."""
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
        self.fitted = FittedParts(fitted_dir if fitted_dir is not None else self.store.chroma_dir)
        """What the search makes by embedding fixed sentences, stored beside the index (issue 51); with a
        Chroma server, in `fitted_dir` (`<data dir>/search-model`), never in an embedded index's folder."""
        if second is not None:
            second.parts = self.fitted
        if isinstance(embedder, E5Embedder) and embedder.parts is None:
            fitted = self.fitted
            embedder.parts = lambda: fitted  # its graph and tokenizer pieces are stored there too
        self._yardstick = Yardstick(embedder, second, self.fitted)

    @classmethod
    def from_settings(
        cls, settings: Settings, embedder: Embedder | None = None, **kwargs: Any
    ) -> PolicyIndex:
        """The index the settings describe: Chroma server or `<data dir>/chroma`, `ARCA_EMBEDDING_MODEL`."""
        kwargs.setdefault("policies_dir", settings.policies_dir)
        kwargs.setdefault("second", SecondDense.default())
        return cls(
            embedder if embedder is not None else make_embedder(settings),
            chroma_dir=settings.chroma_dir,
            chroma_url=settings.chroma_url,
            fitted_dir=settings.data_dir / "search-model" if settings.chroma_url else None,
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

    def read_chunks(self) -> None:
        """Read the stored chunks and build the lexical index now rather than on the first search: a
        cold `arca-bot search` does it while its query's terms are still being made elsewhere."""
        with self._lock:
            self._current()

    def count(self) -> int:
        with self._lock:
            collection = self._open()
            return 0 if collection is None else int(collection.count())

    def sections(self) -> list[PolicyHit]:
        """Every stored chunk as a search would return it (score 0, no neighbour): what the fact check's
        caches are filled from at start-up (`bot.guards.evidence.warm_policy_passages`)."""
        with self._lock:
            self._current()
            chunks = self._chunks
        if chunks is None:
            return []
        return [
            PolicyHit.from_metadata(meta, text, 0.0)
            for meta, text in zip(chunks.metadatas, chunks.documents, strict=True)
        ]

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

        changes = write_chunks(collection, chunks, self.embedder, progress)
        collection.modify(metadata={**self._expected_metadata(), **extra})
        self._lexical, self._built_at = None, extra["built_at"]
        counts = ReindexCounts(
            added=changes.added,
            updated=changes.updated,
            removed=changes.removed,
            unchanged=changes.unchanged,
            rebuilt=rebuilt,
        )
        log.info("%s from %s", counts, directory)
        return counts

    # ---- search ---------------------------------------------------------------------------

    def _current(self) -> Any | None:
        """The collection as it is now: another process (`arca-bot index`, a second bot) may have
        rebuilt or updated it since we opened it, which `built_at` in its metadata tells.

        An embedded index whose SQLite file is as it was when the collection was last read
        (`ChromaStore.file_stamp`) is not read again: that read cost a search ~0.3 ms, a seventh of it."""
        stamp = self.store.file_stamp()
        if (
            stamp is not None
            and stamp == self._read_stamp
            and self._collection is not None
            and self._lexical is not None
            and self._chunks is not None
        ):
            return self._collection
        self._read_stamp = None
        self.store.check_folder()
        collection = self.store.get()
        if collection is None or not self._matches(collection):
            self._collection = self._lexical = self._built_at = None
            return None
        built_at = (collection.metadata or {}).get("built_at")
        if built_at != self._built_at or self._lexical is None or self._chunks is None:
            self._chunks = ChunkSnapshot.read(collection)
            self._lexical = LexicalIndex.from_stored(self._chunks.ids, self._chunks.metadatas)
            self._built_at = built_at
        self._collection = collection
        self._read_stamp = stamp
        return collection

    def fit_search_model(self) -> None:
        """Read what the search makes by embedding fixed sentences — the domain classifiers, the
        background vectors, the second model's chunk vectors — from beside the index, or make it and
        store it there, so the next process start reads it (`arca-bot index` and every start call this)."""
        self._yardstick.warm_up()
        if self.second is not None:
            with self._lock:
                self._current()
                if self._chunks is not None:
                    self.second.refresh(self._built_at, self._chunks)

    @contextmanager
    def loading(self, query: str = "쿠폰 한도", *, analyzer: bool = True) -> Iterator[None]:
        """Load the Korean analyzer and both models (embedding `query` with each) in threads while the
        caller does other work, such as opening Chroma; they are loaded when the block ends.

        The analyzer's and e5's loads are native code that runs beside Python's imports on a second
        core (a cold `arca-bot search` waited for each in turn). `analyzer=False`: the query's terms
        come from elsewhere (`bot.knowledge.query_terms`), so Kiwi is not loaded here. A failure here
        is only logged: the search that follows loads the same thing again and reports it there."""

        def load(name: str, step: Callable[[], object]) -> threading.Thread:
            def run() -> None:
                try:
                    step()
                except Exception:
                    log.debug("preloading %s failed", name, exc_info=True)

            thread = threading.Thread(target=run, name=f"policy-index-load-{name}", daemon=True)
            thread.start()
            return thread

        threads = []
        if analyzer:
            threads.append(load("analyzer", lambda: (analyze_query(query), keyword_head(query))))
        threads.append(load("embedder", lambda: self._query_vector(query)))
        if self.second is not None:
            second = self.second
            threads.append(load("second", lambda: second.warm_up(query)))
        try:
            yield
        finally:
            for thread in threads:
                thread.join()

    def warm_up(self) -> None:
        """Load the Korean analyzer and both models (the main one once per search lane, when it keeps a
        handle per thread: `E5Embedder.preload`), and read (or fit) the search model now, not on a
        player's first question."""
        preload = getattr(self.embedder, "preload", None)

        def load_handles() -> None:
            try:
                if callable(preload):
                    preload(SEARCH_WORKERS)
            except Exception:  # the search loads a handle when it needs one and reports it there
                log.debug("preloading the search lanes' model handles failed", exc_info=True)

        handles = threading.Thread(target=load_handles, name="policy-index-load-handles", daemon=True)
        with self.loading():
            handles.start()
            try:
                self.fit_search_model()
            finally:
                handles.join()
        self._warm_lanes()

    def _warm_lanes(self) -> None:
        """Start the search lanes' threads and analyse `LANE_WARM_UP` once on each (`LANE_WARM_UP`); a
        failure is only logged: the lane analyses its first question all the same."""
        together = threading.Barrier(SEARCH_WORKERS)

        def warm(lane: int) -> None:
            # each waits for the other, so every lane is a thread of its own, not one thread twice
            with contextlib.suppress(threading.BrokenBarrierError):
                together.wait(timeout=5)
            analyze_query(f"{LANE_WARM_UP} ({lane})")  # a text of its own: the analysis cache is shared

        try:
            for future in [self._worker("search").submit(warm, lane) for lane in range(SEARCH_WORKERS)]:
                future.result()
        except Exception:
            log.debug("warming the search lanes failed", exc_info=True)

    def _candidates(
        self, query: str, vector: np.ndarray, terms: tuple[str, ...], params: FusionParams, head: str | None
    ) -> tuple[CandidateSet, LexicalIndex | None]:
        """The query's candidates (`candidates.gather`) and the lexical index they were scored with."""
        collection = self._batch_collection or self._current()
        lexical, chunks = self._lexical, self._chunks
        if collection is None or lexical is None or chunks is None or len(lexical) == 0:
            return CandidateSet([], [], np.zeros(0, dtype=np.float32)), None
        found = self._batch_nearest.get(vector.tobytes())
        found = found or nearest(collection, [vector], min(CANDIDATES, len(lexical)))[0]
        bm25 = lexical.scores(terms, params.heading_weight, head=head, head_weight=params.head_weight)
        second = None
        uses_second = params.second_weight or params.second_evidence_weight or params.second_standout_weight
        if self.second is not None and uses_second:
            self.second.refresh(self._built_at, chunks)
            second = self.second.similarities(query)
        return gather(chunks, lexical, collection, found, vector, bm25, second), lexical

    def explain(
        self, query: str, *, fusion: FusionParams | None = None, top_k: int = 3, rest: bool = True
    ) -> tuple[list[PolicyHit], Evidence]:
        """Every fused candidate above the dense floor, best first (the first `top_k` with their close
        neighbours, `context.with_neighbours`), and the abstain evidence (no cut). `rest=False`: the
        first `top_k` hits only (what a search returns; the evaluation ranks the rest too)."""
        params = fusion or self.fusion
        query = search_text(query)
        if not query:
            raise EmptyQueryError("the search query is empty")
        vector = self._query_vector(query)
        if self.second is not None:
            self.second.warm_up(query)
        terms = analyze_query(query)
        with self._lock:
            found, lexical = self._candidates(query, vector, terms, params, keyword_head(query))
        nearest = max(found.candidates, key=lambda c: c.dense) if found.candidates else None
        languages = text_languages(nearest.text if nearest is not None else "")
        if detect_language(query) in steered_alone(nearest, languages):
            params = params.with_(second_weight=0.0)  # the second model steers cross-lingual queries
        fused = fuse(
            found.candidates,
            params,
            dense_pool=found.dense_pool,
            lexical_pool=found.lexical_pool,
            second_pool=found.second_pool,
        )
        ranked = [r for r in fused if r.candidate.dense >= self.min_score]
        top_k = max(1, int(top_k))
        hits = with_neighbours(
            ranked,
            top_k,
            params.neighbour_margin,
            scope=params.neighbour_scope,
            within=params.neighbour_rank or None,
            fill=params.neighbour_fill,
        )
        if rest:
            hits += [
                PolicyHit.from_metadata(r.candidate.metadata, r.candidate.text, r.score)
                for r in ranked[top_k:]
            ]
        evidence = self._yardstick.evidence(query, vector, terms, found, lexical, ranked, languages, params)
        return hits, evidence

    def search_sync(
        self, query: str, top_k: int = 3, *, fusion: FusionParams | None = None
    ) -> list[PolicyHit]:
        """The `top_k` best passages for `query`, or `[]` when no policy covers it."""
        params = fusion or self.fusion
        hits, evidence = self.explain(query, fusion=params, top_k=top_k, rest=False)
        if not hits or evidence.abstains(params):
            return []
        return hits[: max(1, int(top_k))]

    def search_many_sync(self, requests: list[tuple[str, int]]) -> list[list[PolicyHit] | BaseException]:
        """`search_sync` for each (query, top_k), the distinct queries embedded in one batch and sent to
        Chroma in one query; a failing request (an empty query) yields its exception in its place."""
        queries = list(
            dict.fromkeys(q for q in ((q or "").strip()[:MAX_QUERY_CHARS] for q, _ in requests) if q)
        )
        vectors = self._query_vector.many(queries)
        if self.second is not None:
            self.second.warm_up_many(queries)
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
            # Embedding is background work beside the event loop: its threads yield the CPU to the loop's,
            # and the loop knows when they are at work.
            self._executors[lane] = BackgroundExecutor(workers, thread_name_prefix=f"policy-index-{lane}")
        return self._executors[lane]

    async def search(self, query: str, top_k: int = 3) -> list[PolicyHit]:
        """`search_sync` on the index's search workers, so the event loop keeps running; searches that
        arrive together run as one batch (`search_many_sync`)."""
        return await self._batcher.submit((query, top_k))

    def close(self) -> None:
        """Stop the worker threads; the Chroma data stays on disk."""
        for executor in self._executors.values():
            executor.shutdown(wait=True)
        self._executors.clear()


__all__ = ["EmptyQueryError", "IndexFolderMissing", "PolicyHit", "PolicyIndex", "ReindexCounts"]
