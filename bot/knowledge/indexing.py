"""Writing chunks into the policy collection: only new and changed chunks are embedded, and each is
stored with what every search needs of it (its text, metadata, lexical terms and questions)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bot.knowledge.documents import Chunk
from bot.knowledge.embedders import Embedder
from bot.knowledge.lexical import chunk_terms

EMBED_BATCH, UPSERT_BATCH = 16, 512

QUESTIONS_KEY = "questions"
"""Metadata key of a chunk's questions, one per line (`bot.knowledge.questions`)."""

Progress = Callable[[int, int], None]
"""`progress(done, total)`: chunks embedded so far during a (re)index."""


@dataclass(frozen=True)
class ChunkChanges:
    """What a write did to the collection, by chunk id."""

    added: int
    updated: int
    removed: int
    unchanged: int


def stored_metadata(chunk: Chunk) -> dict[str, str | int]:
    """What is stored beside a chunk's vector and text: its metadata, lexical terms and questions."""
    meta: dict[str, str | int] = {**chunk.metadata(), **chunk_terms(chunk.title, chunk.section, chunk.text)}
    if chunk.questions:
        meta[QUESTIONS_KEY] = "\n".join(chunk.questions)
    return meta


def stored_questions(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The questions stored with a chunk (none for chunks indexed without)."""
    return tuple(q for q in str(metadata.get(QUESTIONS_KEY) or "").split("\n") if q)


def write_chunks(
    collection: Any, chunks: list[Chunk], embedder: Embedder, progress: Progress | None = None
) -> ChunkChanges:
    """Make `collection` hold exactly `chunks`: new and changed ones (by content hash) embedded and
    upserted in batches, the ones no longer wanted deleted."""
    existing = collection.get(include=["metadatas"])
    stored = {
        i: (m or {}).get("hash") for i, m in zip(existing["ids"], existing["metadatas"] or [], strict=False)
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
            vectors.append(embedder.embed_passages([c.passage for c in batch[i : i + EMBED_BATCH]]))
            done += len(vectors[-1])
            if progress is not None:
                progress(done, len(to_embed))
        collection.upsert(
            ids=[c.chunk_id for c in batch],
            embeddings=np.concatenate(vectors),
            documents=[c.text for c in batch],
            metadatas=[stored_metadata(c) for c in batch],
        )
    if removed:
        collection.delete(ids=removed)
    return ChunkChanges(len(fresh), len(changed), len(removed), len(chunks) - len(to_embed))
