"""The web process's side of the staff outbox: it claims the console's replies to `web:` threads.

The reply is already in the thread's history. It also goes out live: on the player's open stream if a run
is going, else as a stream of its own (one answer and its `done`, `run_id` null), which a client waiting
with `GET /api/threads/{thread}/events?wait=` receives and a `Last-Event-ID` reconnect can resume.
"""

from __future__ import annotations

import asyncio

from fastapi import FastAPI

from bot.players.web.sse.stream import RunStream
from bot.store.outbox import REPLY_TTL, OutboxPoller, OutboxReply
from bot.web_kit.sse.wire import answer_payload, done_payload

PREFIX = "web:"


def web_outbox(app: FastAPI, *, interval: float = 1.0) -> OutboxPoller:
    async def deliver(reply: OutboxReply) -> None:
        streams = app.state.streams
        stream = streams.open_stream(reply.thread_id)
        if stream is not None:
            _publish(stream, reply)
            return
        deps = app.state.web
        stream = RunStream(deps.new_id(), reply.thread_id, clock=deps.clock)

        async def feed() -> None:
            _publish(stream, reply)
            stream.publish(
                "done", done_payload(reply.text, 0, {}, 0.0, None, by="staff", staff_name=reply.staff)
            )

        streams.add(stream)
        stream.feed(asyncio.create_task(feed()), lambda: streams.close(stream))

    # The console's process also gives up on every channel's replies nobody posted in time (`dm:`
    # threads, channels no running process sees), so none stays pending forever.
    return OutboxPoller(
        app.state.web.conversations.store, PREFIX, deliver, interval=interval, expire_after=REPLY_TTL
    )


def _publish(stream: RunStream, reply: OutboxReply) -> None:
    # `by` and `staff_name` on the answer events too: on a run's open stream they tell the reply from the
    # run's own answer (the widget draws it apart, signed with the name).
    signed = {"by": "staff", "staff_name": reply.staff}
    stream.publish("answer", {**answer_payload("start"), **signed})
    stream.publish("answer", {**answer_payload("delta", reply.text), **signed})
    stream.publish("answer", {**answer_payload("done"), **signed})
