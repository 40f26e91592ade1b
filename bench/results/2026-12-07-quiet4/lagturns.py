import asyncio
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout
from bench import concurrency, loop_stalls

turn_no = [0]
turn_starts = []
orig_run_once = asyncio.base_events.BaseEventLoop._run_once


def run_once(self):
    turn_no[0] += 1
    turn_starts.append((time.perf_counter(), len(self._ready)))
    return orig_run_once(self)


asyncio.base_events.BaseEventLoop._run_once = run_once

calls = []  # (start, wall_ms, cpu_ms, owner, turn, gave_way_state)
orig = asyncio.events.Handle._run


def timed(h):
    w, c = time.perf_counter(), time.thread_time()
    try:
        orig(h)
    finally:
        calls.append(
            (
                w,
                (time.perf_counter() - w) * 1000,
                (time.thread_time() - c) * 1000,
                loop_stalls._owner(h),
                turn_no[0],
            )
        )


async def main():
    dogs = []
    asyncio.events.Handle._run = timed
    with tempfile.TemporaryDirectory() as tmp:
        figs = await concurrency.run(200, 0.05, Path(tmp), watch=dogs)
    asyncio.events.Handle._run = orig
    print({k: figs[k] for k in ("conversations_per_s", "loop_max_lag_ms", "idle_loop_max_lag_ms")})
    t0 = dogs[0].started
    # per turn totals
    turns = {}
    for w, wall, cpu, owner, t in calls:
        if w < t0:
            continue
        d = turns.setdefault(t, [0, 0.0, 0.0, Counter(), Counter()])
        d[0] += 1
        d[1] += wall
        d[2] += cpu
        d[3][owner] += cpu
        d[4][owner] += 1
    top = sorted(turns.items(), key=lambda kv: -kv[1][1])[:8]
    for t, (n, wall, cpu, by, cnt) in top:
        print(f"turn {t}: {n} callbacks wall {wall:.1f} cpu {cpu:.1f}")
        for owner, ms in by.most_common(4):
            print(f"     {owner:55s} n={cnt[owner]:4d} cpu {ms:.1f}")
    # distribution of single callback cpu by owner
    per = {}
    for w, _wall, cpu, owner, _turn in calls:
        if w >= t0:
            per.setdefault(owner, []).append(cpu)
    for owner, xs in sorted(per.items(), key=lambda kv: -sum(kv[1]))[:8]:
        xs.sort()
        print(
            f"{owner:55s} n={len(xs):5d} sum {sum(xs):7.1f} p50 {xs[len(xs) // 2]:.3f} p99 {xs[int(len(xs) * 0.99)]:.3f} max {xs[-1]:.2f}"
        )


asyncio.run(main())
