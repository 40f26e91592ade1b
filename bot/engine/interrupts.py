"""`InterruptQueue`: messages a user sends while a run on their thread is still working.

One queue per thread, owned by the conversations layer; the engine drains it at the points the
seed allows (JSON mode: after each assistant message; native mode: after all tool results).
"""

from __future__ import annotations

from bot.vocabulary.interrupt import INTERRUPT_PREFIX


class InterruptQueue:
    """FIFO of follow-up messages plus a cooperative stop flag. Single event loop, so no locking."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self._stop = False

    def put(self, text: str) -> None:
        self._items.append(text)

    def drain(self) -> list[str]:
        """Everything queued so far, oldest first; the queue is empty afterwards."""
        items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def request_stop(self) -> None:
        """Ask the running loop to stop at its next safe point (stopped_reason `cancelled`)."""
        self._stop = True

    @property
    def stop_requested(self) -> bool:
        return self._stop


def interrupt_message(texts: list[str]) -> str:
    """Several messages of one drain become one user message, so the model answers them together."""
    if len(texts) == 1:
        return f"{INTERRUPT_PREFIX} {texts[0]}"
    lines = "\n".join(f"- {t}" for t in texts)
    return f"{INTERRUPT_PREFIX} The user sent these messages while you were working:\n{lines}"
