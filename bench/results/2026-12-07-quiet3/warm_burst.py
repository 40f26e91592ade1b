"""A fresh process's burst after a first burst of OTHER questions (a bot that has been serving), vs the
same process's burst of the questions it has just seen (vector caches emptied)."""

import asyncio
import os
import sys
from pathlib import Path

from bench import concurrency
from bench.burst_ab import _empty_caches
from bot.app import make_policy_index
from bot.config import load_settings

data = Path(sys.argv[1])
n = 200
KEYS = (
    "conversations_per_s",
    "loop_max_lag_above_idle_ms",
    "burst_cpu_ms_per_conversation",
    "burst_loop_cpu_ms_per_conversation",
    "burst_search_cpu_ms_per_conversation",
    "single_above_model_ms",
)


async def main():
    settings = load_settings(data_dir=data, llm_concurrency=n, edit_interval=0.0)
    index = await asyncio.to_thread(make_policy_index, settings)
    original = concurrency._script
    try:
        for label, offset in (("cold", None), ("other questions seen", 1000), ("these questions seen", 0)):
            if offset is not None:  # a burst of the same policies' questions first, not counted
                concurrency._script = lambda i, o=offset: [
                    {**s, "args": {**s["args"], "query": s["args"]["query"] + f" #{o}"}}
                    if s.get("tool") == "search_policy" and o
                    else s
                    for s in original(i)
                ]
                await concurrency.run(n, 0.05, data, policy_index=index, idle_s=0.5)
                concurrency._script = original
            _empty_caches(index)
            f = await concurrency.run(n, 0.05, data, policy_index=index, idle_s=1.0)
            print(
                f"{label:<22} load={os.getloadavg()[0]:.2f} " + " ".join(f"{k}={f[k]}" for k in KEYS),
                flush=True,
            )
    finally:
        index.close()


asyncio.run(main())
