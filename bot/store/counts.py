"""What the store sent to the database so far: statements, commits, write units and the time their
callers waited for them (`Store.counts()`; the benchmarks print them per conversation)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class StoreCounts:
    """Totals since the store opened; subtract two to get what happened in between."""

    statements: int = 0
    """Statements sent: each of a store unit's statements on a direct path (an `Insert` of many rows is
    one), each cursor execution on the SQLAlchemy engine (BEGIN and COMMIT not counted)."""
    commits: int = 0
    """Write transactions committed: a group commit of many units counts once; on the engine, every
    committed transaction (a session's read ones included)."""
    writes: int = 0
    """Write units asked for (`Store.run(write=True)`)."""
    write_wait_s: float = 0.0
    """Seconds the callers of those write units waited, from handing a unit over to its commit."""

    def __sub__(self, other: StoreCounts) -> StoreCounts:
        values: dict[str, Any] = {
            f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)
        }
        return StoreCounts(**values)

    def per(self, n: int) -> dict[str, float]:
        """Each figure divided by `n` (per conversation), the wait in milliseconds."""
        n = max(1, n)
        return {
            "statements": round(self.statements / n, 1),
            "commits": round(self.commits / n, 2),
            "writes": round(self.writes / n, 1),
            "write_wait_ms": round(self.write_wait_s * 1000 / n, 2),
        }
