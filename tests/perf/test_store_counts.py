"""What the store sent to the database (`Store.counts`, printed per conversation by the benches), and the
top frames of a sampled phase (`bench.sampler.summarize`)."""

from __future__ import annotations

import asyncio

from bench.sampler import summarize
from bot.memory import ThreadMemory
from bot.store import Store


def _message(i: int) -> dict[str, str]:
    return {"role": "user", "content": f"message {i}"}


async def test_a_lone_write_counts_its_statement_its_commit_and_its_wait(store: Store) -> None:
    before = store.counts()
    await ThreadMemory(store).append("t:1", _message(1))
    spent = store.counts() - before

    assert (spent.statements, spent.commits, spent.writes) == (1, 1, 1)
    assert spent.write_wait_s > 0


async def test_writes_handed_over_together_share_one_commit(store: Store, monkeypatch) -> None:
    from bot.store.backends import sqlite_writer

    monkeypatch.setattr(sqlite_writer, "INLINE_TURN_S", 1e-9)  # one inline write a turn: the rest queue
    memory = ThreadMemory(store)
    await memory.append("t:warm", _message(0))
    before = store.counts()
    await asyncio.gather(*(memory.append(f"t:{i}", _message(i)) for i in range(20)))
    spent = store.counts() - before

    assert spent.writes == 20 and spent.statements == 20
    assert 1 <= spent.commits < 20  # one inline, the rest group-committed by the writer


async def test_reads_send_statements_and_commit_nothing(store: Store) -> None:
    memory = ThreadMemory(store)
    await memory.append("t:1", _message(1))
    before = store.counts()
    await memory.load("t:1")
    spent = store.counts() - before

    assert (spent.statements, spent.commits, spent.writes) == (1, 0, 0)


async def test_the_engine_path_is_counted_too(store: Store) -> None:
    direct = store.direct
    store.direct = None  # the SQLAlchemy path (PostgreSQL with options, in-memory SQLite)
    try:
        before = store.counts()
        await ThreadMemory(store).append("t:1", _message(1))
        spent = store.counts() - before
    finally:
        store.direct = direct
    assert spent.statements >= 1 and spent.commits == 1 and spent.writes == 1


def test_the_summary_ranks_the_loop_threads_frames_and_lists_the_busy_others() -> None:
    raw = "\n".join(
        [
            "thread (1): MainThread;main (a.py:1);handle (b.py:2);parse (c.py:3) 30",
            "thread (1): MainThread;main (a.py:1);handle (b.py:2);parse (c.py:9) 10",
            "thread (1): MainThread;main (a.py:1);select (selectors.py:5) 60",
            "thread (2): writer;loop (w.py:1);commit (w.py:4) 50",
            "thread (3): idle;wait (x.py:1) 1",
        ]
    )
    text = summarize(raw, seconds=1.0, rate=100)

    loop_self = text.split("by self samples")[1].split("\n\n")[0]
    assert loop_self.index("select (selectors.py)") < loop_self.index("parse (c.py)")
    assert "     40   40.0%  parse (c.py)" in loop_self  # two lines of one function add up
    assert "    100  100.0%  main (a.py)" in text.split("by inclusive samples")[1]
    assert "writer: top" in text and "commit (w.py)" in text
    assert "idle: top" not in text  # on the CPU 1 % of the phase: not listed
