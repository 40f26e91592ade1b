"""The model of a replayed turn, noting what each loop call was sent (for `expect.model_saw`)."""

from __future__ import annotations

from typing import Any

from bot.llm.scripted import ScriptedLLM


class RecordingScriptedLLM(ScriptedLLM):
    """The scripted model, also noting which script step each loop call served and what it was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loop_inputs: list[tuple[int | None, list[dict[str, Any]]]] = []

    async def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        result = await super().chat(messages, **kwargs)
        if kwargs.get("purpose", "loop") == "loop":
            self.loop_inputs.append((self.current_step, list(messages)))
        return result


class RecordingLLM:
    """A live model with the loop calls' inputs noted (`--live`: the n-th loop call is "step" n)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.loop_inputs: list[tuple[int | None, list[dict[str, Any]]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if kwargs.get("purpose", "loop") == "loop":
            self.loop_inputs.append((len(self.loop_inputs), list(messages)))
        return await self._inner.chat(messages, **kwargs)

    def stream_chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        return self._inner.stream_chat(messages, **kwargs)
