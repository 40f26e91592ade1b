"""Where the burst's event-loop stalls come from.

Runs the 200-conversation burst of `bench.concurrency` (or, `--bench incident`, the 10,000-coupon bulk
run of `bench.incident_bulk` on SQLite) with a thread that samples every thread's stack
each millisecond and the garbage collector's pauses timed, then attributes each late wake-up of the
loop watchdog (over `--over` ms) to what the loop thread was running meanwhile: the innermost frame of
our code (`bot/`, `tools/`, `bench/`) and the innermost frame of all, with how many samples each got.
A stall in which the loop thread sat in the selector means it waited for the GIL, not that it worked:
the other threads' frames of that stall are printed then.

The loop's longest steps by wall time are split (Linux scheduler figures of the loop thread) into time on
a CPU, time runnable but waiting for a CPU (the machine is busy), and the rest: the thread asleep inside
the step, which is a wait for the GIL (or a lock, or I/O). `--no-sampler` leaves the stack sampler out
(its thread takes the GIL every millisecond) for that split alone.

    python -m bench.loop_stalls [--bench burst|incident] [--conversations 200] [--over 20] [--top 12]
                                [--no-sampler]

Prints the stalls by length, the culprits summed over all stalls, the collector's pauses by generation,
the longest steps split as above (`loop_max_step_wall_ms`, `…_cpu_ms`, `…_run_queue_ms`), and
`loop_stall_culprit=…` for the culprit with the most stalled milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import concurrency, incident_bulk

OURS = ("/bot/", "/tools/", "/bench/")
SELECTOR = "select"
"""The loop's wait for I/O: a stalled loop thread found here was waiting for the GIL."""


def _where(frame: FrameType) -> str:
    code = frame.f_code
    path = code.co_filename
    for marker in (*OURS, "/site-packages/", "/lib/python3"):
        if marker in path:
            path = path[path.index(marker) + 1 :]
            break
    return f"{path}:{frame.f_lineno} {code.co_name}"


def _is_ours(frame: FrameType) -> bool:
    path = frame.f_code.co_filename
    return (
        any(marker in path for marker in OURS) and "/site-packages/" not in path and "loop_stalls" not in path
    )


@dataclass(frozen=True)
class Sample:
    at: float
    innermost: str
    ours: str | None
    """The innermost frame of our code on the loop thread's stack (None: none of ours)."""
    others: tuple[str, ...]
    """The innermost frame of every other busy thread."""


@dataclass
class Sampler:
    """Samples the loop thread's stack (and the other threads' innermost frames) every `interval` s."""

    loop_thread: int
    interval: float = 0.001
    samples: list[Sample] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.is_set():
            frames = sys._current_frames()
            loop_frame = frames.get(self.loop_thread)
            if loop_frame is not None:
                ours = loop_frame
                while ours is not None and not _is_ours(ours):
                    ours = ours.f_back
                others = tuple(
                    _where(f)
                    for tid, f in frames.items()
                    if tid not in (me, self.loop_thread) and not _idle(f)
                )
                self.samples.append(
                    Sample(time.perf_counter(), _where(loop_frame), _where(ours) if ours else None, others)
                )
            time.sleep(self.interval)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="loop-stall-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _idle(frame: FrameType) -> bool:
    """A worker thread waiting for work (its innermost frame is a wait in threading or queue)."""
    name = frame.f_code.co_name
    return name in ("wait", "get", "_worker", "select", "poll") or "threading.py" in frame.f_code.co_filename


def _owner(handle: Any) -> str:
    """The coroutine a loop callback steps (a task's), or the callback's own name."""
    callback = getattr(handle, "_callback", None)
    task = getattr(callback, "__self__", None)
    if isinstance(task, asyncio.Task):
        coro = task.get_coro()
        return getattr(coro, "__qualname__", repr(coro))
    return getattr(callback, "__qualname__", repr(callback))


def _schedstat_reader() -> Any:
    """A reader of the calling thread's scheduler figures (Linux `/proc/thread-self/schedstat`): its
    nanoseconds on a CPU and waiting in a run queue (runnable, but no CPU free). None elsewhere."""
    try:
        fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    except OSError:
        return None

    def read() -> tuple[int, int]:
        on_cpu, queued, _ = os.pread(fd, 64, 0).split()
        return int(on_cpu), int(queued)

    return read


