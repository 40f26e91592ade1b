"""A model that holds its first `loop` call until the test releases it, so the run stays active while the
test sends more messages (used by the Discord and web tests)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.llm import FunctionLLM, ModelRequest, ScriptedLLM, around


@dataclass
class Held:
    """`llm` serves `script`, holding its first loop call: `holding` is set once it waits; `release()`."""

    script: ScriptedLLM
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    llm: FunctionLLM = field(init=False)

    def __post_init__(self) -> None:
        self.llm = around(self.script, self._hold)

    async def _hold(self, request: ModelRequest) -> None:
        if request.purpose == "loop" and self.script.loop_calls == 0:
            self.holding.set()
            await self.gate.wait()

    def release(self) -> None:
        self.gate.set()
