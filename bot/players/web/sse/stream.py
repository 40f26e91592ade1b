"""One web run's event stream: `WebSurface` is the channel surface `Conversations` renders into, and
`RunStream` keeps the numbered SSE events so any number of readers can follow (or resume) it.

A stream lives as long as the `Conversations.handle` calls that feed it: the first POST of a thread
starts it, a POST while it runs joins it (an interrupt), and a message that arrives after the run's
last drain starts the next run on the same stream. The HTTP connection is only a reader: closing it
stops nothing, and the answer is persisted by `Conversations` as for any channel.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.attachments.texts import without_model_notes
from bot.conversations.surface import ChannelTraits, SurfaceBase
from bot.guards.output import OutputGuard
from bot.vocabulary.catalogue import Text
from bot.web_kit.sse.step_cleaning import StepCleaner
from bot.web_kit.sse.wire import WireEvent, answer_payload, done_payload, step_payload
from tools.base import ToolRegistry

log = logging.getLogger(__name__)

HANDOFF_ACK = Text(
    "상담원이 곧 답변드릴게요. 메시지는 상담원에게 전달되었어요.",
    "A member of our support team will reply shortly; your message has been passed on.",
)
"""The reply to a message sent while staff have the conversation (the bot does not answer it)."""


class RunStream:
    """Numbered events of one stream, readable from any point while it runs and for a while after."""

    def __init__(
        self, stream_id: str, thread_id: str, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.id = stream_id
        self.thread_id = thread_id
        self.events: list[WireEvent] = []
        self.closed = False
        self.closed_at: float | None = None
        self._clock = clock
        self._wakeup = asyncio.Event()
        self._feeders = 0
        self.surface: Any = None
        """The `WebSurface` writing into this stream; None for a staff reply's stream."""
        self.seq = 0
        """Its number in the order streams started (`StreamRegistry.add`)."""

    def publish(self, channel: str, payload: dict[str, Any]) -> WireEvent:
        event = WireEvent(f"{self.id}-{len(self.events) + 1}", channel, payload)
        self.events.append(event)
        self._notify()
        return event

    def _notify(self) -> None:
        # Wake every reader waiting now; later waits use a fresh event.
        self._wakeup.set()
        self._wakeup = asyncio.Event()

    # ---- feeders (the `Conversations.handle` calls writing into this stream) ------------------------

    @property
    def open(self) -> bool:
        return not self.closed

    @property
    def joinable(self) -> bool:
        """A player's message may join it (as an interrupt): a run writes into it. A staff reply's stream
        carries that reply only: a message sent meanwhile gets a stream and a run of its own."""
        return self.open and self.surface is not None

    def feed(self, task: asyncio.Task[Any], on_close: Callable[[], Any]) -> None:
        """Count `task` as a writer; the stream closes (after `on_close`) when the last writer ends."""
        self._feeders += 1

        def done(_: asyncio.Task[Any]) -> None:
            self._feeders -= 1
            if self._feeders == 0 and not self.closed:
                on_close()
                self.closed = True
                self.closed_at = self._clock()
                self._notify()

        task.add_done_callback(done)

    # ---- readers -----------------------------------------------------------------------------------

    def seq_of(self, event_id: str | None) -> int:
        """Events already seen by a reader that last saw `event_id` (0 when unknown or another stream's)."""
        if not event_id:
            return 0
        prefix, _, seq = event_id.rpartition("-")
        if prefix != self.id or not seq.isdigit():
            return 0
        return min(int(seq), len(self.events))

    async def follow(self, after: int = 0) -> AsyncIterator[WireEvent]:
        """Every event after the first `after`, then each new one as it is published, until closed."""
        index = after
        while True:
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.closed:
                return
            await self._wakeup.wait()


@dataclass
class _Segment:
    """One run inside a stream (a stream holds several when messages arrive after a run's last drain)."""

    started: float
    iterations: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    loop_done: bool = False
    answering: bool = False
    shown: str = ""
    """The answer text the browser has (the guarded text the renderer laid out)."""
    finished: bool = False
    run_id: str | None = None
    """The run this answer belongs to (what the widget's 👍 / 👎 names); None for a notice."""