@dataclass
class StepRecorder:
    """Every loop callback that held the loop thread for more than `over_ms` of CPU: (wall start, wall end,
    CPU ms, the coroutine it stepped). A stall with no long step in it was the loop waiting (the GIL or
    the OS), not working.

    Also every callback longer than `wall_over_ms` of wall time, in `waits`: (wall start, wall ms, CPU ms,
    ms waiting for a CPU in the run queue, owner). What is neither CPU nor run queue is the loop thread
    asleep inside the step: waiting for the GIL (or a lock, or I/O)."""

    over_ms: float = 5.0
    wall_over_ms: float = 10.0
    steps: list[tuple[float, float, float, str]] = field(default_factory=list)
    waits: list[tuple[float, float, float, float, str]] = field(default_factory=list)
    _original: Any = None

    def __enter__(self) -> StepRecorder:
        handle = asyncio.events.Handle
        original = self._original = handle._run
        recorder = self
        schedstat = _schedstat_reader()

        def timed(h: Any) -> None:
            wall, cpu = time.perf_counter(), time.thread_time()
            queued = schedstat()[1] if schedstat is not None else 0
            try:
                original(h)
            finally:
                end = time.perf_counter()
                spent = (time.thread_time() - cpu) * 1000
                if spent > recorder.over_ms:
                    recorder.steps.append((wall, end, spent, _owner(h)))
                if (end - wall) * 1000 > recorder.wall_over_ms:
                    waited = (schedstat()[1] - queued) / 1e6 if schedstat is not None else float("nan")
                    recorder.waits.append(((wall), (end - wall) * 1000, spent, waited, _owner(h)))

        handle._run = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]


