"""Sampling one phase of a benchmark with py-spy (the `dev` extra), and the text of its top frames.

`sampled(name, out_dir)` attaches py-spy to this process while the block runs (`--nonblocking`: the
process is never paused, so the phase's figures stay the phase's), then writes `out_dir/name.txt`: per
thread, how many samples found it on the CPU, and the loop thread's top frames, by self time (the
innermost frame of each sample) and by inclusive time (every frame of the sample's stack, once). Idle
threads are not sampled, so a loop thread with few samples over the phase's seconds was mostly waiting.

py-spy reads this process's memory: it needs the right to trace it (root, or `kernel.yama.ptrace_scope`
0). Without py-spy, or without that right, the block runs unsampled and the file says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

RATE_HZ = 250
ATTACH_S = 0.6
"""How long py-spy is given to attach before the phase starts (it prints nothing when it has)."""
TOP = 25
OTHER_TOP = 8
OTHER_THREAD_SHARE = 0.05
"""Another thread's top frames are listed when it was on the CPU this share of the phase or more."""
_THREAD = re.compile(r"^thread \((\d+)\)(?::\s*(.*))?$")
_FRAME = re.compile(r"^(.*?) \((.*?)(?::(\d+))?\)$")


def _py_spy() -> str | None:
    here = Path(sys.executable).with_name("py-spy")
    return str(here) if here.exists() else shutil.which("py-spy")


def _function(frame: str) -> str:
    """`name (path:line)` → `name (path)`: samples of one function add up whatever line they were on."""
    found = _FRAME.match(frame)
    return f"{found.group(1)} ({found.group(2)})" if found else frame


def summarize(raw: str, *, seconds: float, rate: int = RATE_HZ, loop_thread: str = "MainThread") -> str:
    """The text of one sampled phase: samples per thread, then the loop thread's top frames."""
    per_thread: Counter[str] = Counter()
    others: dict[str, Counter[str]] = {}
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    loop_samples = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        head = _THREAD.match(frames[0])
        thread = (head.group(2) or f"thread {head.group(1)}") if head else "?"
        if head:
            frames = frames[1:]
        per_thread[thread] += count
        if not frames:
            continue
        if thread != loop_thread:
            others.setdefault(thread, Counter())[_function(frames[-1])] += count
            continue
        loop_samples += count
        own[_function(frames[-1])] += count
        for name in dict.fromkeys(_function(f) for f in frames):
            inclusive[name] += count
    possible = max(1, round(seconds * rate))
    lines = [
        f"phase: {seconds:.2f} s sampled at {rate} Hz (≈{possible} samples per thread if always on the CPU)",
        "",
        "samples on the CPU, per thread (share of the phase):",
    ]
    lines += [f"  {n:>7}  {n / possible:>6.1%}  {name}" for name, n in per_thread.most_common()]
    lines += ["", "(`EpollSelector.select` on the loop thread: the loop waiting for something to do)"]
    for title, counts in (("self", own), ("inclusive", inclusive)):
        lines += ["", f"{loop_thread}: top {TOP} frames by {title} samples (share of its samples):"]
        lines += [
            f"  {n:>7}  {n / max(1, loop_samples):>6.1%}  {name}" for name, n in counts.most_common(TOP)
        ]
    for thread, counts in sorted(others.items(), key=lambda item: -per_thread[item[0]]):
        if per_thread[thread] < possible * OTHER_THREAD_SHARE:
            continue
        total = per_thread[thread]
        lines += ["", f"{thread}: top {OTHER_TOP} frames by self samples:"]
        lines += [f"  {n:>7}  {n / total:>6.1%}  {name}" for name, n in counts.most_common(OTHER_TOP)]
    return "\n".join(lines) + "\n"


@contextlib.asynccontextmanager
async def sampled(name: str, out_dir: Path | None) -> AsyncIterator[None]:
    """Sample this process with py-spy while the block runs and write `out_dir/name.txt`; with
    `out_dir` None, just run the block."""
    if out_dir is None:
        yield
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{name}.txt"
    spy = _py_spy()
    if spy is None:
        target.write_text("not sampled: py-spy is not installed (the dev extra)\n", encoding="utf-8")
        yield
        return
    with tempfile.TemporaryDirectory(prefix="arca-sample-") as tmp:
        raw_path = Path(tmp) / "raw.txt"
        process = await asyncio.create_subprocess_exec(
            spy,
            "record",
            "--pid",
            str(os.getpid()),
            "--rate",
            str(RATE_HZ),
            "--format",
            "raw",
            "--threads",
            "--nonblocking",
            "--output",
            str(raw_path),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        await asyncio.sleep(ATTACH_S)
        started = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - started
            if process.returncode is None:
                process.send_signal(signal.SIGINT)
            _, err = await process.communicate()
            if raw_path.exists():
                text = summarize(raw_path.read_text(encoding="utf-8"), seconds=seconds, loop_thread=_loop())
            else:
                text = f"not sampled: py-spy wrote nothing ({err.decode(errors='replace').strip()[-300:]})\n"
            target.write_text(f"{name}\n{text}", encoding="utf-8")


def _loop() -> str:
    return threading.current_thread().name
