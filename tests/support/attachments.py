"""The attachment tests' app holder: an app whose runs take scripted models from a queue."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.app import App
from bot.llm.scripted import ScriptedLLM


@dataclass
class AttachApp:
    app: App
    data_dir: Path
    queue: list[Any] = field(default_factory=list)

    @property
    def conv(self) -> Any:
        return self.app.conversations

    def script(self, *steps: dict[str, Any]) -> None:
        self.queue.append(ScriptedLLM(list(steps)))