@dataclass
class CollectorTimer:
    """The garbage collector's pauses: (generation, start, end) from `gc.callbacks`."""

    pauses: list[tuple[int, float, float]] = field(default_factory=list)
    _started: float = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], self._started, time.perf_counter()))

    def __enter__(self) -> CollectorTimer:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def attribute(
    late: list[tuple[float, float]],
    samples: list[Sample],
    pauses: list[tuple[int, float, float]],
    steps: list[tuple[float, float, float, str]],
    over_ms: float,
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Each stall over `over_ms` with its culprits, and the stalled milliseconds summed per culprit."""
    stalls: list[dict[str, Any]] = []
    blame: Counter[str] = Counter()
    for due, woke in late:
        lag = (woke - due) * 1000
        if lag <= over_ms:
            continue
        inside = [s for s in samples if due <= s.at <= woke]
        ours = Counter(s.ours or f"(not ours) {s.innermost}" for s in inside)
        innermost = Counter(s.innermost for s in inside)
        waiting = sum(1 for s in inside if s.innermost.endswith(f" {SELECTOR}"))
        others = Counter(o for s in inside for o in s.others)
        long_steps = [
            (round(cpu, 1), owner) for start, end, cpu, owner in steps if end > due and start < woke
        ]
        gc_ms = defaultdict(float)
        for gen, start, end in pauses:
            overlap = min(end, woke) - max(start, due)
            if overlap > 0:
                gc_ms[gen] += overlap * 1000
        stalls.append(
            {
                "lag_ms": round(lag, 1),
                "samples": len(inside),
                "waiting_for_gil": waiting,
                "ours": ours.most_common(3),
                "innermost": innermost.most_common(3),
                "other_threads": others.most_common(3),
                "gc_ms": {g: round(ms, 1) for g, ms in sorted(gc_ms.items())},
                "long_steps": sorted(long_steps, reverse=True)[:3],
            }
        )
        if inside:
            for culprit, count in ours.items():
                blame[culprit] += lag * count / len(inside)
    stalls.sort(key=lambda s: -s["lag_ms"])
    return stalls, blame


async def _measure(
    bench: str, n: int, latency: float, data_dir: Path, *, sample: bool = True
) -> dict[str, Any]:
    dogs: list[concurrency.LoopWatchdog] = []
    sampler = Sampler(threading.get_ident())
    with CollectorTimer() as collector, StepRecorder() as steps:
        if sample:
            sampler.start()
        try:
            if bench == "incident":
                url = f"sqlite+aiosqlite:///{data_dir / 'bulk.db'}"
                figures = await incident_bulk._run_on(url, 10_000, watch=dogs)
            else:
                figures = await concurrency.run(n, latency, data_dir, watch=dogs)
        finally:
            sampler.stop()
    burst = [s for s in steps.steps if s[1] >= dogs[0].started]
    figures["loop_max_step_cpu_ms"] = round(max((s[2] for s in burst), default=0.0), 1)
    waits = sorted((w for w in steps.waits if w[0] >= dogs[0].started), key=lambda w: -w[1])
    longest = waits[0] if waits else (0.0, 0.0, 0.0, 0.0, "-")
    figures["loop_max_step_wall_ms"] = round(longest[1], 1)
    figures["loop_max_step_wall_cpu_ms"] = round(longest[2], 1)
    figures["loop_max_step_wall_run_queue_ms"] = round(longest[3], 1)
    return {
        "figures": figures,
        "late": dogs[0].late,
        "samples": sampler.samples,
        "pauses": collector.pauses,
        "steps": burst,
        "waits": waits,
        "started": dogs[0].started,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", choices=("burst", "incident"), default="burst")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--over", type=float, default=20.0, help="attribute wake-ups later than this (ms)")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument(
        "--no-sampler",
        action="store_true",
        help="no stack sampler (its thread takes the GIL every ms): the loop steps' wall split alone",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        data_dir.mkdir(parents=True, exist_ok=True)
        got = asyncio.run(
            _measure(
                args.bench, args.conversations, args.latency_ms / 1000, data_dir, sample=not args.no_sampler
            )
        )
    figures = got["figures"]
    stalls, blame = attribute(got["late"], got["samples"], got["pauses"], got["steps"], args.over)
    print(
        f"{args.bench}: max lag {figures['loop_max_lag_ms']} ms, longest loop step "
        f"{figures['loop_max_step_cpu_ms']} ms of CPU, {len(stalls)} wake-ups later than {args.over} ms, "
        f"{len(got['samples'])} samples"
    )
    for stall in stalls[: args.top]:
        print(
            f"\n{stall['lag_ms']:>7} ms  samples {stall['samples']}  in selector (GIL wait) "
            f"{stall['waiting_for_gil']}  gc {stall['gc_ms'] or '-'}"
        )
        for cpu, owner in stall["long_steps"]:
            print(f"    step  {cpu:>6} ms CPU  {owner}")
        for culprit, count in stall["ours"]:
            print(f"    ours  {count:>4}  {culprit}")
        for culprit, count in stall["innermost"]:
            print(f"    top   {count:>4}  {culprit}")
        for culprit, count in stall["other_threads"]:
            print(f"    other {count:>4}  {culprit}")
    print("\nstalled ms by culprit (each stall shared by its samples):")
    for culprit, ms in blame.most_common(args.top):
        print(f"  {ms:>8.1f}  {culprit}")
    started = got["started"]
    busy = [x for x in got["samples"] if x.at >= started and not x.innermost.endswith(f" {SELECTOR}")]
    print(f"\nwhere the loop thread worked during the run ({len(busy)} samples not waiting in the selector):")
    for culprit, count in Counter(x.ours or f"(not ours) {x.innermost}" for x in busy).most_common(args.top):
        print(f"  {count:>6}  {culprit}")
    by_gen: dict[int, list[float]] = defaultdict(list)
    for gen, start, end in got["pauses"]:
        by_gen[gen].append((end - start) * 1000)
    print("\ngarbage collector pauses during the run:")
    for gen, pauses in sorted(by_gen.items()):
        print(
            f"  generation {gen}: {len(pauses)} pauses, longest {max(pauses):.1f} ms, total {sum(pauses):.1f} ms"
        )
    waits = got["waits"]
    print(
        f"\nthe longest loop steps by wall time ({len(waits)} over 10 ms): wall, on the CPU, runnable but "
        "waiting for a CPU, the rest asleep (the GIL, a lock, I/O)"
    )
    for _, wall, cpu, queued, owner in waits[: args.top]:
        print(
            f"  {wall:>7.1f} ms  cpu {cpu:>6.1f}  run queue {queued:>6.1f}  asleep {wall - cpu - queued:>6.1f}  {owner}"
        )
    if waits:
        asleep = sum(w[1] - w[2] - w[3] for w in waits)
        print(
            f"  over all {len(waits)}: wall {sum(w[1] for w in waits):.0f} ms, cpu {sum(w[2] for w in waits):.0f}, "
            f"run queue {sum(w[3] for w in waits):.0f}, asleep {asleep:.0f}"
        )
    for key in ("loop_max_step_wall_ms", "loop_max_step_wall_cpu_ms", "loop_max_step_wall_run_queue_ms"):
        print(f"{key}={figures[key]}")
    top = blame.most_common(1)
    print(f"loop_max_lag_ms={figures['loop_max_lag_ms']}")
    print(f"loop_stall_culprit={top[0][0] if top else '-'}")
    return {"figures": figures, "stalls": stalls, "blame": dict(blame)}


if __name__ == "__main__":
    main()
