"""The typed state of one `/ops draft` run and how a step's changes are merged into it.

Steps return only the keys they change (a dict); `merge` applies them and rejects unknown keys, so a
typo in a step (`"paln"`) fails at once instead of silently adding a field.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Literal

Status = Literal["running", "accepted", "capped", "failed"]
StateChanges = dict[str, Any]
"""What a step returns: only the keys it changed."""


@dataclass(frozen=True)
class StepRecord:
    """One finished step, as the progress stream and `/ops show` report it."""

    step: str
    """`planner`, `worker` or `reflection`."""
    text: str
    """One line for people (Korean first)."""


@dataclass(frozen=True)
class OpsState:
    """Everything the planner, worker and reflection steps read and write."""

    request: str
    """The staff member's request, as typed."""
    plan: str = ""
    """The planner's numbered plan: one line per item of the request."""
    draft: str = ""
    """The latest draft the worker produced (the best so far)."""
    evidence: tuple[str, ...] = ()
    """The worker's tool calls and what they returned: the figures a draft may rely on."""
    reflection: str = ""
    """The reviewer's feedback on the latest draft."""
    accepted: bool = False
    """The latest verdict: the draft covers every item of the request."""
    missing: tuple[str, ...] = ()
    """Items of the request the latest draft lacks (empty when accepted)."""
    reflection_count: int = 0
    """How many reviews ran; incremented by the reflection step itself, read by the cap."""
    history: tuple[StepRecord, ...] = ()
    """Finished steps in order; kept by the graph runner, not by the steps."""
    status: Status = "running"
    failed_step: str | None = None
    """The step that failed (status `failed`)."""
    error: str | None = None
    """Why it failed, one line."""

    @property
    def revisions(self) -> int:
        """Drafts written so far."""
        return sum(1 for r in self.history if r.step == "worker")


STATE_KEYS = frozenset(f.name for f in fields(OpsState))


def merge(state: OpsState, changes: StateChanges) -> OpsState:
    """A new state with `changes` applied; an unknown key is a programming error."""
    unknown = set(changes) - STATE_KEYS
    if unknown:
        raise KeyError(f"step returned unknown state keys: {sorted(unknown)}")
    return replace(state, **changes)
