"""Screenshots for a model that declares `vision`: the run's player message goes to the model with the
images as Chat Completions image parts (`{"type": "image_url", "image_url": {"url": "data:…"}}`).

A wrapper around the run's model, so neither the engine nor the thread's history carries image bytes:
the history keeps the text with its "[the player attached a screenshot: …]" line, and only the
model-bound copy of that message gains the parts.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

from bot.attachments.box import AttachmentBox, StoredAttachment

IMAGE_PURPOSES = frozenset({"loop", "synthesis"})


async def image_parts(box: AttachmentBox, images: list[StoredAttachment]) -> list[dict[str, Any]]:
    parts = []
    for image in images:
        data = base64.b64encode(await box.read(image)).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": f"data:{image.mime};base64,{data}"}})
    return parts


class VisionLLM:
    """`llm` with `parts` added to the player message whose text is `query`, in loop and synthesis calls."""

    def __init__(self, llm: Any, query: str, parts: list[dict[str, Any]]) -> None:
        self.inner = llm
        self.query = query
        self.parts = parts

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def abilities(self) -> dict[str, Any]:
        return self.inner.abilities

    def _with_images(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = list(messages)
        for index in range(len(out) - 1, -1, -1):
            message = out[index]
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, str) and self.query in content:
                out[index] = {**message, "content": [{"type": "text", "text": content}, *self.parts]}
                break
        return out

    async def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        if kwargs.get("purpose", "loop") in IMAGE_PURPOSES:
            messages = self._with_images(messages)
        return await self.inner.chat(messages, **kwargs)

    def stream_chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> AsyncIterator[str]:
        if kwargs.get("purpose", "synthesis") in IMAGE_PURPOSES:
            messages = self._with_images(messages)
        return self.inner.stream_chat(messages, **kwargs)


async def with_vision(llm: Any, box: AttachmentBox | None, query: str, images: list[StoredAttachment]) -> Any:
    """`llm` itself, or — when it declares `vision` and the message came with images — a `VisionLLM`."""
    if box is None or not images or not llm.abilities.get("vision"):
        return llm
    return VisionLLM(llm, query, await image_parts(box, images))
