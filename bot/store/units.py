"""A unit of store work, written once for every backend: a generator that yields statements and gets
their results back; a backend runs it whole inside one transaction (`bot.store.backends`).

A unit names its statements as SQLAlchemy Core constructs (module constants, compiled once per
dialect) and never touches a connection, so the facts it reads, the lock it takes and the rows it
writes exist once, whether the file SQLite connection on the loop thread, a plain asyncpg connection
or an SQLAlchemy connection runs it. A unit may be run again from the start (a locked SQLite file, a
group commit that is redone), so it keeps no state outside itself.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Protocol, TypeVar

from sqlalchemy import Table, bindparam, insert
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import Executable
from sqlalchemy.types import JSON, TypeEngine

TableRows = tuple[Table, list[dict[str, Any]]]
"""Rows for one table, as `Store.insert_rows` writes them in one transaction."""

T = TypeVar("T")


class RaceLost(Exception):
    """An insert hit a unique constraint: another writer (or the same key) got there first."""


UNIQUE_SQLITE_ERRORS = frozenset({"SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"})
UNIQUE_SQLSTATE = "23505"


def is_unique_violation(exc: BaseException) -> bool:
    """Whether a driver's integrity error is a unique (or primary key) constraint refusing a row.

    Only that is a lost race: a CHECK, NOT NULL, foreign key or trigger refusal is a defect or a guard
    in the database, and must reach the caller as itself, not as "someone got there first". Reads the
    driver's own code through SQLAlchemy's wrapper (`orig`) and exception chains: sqlite3's
    `sqlite_errorname`, asyncpg's `sqlstate` (SQLAlchemy's asyncpg adapter: `pgcode`).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = getattr(current, "sqlite_errorname", None)
        if name:
            return name in UNIQUE_SQLITE_ERRORS
        code = getattr(current, "sqlstate", None) or getattr(current, "pgcode", None)
        if code:
            return code == UNIQUE_SQLSTATE
        current = getattr(current, "orig", None) or current.__cause__
    return False


@dataclass(frozen=True, slots=True)
class Fetch:
    """Run a SELECT; the unit gets its rows (named tuples, read by column key), or the first or None."""

    query: Executable
    params: Mapping[str, Any] = field(default_factory=dict)
    one: bool = False


@dataclass(frozen=True, slots=True)
class Lock:
    """Rows that writers of the same thing take in turn (a `with_for_update` SELECT on PostgreSQL).

    On SQLite a write unit holds the whole file's write lock from its first statement (`BEGIN
    IMMEDIATE`), so there this is nothing more.
    """

    query: Executable
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Insert:
    """Insert `rows` (each with the columns of `columns`) into `table`; the unit gets the new ids when
    `ids`, else None. A unique constraint that refuses a row raises `RaceLost` out of the unit."""

    table: Table
    columns: tuple[str, ...]
    rows: Sequence[Mapping[str, Any]]
    ids: bool = False


Op = Fetch | Lock | Insert
Unit = Generator[Op, Any, T]
"""What a unit is: `result = yield Fetch(...)` … `return value`."""
UnitFactory = Callable[[], Unit[T]]
"""Builds the unit afresh: a backend may run it more than once."""


class UnitRunner(Protocol):
    """What the store's parts (`coupons`, `threads`, `players`) need of the `Store` that owns them."""

    async def run(
        self,
        unit: UnitFactory[T],
        *,
        write: bool,
        snapshot: bool = True,
        plain: bool = True,
        off_loop: bool = False,
    ) -> T: ...

    def session(self) -> AbstractAsyncContextManager[AsyncSession]: ...

    async def audit(self, *, actor: str, action: str, thread_id: str | None = None) -> None: ...


_INSERTS: dict[tuple[str, tuple[str, ...]], Executable] = {}


def insert_statement(table: Table, columns: tuple[str, ...]) -> Executable:
    """`INSERT INTO table (columns) VALUES (:column, …)`, typed by the columns (built once)."""
    key = (table.name, columns)
    found = _INSERTS.get(key)
    if found is None:
        values = {c: bindparam(c, type_=table.c[c].type) for c in columns}
        found = _INSERTS[key] = insert(table).values(values)
    return found


def _bind_processor(type_: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    impl = type_.dialect_impl(dialect)
    process = impl.bind_processor(dialect)
    if process is None or not isinstance(impl, JSON):
        return process
    # Most JSON values bound are None (a message without tool calls or meta: 2 of a message row's
    # columns), and what the column's processor makes of None never changes (`null`, or SQL NULL with
    # `none_as_null`): made once, not serialized again for every row.
    for_none = process(None)
    return lambda value: for_none if value is None else process(value)


def _result_processor(type_: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    return type_.dialect_impl(dialect).result_processor(dialect, None)


class Prepared:
    """A statement compiled once for one dialect with positional parameters (`?` on SQLite, `$n` on
    asyncpg): values bound and columns read back with SQLAlchemy's own conversions (dates, JSON,
    booleans), through its public type API."""

    def __init__(self, statement: Executable, dialect: Dialect) -> None:
        # Literal IN lists are rendered as parameters of their own; named `bindparam`s stay to fill in.
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        self.sql = str(compiled)
        self._order = list(compiled.positiontup or ())
        self._fixed = dict(compiled.params)
        binds = compiled.binds
        self._bind: dict[str, Callable[[Any], Any]] = {}
        for name in self._order:
            bind = binds.get(name)
            if bind is None:  # a literal IN list's value, rendered as a parameter of its own: `x_1_2`
                bind = binds.get(name.rsplit("_", 1)[0])
            process = _bind_processor(bind.type, dialect) if bind is not None else None
            if process is not None:
                self._bind[name] = process
        # Each distinct parameter converted once (`?` repeats a name used twice), then laid out in order.
        self._convert = [(n, self._bind.get(n)) for n in dict.fromkeys(self._order)]
        self._layout = itemgetter(*self._order) if len(self._order) > 1 else None
        # A SELECT's columns, or an `UPDATE … RETURNING`'s (read through `Fetch` like a SELECT).
        columns = list(
            getattr(statement, "selected_columns", None) or getattr(statement, "exported_columns", ())
        )
        self._read = [_result_processor(c.type, dialect) for c in columns]
        self._row = namedtuple("Row", [c.key for c in columns], rename=True)  # type: ignore[misc]

    def args(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        values = {**self._fixed, **params} if self._fixed else params
        ready = {n: values[n] if p is None else p(values[n]) for n, p in self._convert}
        if self._layout is None:
            return tuple(ready.values())
        return self._layout(ready)  # type: ignore[no-any-return]

    def decode(self, raw: Sequence[Any]) -> Any:
        """One row as a named tuple (read by column key or by position)."""
        return self._row(*[v if p is None else p(v) for p, v in zip(self._read, raw, strict=True)])


class Statements:
    """`Prepared` statements of one backend's dialect, compiled once per statement object."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self._prepared: dict[Executable, Prepared] = {}
        self.executed = 0
        """Statements the backend sent with these (`Store.counts`); only its one thread adds to it."""

    def __call__(self, statement: Executable) -> Prepared:
        found = self._prepared.get(statement)
        if found is None:
            found = self._prepared[statement] = Prepared(statement, self.dialect)
        return found
