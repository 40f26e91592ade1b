"""The policy knowledge base: policy documents → chunks → Chroma + BM25 → fused, cited `PolicyHit`s."""

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
from bot.knowledge.fusion import DEFAULT_FUSION, FusionParams
from bot.knowledge.hits import PolicyHit, ReindexCounts
from bot.knowledge.index import EmptyQueryError, IndexFolderMissing, PolicyIndex
from bot.knowledge.lexical import LexicalIndex

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
