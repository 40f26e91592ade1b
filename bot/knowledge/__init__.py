"""The policy knowledge base: policy documents → chunks → Chroma + BM25 → fused, cited `PolicyHit`s.

The names below are imported on first use (PEP 562): a cold `arca-bot search` starts its query's Korean
analysis in a second process (`bot.knowledge.query_terms`) before anything heavy is imported, and
importing one light submodule must not import the whole search.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "bot.knowledge.documents": (
        "Chunk",
        "KnowledgeError",
        "PolicyDocument",
        "PolicyFormatError",
        "Section",
        "chunk_documents",
        "load_policies",
        "parse_policy",
    ),
    "bot.knowledge.embedders": ("E5Embedder", "Embedder", "SentenceTransformerEmbedder", "make_embedder"),
    "bot.knowledge.fusion": ("DEFAULT_FUSION", "FusionParams"),
    "bot.knowledge.hits": ("PolicyHit", "ReindexCounts"),
    "bot.knowledge.index": ("EmptyQueryError", "IndexFolderMissing", "PolicyIndex"),
    "bot.knowledge.lexical": ("LexicalIndex",),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "DEFAULT_FUSION",
    "Chunk",
    "E5Embedder",
    "Embedder",
    "EmptyQueryError",
    "FusionParams",
    "IndexFolderMissing",
    "KnowledgeError",
    "LexicalIndex",
    "PolicyDocument",
    "PolicyFormatError",
    "PolicyHit",
    "PolicyIndex",
    "ReindexCounts",
    "Section",
    "SentenceTransformerEmbedder",
    "chunk_documents",
    "load_policies",
    "make_embedder",
    "parse_policy",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
