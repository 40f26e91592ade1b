"""A knowledge base without documents, for tests that never retrieve (the real index embeds every
policy, about 25 s on 2 cores)."""

from __future__ import annotations

from typing import Any


class EmptyPolicyIndex:
    async def search(self, query: str, top_k: int = 3) -> list[Any]:
        return []
