"""Per worst stall: the loop callbacks inside it, their CPU, wall, run-queue, and the gaps."""

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout
from bench import concurrency, loop_stalls


async def main():
    dogs = []
    rec = loop_stalls.StepRecorder(over_ms=-1, wall_over_ms=-1)
    col = loop_stalls.CollectorTimer()
    with tempfile.TemporaryDirectory() as tmp, col, rec:
        figs = await concurrency.run(200, 0.05, Path(tmp), watch=dogs)
    print({k: figs[k] for k in ("conversations_per_s", "loop_max_lag_ms", "idle_loop_max_lag_ms")})
    late = sorted(dogs[0].late, key=lambda dw: dw[0] - dw[1])[:8]
    waits = rec.waits  # (start, wall_ms, cpu_ms, runq_ms, owner)
    for due, woke in late:
        inside = [w for w in waits if w[0] + w[1] / 1000 > due and w[0] < woke]
        wall = sum(w[1] for w in inside)
        cpu = sum(w[2] for w in inside)
        rq = sum(w[3] for w in inside)
        gcs = [(g, round((e - s) * 1000, 1)) for g, s, e in col.pauses if e > due and s < woke]
        print(
            f"lag {(woke - due) * 1000:6.1f} ms: {len(inside)} callbacks wall {wall:.1f} cpu {cpu:.1f} runq {rq:.1f} gaps {(woke - due) * 1000 - wall:.1f}  gc {gcs}"
        )
        from collections import Counter

        c = Counter()
        cw = Counter()
        for w in inside:
            c[w[4]] += w[2]
            cw[w[4]] += w[1]
        for owner, ms in cw.most_common(6):
            print(f"      {owner:60s} wall {ms:6.1f} cpu {c[owner]:6.1f}")


asyncio.run(main())
