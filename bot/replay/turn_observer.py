"""`TurnObserver`: the run hooks one replay turn watches its thread with (`Conversations.watch`). It records
the engine events, tools and codes the turn's expectations read, and delivers the turn's scripted
interrupts at their `after_step`, inside the event of that step, as a channel message would arrive."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bot.conversations import Incoming
from bot.conversations.hooks import RunHooks, RunInfo
from bot.conversations.surface import Surface
from bot.llm.scripted import ScriptedLLM
from bot.replay.expectations import TurnRecord
from bot.replay.format import Interrupt, Turn


@dataclass
class TurnObserver(RunHooks):
    conv: Any
    """The `Conversations` the turn runs in (interrupts enter through its `handle`)."""
    thread: str
    turn: Turn
    rec: TurnRecord
    """What the turn did, filled in as its events arrive."""
    surface: Surface
    scripted: ScriptedLLM | None
    """The turn's script; None for a live model (interrupts then count the model's replies)."""
    roles: set[str]
    """The roles of the turn's speaker (an interrupt without its own `as`/`roles` speaks with them)."""
    staff_role: str
    first_player: str | None
    pending: list[Interrupt] = field(init=False)
    """Interrupts not delivered yet (a turn that ends with some is a failed turn)."""
    _replies: int = field(init=False, default=-1)

    def __post_init__(self) -> None:
        self.pending = sorted(self.turn.interrupts, key=lambda i: i.after_step)

    async def on_event(self, run: RunInfo, event: Any) -> None:
        kind = getattr(event, "type", "")
        status = getattr(event, "status", None)
        self.rec.events.append(kind)
        if kind == "iteration" and status == "done":
            # From the events, not the run results: a stopped run has no result but did call tools.
            self.rec.tools.append(str(getattr(event, "tool_name", "")))
            self.rec.codes.append(str(getattr(event, "code", "")))
            self.rec.observations.append(str(getattr(event, "observation", "") or ""))
        if not self.pending:
            return
        scripted = self.scripted
        if scripted is None:
            if kind == "thinking" and status == "done":
                self._replies += 1
            if (kind == "iteration" and status == "done") or (kind == "thinking" and status == "done"):
                await self._deliver(self._replies)
            return
        step = scripted.current_step
        if step is None:
            return
        spec = scripted.steps[step]
        no_tools = "final" in spec or "raw" in spec
        if kind == "iteration" and status == "done" and not no_tools:
            if scripted.pending_calls_in_step == 0:
                await self._deliver(step)
        elif kind == "thinking" and status == "done" and no_tools:
            await self._deliver(step)

    async def _deliver(self, step: int) -> None:
        while self.pending and self.pending[0].after_step <= step:
            intr = self.pending.pop(0)
            if intr.roles is not None:
                who_roles = {self.staff_role if r == "staff" else r for r in intr.roles}
            else:
                who_roles = self.roles if intr.as_ is None else set()
            who = await self.conv.resolve_actor(intr.as_ or self.turn.as_ or self.first_player, who_roles)
            # Its own task, as a channel message would be: a staff `/stop` cancels the run this
            # callback belongs to, and the command must still finish (reply, audit).
            incoming = Incoming(self.thread, who, intr.text, ref=f"interrupt:{intr.after_step}")
            await asyncio.shield(asyncio.ensure_future(self.conv.handle(incoming, self.surface)))
