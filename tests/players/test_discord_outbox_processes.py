"""The outbox across processes: another process (the console's) writes the reply into the shared
database and the Discord process posts it; two deliverer processes claim one row only once."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from bot.llm.scripted import ScriptedLLM
from bot.store.outbox import enqueue_reply
from tests.support.fake_discord import FakeDiscord

SUPPORT = FakeDiscord.SUPPORT_CHANNEL
THREAD = f"discord:{SUPPORT}"

WRITER = """
import asyncio, sys
from bot.store import Store
from bot.store.outbox import enqueue_reply

async def main() -> None:
    store = Store(sys.argv[1])
    await store.open(create=False)
    print(await enqueue_reply(store, sys.argv[2], "Mina", sys.argv[3]))
    await store.close()

asyncio.run(main())
"""

DELIVERER = """
import asyncio, sys
from bot.store import Store
from bot.store.outbox import OutboxPoller

async def main() -> None:
    store = Store(sys.argv[1])
    await store.open(create=False)
    async def deliver(reply) -> None:
        print("posted", reply.id, flush=True)
    print("count", await OutboxPoller(store, "discord:", deliver).deliver_pending())
    await store.close()

asyncio.run(main())
"""


async def _python(code: str, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=os.environ.copy(),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.slow
async def test_a_reply_written_by_another_process_is_posted_by_the_discord_process(harness, fake):
    running = await harness.start(ScriptedLLM([]), outbox_interval=0.05)
    url = running.app.store.url

    reply_id = int(await _python(WRITER, url, THREAD, "다른 프로세스에서 보낸 답변"))

    posted = await fake.wait_for(lambda: fake.bot_messages(SUPPORT), what="the reply from the other process")
    assert [m["content"] for m in posted] == ["**상담원 · Staff Mina**\n다른 프로세스에서 보낸 답변"]
    assert reply_id > 0


@pytest.mark.slow
async def test_two_deliverer_processes_post_one_row_once(harness):
    running = await harness.start(ScriptedLLM([]))
    await running.bot.outbox.stop()  # only the two child processes deliver
    store = running.app.store
    reply_id = await enqueue_reply(store, "discord:1", "Mina", "한 번만")

    outputs = await asyncio.gather(*(_python(DELIVERER, store.url) for _ in range(2)))

    lines = [line for out in outputs for line in out.splitlines()]
    assert [line for line in lines if line.startswith("posted")] == [f"posted {reply_id}"]
    assert sorted(line for line in lines if line.startswith("count")) == ["count 0", "count 1"]
