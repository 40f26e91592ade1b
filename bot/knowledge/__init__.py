"""The policy knowledge base: policy documents → chunks → Chroma + BM25 → cited `PolicyHit`s."""

from bot.knowledge.documents import (
    Chunk,
    KnowledgeError,
    PolicyDocument,
    PolicyFormatError,
    Section,
    chunk_documents,
    load_policies,
    parse_policy,
)
from bot.knowledge.embedders import E5Embedder, Embedder, SentenceTransformerEmbedder, make_embedder
from bot.knowledge.index import EmptyQueryError, PolicyHit, PolicyIndex, ReindexCounts
from bot.knowledge.lexical import AliasTable, LexicalIndex

__all__ = [
    "AliasTable",
    "Chunk",
    "E5Embedder",
    "Embedder",
    "EmptyQueryError",
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
