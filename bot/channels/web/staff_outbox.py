"""The web process's side of the staff outbox: it claims the console's replies to `web:` threads.

The reply is already in the thread's history, which is what the widget shows on its next history poll;
if the player's stream is open at that moment, the reply is also published on it as an answer segment.
"""

from __future__ import annotations

from fastapi import FastAPI

from bot.channels.web.wire import answer_payload
from bot.store.outbox import OutboxPoller, OutboxReply

PREFIX = "web:"


def web_outbox(app: FastAPI, *, interval: float = 1.0) -> OutboxPoller:
    async def deliver(reply: OutboxReply) -> None:
        stream = app.state.streams.open_stream(reply.thread_id)
        if stream is not None:
            stream.publish("answer", answer_payload("start"))
            stream.publish("answer", answer_payload("delta", reply.text))
            stream.publish("answer", answer_payload("done"))

    return OutboxPoller(app.state.web.conversations.store, PREFIX, deliver, interval=interval)
