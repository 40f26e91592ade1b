"""A/B variants of the 200-conversation burst (`bench.concurrency`), interleaved in one process.

On a machine shared with other work the same burst gives 2× different throughput a minute apart, so a
change is judged against the code without it in the same sitting: each round runs every variant once, in
turn, on the same policy index with its query caches emptied first (every variant embeds the burst's
questions itself). A variant is a named set of patches (`VARIANTS`): module constants, functions or the
shared policy index's attributes set for its runs and put back after.

    python -m bench.burst_ab [--variants base,no-writer] [--rounds 3] [--conversations 200]

Prints each run's figures as it ends, then per variant the median of its runs, the load average beside
them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import concurrency
from bot.app import make_policy_index
from bot.config import load_settings

Patch = tuple[Any, str, Any]
"""(object, attribute, value) set for a variant's runs."""


class _Collector:
    """The cyclic collector's oldest threshold as an attribute a variant can patch (`oldest`)."""

    @property
    def oldest(self) -> int:
        return gc.get_threshold()[2]

    @oldest.setter
    def oldest(self, value: int) -> None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, value)


_COLLECTOR = _Collector()


def _inline_writes(_index: Any) -> list[Patch]:
    from bot.store.backends import sqlite_writer

    return [(sqlite_writer, "background_busy", lambda: False), (sqlite_writer, "INLINE_TURN_S", 1.0)]


def _writer_thread(_index: Any) -> list[Patch]:
    """Wave 4's writes: what is not committed inline goes to the writer thread, never to the loop's group."""
    from bot.store.backends.sqlite_writer import SQLiteWriter, _Pending

    async def write(self: Any, unit: Any) -> Any:
        done, out = self._write_inline(unit)
        if done:
            return out
        future = asyncio.get_running_loop().create_future()
        self._hand_over([_Pending(unit, future)])
        return await future

    return [(SQLiteWriter, "write", write)]


def _loop_group(size: int) -> Callable[[Any], list[Patch]]:
    def patches(_index: Any) -> list[Patch]:
        from bot.store.backends import sqlite_writer

        return [(sqlite_writer, "LOOP_GROUP_MAX", size)]

    return patches


def _full_collections_every(gen1_collections: int) -> Callable[[Any], list[Patch]]:
    """The collector's oldest threshold for the run (CPython's default: a full collection after 10
    collections of the middle generation)."""
    return lambda _index: [(_COLLECTOR, "oldest", gen1_collections)]


def _embed_twice(_index: Any) -> list[Patch]:
    """Before 2026-12-07: a new question both lanes got at once was embedded by each."""
    from bot.knowledge import batching
    from bot.knowledge.embedders import embed_queries

    def many(self: Any, queries: Any) -> list[Any]:
        with self._lock:
            found = {q: self._cache.get(q) for q in dict.fromkeys(queries)}
        missing = [q for q, vector in found.items() if vector is None]
        if missing:
            vectors = embed_queries(self._embedder, missing)
            with self._lock:
                for query, vector in zip(missing, vectors, strict=True):
                    self._cache[query] = found[query] = vector
        return [found[q] for q in queries]

    return [(batching.QueryVectors, "many", many)]


_SEARCHED: dict[tuple[str, int], Any] = {}
"""`_searched_once`'s results, kept across its rounds."""


def _searched_once(index: Any) -> list[Patch]:
    """A search lane answers a request it has answered before from memory (no embedding, no scoring):
    what the burst's loop lag is without the lanes' work, from the variant's second round on."""
    original = index.search_many_sync

    def many(requests: list[tuple[str, int]]) -> list[Any]:
        missing = [r for r in requests if r not in _SEARCHED]
        if missing:
            for request, got in zip(missing, original(missing), strict=True):
                _SEARCHED[request] = got
        return [_SEARCHED[r] for r in requests]

    return [(index._batcher, "_run_batch", many)]


def _switch_interval(seconds: float) -> Callable[[Any], list[Patch]]:
    """The interpreter's switch interval the app sets as it is built (`SWITCH_INTERVAL_S`: 1 ms)."""

    def patches(_index: Any) -> list[Patch]:
        from bot import loop_share

        return [(loop_share, "SWITCH_INTERVAL_S", seconds)]

    return patches


def _turn(seconds: float) -> Callable[[Any], list[Patch]]:
    """How long a loop turn runs runs' slices before `give_way()` defers the rest (`TURN_S`: 5 ms)."""

    def patches(_index: Any) -> list[Patch]:
        from bot import loop_share

        return [(loop_share, "TURN_S", seconds)]

    return patches