class WebSurface(SurfaceBase):
    """The `Surface` `Conversations` renders into, publishing seed-000 events on a `RunStream`.

    Each run's reply is one segment, begun by `start_run` (which names the run the widget's 👍 / 👎
    rates). Step events come from the engine (`on_event`, which `Conversations` calls for the run this
    surface serves), cleaned by `StepCleaner`; the status line is not drawn from `status` but from those
    steps (`iteration.label`); answer deltas come from the renderer's edits, i.e. the text the output
    guard released, never the model's raw deltas.
    """

    traits = ChannelTraits(max_chars=1_000_000, edit_interval=0.0)
    """One message per answer (the browser needs no splitting), and every released piece goes out at once
    (the renderer's throttle is for Discord's rate limits)."""

    def __init__(
        self,
        stream: RunStream,
        *,
        guard: OutputGuard,
        protected_texts: list[str] | None = None,
        tools: ToolRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.guard = guard
        self.tools = tools
        """Where a tool's own status line comes from (`iteration.label`)."""
        self.cleaner = StepCleaner(guard, protected_texts=protected_texts or ())
        self._clock = clock
        self._handles = 0
        self._segment: _Segment | None = None
        self.reactions = 0

    # ---- engine events -----------------------------------------------------------------------------

    async def start_run(self, run_id: str) -> None:
        # The previous run of this stream, if any, is over.
        self._close_segment()
        self._segment = _Segment(started=self._clock(), run_id=run_id)

    async def on_event(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        channel = getattr(event, "channel", None)
        seg = self._segment
        if seg is None:  # events of a run that did not say it started (a test driving the surface)
            seg = self._segment = _Segment(started=self._clock())
        if kind == "thinking" and event.status == "start":
            seg.iterations = max(seg.iterations, event.iteration)
        if kind == "done":
            seg.iterations = event.iterations
            seg.usage = dict(event.usage)
            seg.loop_done = True
            return
        if kind == "answer" and channel == "answer":
            if event.status == "start" and not seg.answering:
                seg.answering = True
                self.stream.publish("answer", answer_payload("start"))
            return  # deltas: from the guarded text (edits); done: when the segment closes
        wire = step_payload(event)
        if wire is None:
            return
        name, payload = wire
        if kind == "iteration" and self.tools is not None:
            payload["label"] = {lang: self.tools.status_line(event.tool_name, lang) for lang in ("ko", "en")}
        if name == "inject":  # what the player wrote (the widget shows it), without the model's file notes
            payload["content"] = without_model_notes(str(payload.get("content") or ""))
        self.stream.publish(name, await self.cleaner.clean(name, payload))

    # ---- the Surface protocol ----------------------------------------------------------------------

    async def status(self, text: str, handle: Any | None) -> Any:
        # Tool progress is drawn from the step events (`iteration.label`), in the player's language.
        if handle is None:
            self._handles += 1
            handle = self._handles
        return handle

    async def send(self, text: str) -> int:
        self._handles += 1
        await self._show(text, new_message=True)
        return self._handles

    async def edit(self, handle: Any, text: str) -> None:
        await self._show(text, new_message=False)

    async def react(self, ref: Any, emoji: str) -> None:
        # A follow-up joined the run: the browser already shows it; the `inject` event follows.
        self.reactions += 1

    async def notice(self, text: str) -> None:
        await self._show(text, new_message=True)

    async def ephemeral(self, text: str) -> None:
        self._notice(text)

    async def _show(self, text: str, *, new_message: bool) -> None:
        seg = self._segment
        if seg is None or not seg.answering:
            self._notice(text)
            return
        if text.startswith(seg.shown):
            delta = text[len(seg.shown) :]
            if delta:
                seg.shown = text
                self.stream.publish("answer", answer_payload("delta", delta))
        elif new_message:
            # Something after the answer (e.g. "stopped"): its own answer.
            self._close_segment()
            self._notice(text)
        else:
            # The final text differs from what streamed (a broken stream replaced by the loop's
            # complete answer): `done.answer` carries the text to show.
            seg.shown = text

    def _notice(self, text: str) -> None:
        """A reply that is not a streamed answer (refusal, failure, stop, command reply): a whole answer."""
        seg = self._segment
        if seg is None or seg.finished:
            seg = self._segment = _Segment(started=self._clock())
        if not seg.answering:
            seg.answering = True
            self.stream.publish("answer", answer_payload("start"))
        if seg.shown:
            text = "\n\n" + text
        seg.shown += text
        self.stream.publish("answer", answer_payload("delta", text))
        self._close_segment()

    def _close_segment(self) -> None:
        seg = self._segment
        if seg is None or seg.finished:
            return
        seg.finished = True
        if seg.answering:
            self.stream.publish("answer", answer_payload("done"))
        elapsed = self._clock() - seg.started
        self.stream.publish("done", done_payload(seg.shown, seg.iterations, seg.usage, elapsed, seg.run_id))

    def acknowledge_handoff(self, locale: str) -> None:
        """Staff have taken the conversation over: the message is stored for them, and the player is told
        a person will answer (the stream ends with its `done` like any reply)."""
        seg = self._segment
        if seg is not None and not seg.finished and seg.run_id is not None:
            return  # joined a run still answering (taken over meanwhile): its answer is not cut in two
        self._notice(HANDOFF_ACK(locale))

    def close(self) -> None:
        """The stream ends: the last run's `answer` done and `done` go out."""
        self._close_segment()
