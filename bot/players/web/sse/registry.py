"""The open SSE stream of each web thread and the recently finished ones, shared by the player's chat
routes, the staff replies published into a thread (`sse.outbox`) and the staff console's live view."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.players.web.sse.stream import RunStream

STREAM_RETENTION = 600.0
"""Seconds a finished stream stays resumable (`Last-Event-ID`); after that the history endpoint serves it."""


class StreamRegistry:
    """The open stream of each web thread, and recently finished ones (for `Last-Event-ID`).

    Streams are numbered as they start (`seq`, the `X-Arca-Cursor` a client is given): a client that
    names the last number it knew (`next_after`) gets a stream that started and ended while it was not
    waiting, e.g. a staff reply between two of the widget's waits."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.active: dict[str, RunStream] = {}
        self.finished: dict[str, RunStream] = {}
        """By stream id."""
        self.seq = 0
        """Streams started so far in this process (the latest stream's `seq`)."""
        self._recent: dict[str, list[RunStream]] = {}
        """The open and the retained finished streams of each thread, oldest first."""
        self._waiters: dict[str, list[asyncio.Future[RunStream | None]]] = {}
        self._stopped = False

    def open_stream(self, thread_id: str) -> RunStream | None:
        stream = self.active.get(thread_id)
        return stream if stream is not None and stream.open else None

    def add(self, stream: RunStream) -> None:
        self.seq += 1
        stream.seq = self.seq
        self.active[stream.thread_id] = stream
        self._recent.setdefault(stream.thread_id, []).append(stream)
        for waiter in self._waiters.pop(stream.thread_id, []):
            if not waiter.done():
                waiter.set_result(stream)

    def next_after(self, thread_id: str, seq: int) -> RunStream | None:
        """The thread's first stream (open or finished, still kept) that started after stream `seq`."""
        self.prune()
        return next((s for s in self._recent.get(thread_id, ()) if s.seq > seq), None)

    def waiting(self, thread_id: str) -> int:
        """Requests waiting for the thread's next stream."""
        return len(self._waiters.get(thread_id, ()))

    def release_waiters(self, *, for_good: bool = False) -> None:
        """Every wait ends now, empty; `for_good` (the server stops): later ones end at once too."""
        self._stopped = self._stopped or for_good
        for waiters in list(self._waiters.values()):
            for waiter in list(waiters):
                if not waiter.done():
                    waiter.set_result(None)

    async def wait_stream(self, thread_id: str, within: float) -> RunStream | None:
        """The thread's open stream, or the next one to start within `within` s (e.g. a staff reply;
        it may have ended by the time the caller reads it: its events are kept)."""
        stream = self.open_stream(thread_id)
        if stream is not None or self._stopped:
            return stream
        waiter: asyncio.Future[RunStream | None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(thread_id, [])
        waiters.append(waiter)
        try:
            return await asyncio.wait_for(waiter, within)
        except TimeoutError:
            return None
        finally:
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters and self._waiters.get(thread_id) is waiters:
                del self._waiters[thread_id]

    def close(self, stream: RunStream) -> None:
        if self.active.get(stream.thread_id) is stream:
            del self.active[stream.thread_id]
        self.finished[stream.id] = stream
        self.prune()

    def prune(self) -> None:
        now = self._clock()
        for sid, stream in list(self.finished.items()):
            if stream.closed_at is not None and now - stream.closed_at > STREAM_RETENTION:
                del self.finished[sid]
                kept = [s for s in self._recent.get(stream.thread_id, ()) if s is not stream]
                if kept:
                    self._recent[stream.thread_id] = kept
                else:
                    self._recent.pop(stream.thread_id, None)

    def find(self, thread_id: str, stream_id: str) -> RunStream | None:
        self.prune()
        active = self.active.get(thread_id)
        if active is not None and active.id == stream_id:
            return active
        stream = self.finished.get(stream_id)
        return stream if stream is not None and stream.thread_id == thread_id else None