def _search_lanes(lanes: int) -> Callable[[Any], list[Patch]]:
    """How many search batches run at once (`SEARCH_WORKERS`: 2)."""
    return lambda index: [(index._batcher, "_lanes", lanes)]


def _search_batch(size: int) -> Callable[[Any], list[Patch]]:
    """How many searches one lane takes together (`SEARCH_BATCH`: 16)."""
    return lambda index: [(index._batcher, "_max_batch", size)]


VARIANTS: dict[str, Callable[[Any], list[Patch]]] = {
    "base": lambda _index: [],
    "inline-writes": _inline_writes,
    "writer-thread": _writer_thread,
    "loop-group-4": _loop_group(4),
    "loop-group-8": _loop_group(8),
    "loop-group-16": _loop_group(16),
    "loop-group-128": _loop_group(128),
    "switch-0.25ms": _switch_interval(0.00025),
    "switch-0.5ms": _switch_interval(0.0005),
    "switch-2ms": _switch_interval(0.002),
    "turn-2ms": _turn(0.002),
    "turn-3ms": _turn(0.003),
    "turn-8ms": _turn(0.008),
    "full-gc-every-10": _full_collections_every(10),
    "full-gc-every-1000": _full_collections_every(1000),
    "embed-twice": _embed_twice,
    "searched-once": _searched_once,
    "one-lane": _search_lanes(1),
    "search-batch-4": _search_batch(4),
    "search-batch-64": _search_batch(64),
}
"""The variants by name; each gives its patches, given the shared policy index, when its run starts (a
module imported lazily)."""

FIGURES = (
    "conversations_per_s",
    "loop_max_lag_above_idle_ms",
    "idle_loop_max_lag_ms",
    "burst_full_collections",
    "burst_full_collection_max_ms",
    "burst_cpu_ms_per_conversation",
    "burst_loop_cpu_ms_per_conversation",
    "burst_search_cpu_ms_per_conversation",
    "burst_writer_cpu_ms_per_conversation",
    "burst_write_wait_ms_per_conversation",
    "burst_commits_per_conversation",
    "single_above_model_ms",
    "single_commits",
)


@contextlib.contextmanager
def patched(patches: list[Patch]) -> Iterator[None]:
    saved = [(target, name, getattr(target, name)) for target, name, _ in patches]
    try:
        for target, name, value in patches:
            setattr(target, name, value)
        yield
    finally:
        for target, name, value in reversed(saved):
            setattr(target, name, value)


def _empty_caches(index: Any) -> None:
    index._query_vector.cache_clear()
    if index.second is not None:
        index.second._query.cache_clear()


async def _sitting(names: list[str], rounds: int, n: int, data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    settings = load_settings(data_dir=data_dir, llm_concurrency=max(n, 1), edit_interval=0.0)
    index = await asyncio.to_thread(make_policy_index, settings)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    try:
        # A first burst, not counted: it fills what a serving bot has filled before any burst (the fact
        # check's per-passage caches, first uses of each path), which would otherwise all fall on the
        # first variant of the first round.
        _empty_caches(index)
        await concurrency.run(n, 0.05, data_dir, policy_index=index, idle_s=1.0)
        for r in range(rounds):
            # the order alternates, so a machine getting busier or quieter favours no variant
            for name in names if r % 2 == 0 else reversed(names):
                _empty_caches(index)
                with patched(VARIANTS[name](index)):
                    figures = await concurrency.run(n, 0.05, data_dir, policy_index=index, idle_s=1.0)
                figures["load"] = os.getloadavg()[0]
                runs[name].append(figures)
                shown = " ".join(f"{k}={figures[k]}" for k in FIGURES)
                print(f"round {r + 1} {name:<16} load={figures['load']:.1f} {shown}", flush=True)
    finally:
        index.close()
    return runs


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="base", help=f"comma-separated, of: {', '.join(VARIANTS)}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--data-dir", type=Path, help="reuse a data dir (its policy index is built once)")
    args = parser.parse_args(argv)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        runs = asyncio.run(_sitting(names, args.rounds, args.conversations, data_dir))
    medians: dict[str, dict[str, float]] = {}
    print(f"\nmedians of {args.rounds} interleaved rounds:")
    for name, figures in runs.items():
        medians[name] = {k: statistics.median(f[k] for f in figures) for k in (*FIGURES, "load")}
        print(f"{name:<16} " + " ".join(f"{k}={v:g}" for k, v in medians[name].items()))
    return medians


if __name__ == "__main__":
    main()
