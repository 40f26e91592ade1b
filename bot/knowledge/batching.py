"""Searches that arrive together are served together: query vectors cached and embedded in one batch,
and concurrent async searches collected into batches that run on the index's worker threads.

`QueryVectors` is the bounded cache in front of the embedder: the distinct queries of one batch that it
has not seen are embedded in ONE model call. `SearchBatcher` turns concurrent `await search(...)` calls
into such batches without a timer: a request starts a batch at once when a worker lane is free (a lone
search waits for nothing), and requests that arrive while every lane is busy are taken together by the
next free lane. Two lanes keep a long query from holding up a short one.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from cachetools import LRUCache

from bot.knowledge.embedders import Embedder, embed_queries

Req = TypeVar("Req")
Res = TypeVar("Res")


def outcome_of(call: Callable[..., Res], *args: Any) -> Res | Exception:
    """`call(*args)`, or the exception it raised: one request's failure must not fail its batch."""
    try:
        return call(*args)
    except Exception as exc:
        return exc


class QueryVectors:
    """Query text → unit vector, with a bounded LRU cache; `many` embeds all of its misses in one batch.

    A query another thread is embedding at the moment is not embedded again: its vector is waited for.
    Two search lanes run side by side, and in the 200-conversation burst (64 new questions, each asked by
    3–4 conversations) they embedded 80 questions for 64 distinct ones: the same new question in both
    lanes' batches at once (`bench.concurrency`, 2026-12-07).

    Callable like the `functools.lru_cache` it replaces (`vectors(query)`, `vectors.cache_clear()`).
    """

    def __init__(self, embedder: Embedder, maxsize: int) -> None:
        self._embedder = embedder
        self._cache: LRUCache[str, np.ndarray] = LRUCache(maxsize=maxsize)
        self._lock = threading.Lock()
        self._embedding: dict[str, Future[np.ndarray]] = {}
        """The queries being embedded by some thread now, and where their vectors will be."""

    def __call__(self, query: str) -> np.ndarray:
        # A cached query (a search asks for its vectors four times) skips `many`'s bookkeeping.
        with self._lock:
            vector = self._cache.get(query)
        return vector if vector is not None else self.many([query])[0]

    def many(self, queries: Sequence[str]) -> list[np.ndarray]:
        """The vector of each query, in order; the uncached distinct ones that no other thread is
        embedding are embedded in one call, the others' vectors waited for."""
        with self._lock:
            found = {q: self._cache.get(q) for q in dict.fromkeys(queries)}
            missing = [q for q, vector in found.items() if vector is None]
            theirs = {q: self._embedding[q] for q in missing if q in self._embedding}
            mine = [q for q in missing if q not in theirs]
            for query in mine:
                self._embedding[query] = Future()
        if mine:
            try:
                vectors = embed_queries(self._embedder, mine)
            except BaseException as exc:
                with self._lock:
                    for query in mine:
                        self._embedding.pop(query).set_exception(exc)
                raise
            with self._lock:
                for query, vector in zip(mine, vectors, strict=True):
                    self._cache[query] = found[query] = vector
                    self._embedding.pop(query).set_result(vector)
        for query, future in theirs.items():
            found[query] = future.result()
        return [found[q] for q in queries]  # type: ignore[misc]

    def cache_clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


@dataclass
class _LoopLanes(Generic[Req, Res]):
    """One event loop's waiting requests and how many of its batches are running."""

    waiting: deque[tuple[Req, asyncio.Future[Res]]] = field(default_factory=deque)
    running: int = 0


class SearchBatcher(Generic[Req, Res]):
    """Collects concurrent requests into batches for `run_batch`, which runs on `executor`.

    `run_batch(requests)` returns one result per request, in order; a result that is an exception is
    raised to that request's caller alone. An exception from `run_batch` itself goes to the whole batch.
    """

    def __init__(
        self,
        run_batch: Callable[[list[Req]], list[Res | BaseException]],
        executor: Callable[[], Executor],
        *,
        lanes: int,
        max_batch: int,
    ) -> None:
        self._run_batch = run_batch
        self._executor = executor
        self._lanes = max(1, lanes)
        self._max_batch = max(1, max_batch)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopLanes[Req, Res]] = (
            weakref.WeakKeyDictionary()
        )

    async def submit(self, request: Req) -> Res:
        loop = asyncio.get_running_loop()
        lanes = self._loops.get(loop)
        if lanes is None:
            lanes = self._loops[loop] = _LoopLanes()
        future: asyncio.Future[Res] = loop.create_future()
        lanes.waiting.append((request, future))
        self._dispatch(loop, lanes)
        return await future

    def _dispatch(self, loop: asyncio.AbstractEventLoop, lanes: _LoopLanes[Req, Res]) -> None:
        while lanes.waiting and lanes.running < self._lanes:
            batch: list[tuple[Req, asyncio.Future[Res]]] = []
            while lanes.waiting and len(batch) < self._max_batch:
                request, future = lanes.waiting.popleft()
                if not future.done():  # a caller cancelled while waiting: nothing to compute
                    batch.append((request, future))
            if not batch:
                continue
            lanes.running += 1
            done = loop.run_in_executor(self._executor(), self._run_batch, [r for r, _ in batch])
            done.add_done_callback(lambda f, batch=batch: self._settle(loop, lanes, batch, f))  # type: ignore[misc]

    def _settle(
        self,
        loop: asyncio.AbstractEventLoop,
        lanes: _LoopLanes[Req, Res],
        batch: list[tuple[Req, asyncio.Future[Res]]],
        done: asyncio.Future[list[Res | BaseException]],
    ) -> None:
        lanes.running -= 1
        failure: BaseException | None = None
        results: list[Any] = []
        if not done.cancelled():
            failure = done.exception()
            results = done.result() if failure is None else []
        for i, (_, future) in enumerate(batch):
            if future.done():
                continue
            if done.cancelled():  # the executor was shut down under the batch
                future.cancel()
                continue
            outcome = failure if failure is not None else results[i]
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
        self._dispatch(loop, lanes)
