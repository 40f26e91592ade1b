"""Memory: resident set size of a running bot with the embedding model loaded, and what an idle conversation
costs.

A fresh subprocess runs `build_app` (store seeded, policy index opened, e5 model loaded) and answers one
question that searches the policies → `rss_mb`. It then holds 1,000 conversations, each on its own thread
with one message answered, and reports the RSS growth per conversation → `rss_kb_per_idle_conversation`.
Linux only (reads /proc/self/status).

    python -m bench.memory [--threads 1000] [--data-dir DIR]

Prints a table and `rss_mb=N`; `main(argv)` returns the figures as a dict.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def rss_kb(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


async def _child(threads: int) -> dict[str, Any]:
    from bot.app import build_app
    from bot.config import load_settings
    from bot.conversations import Incoming
    from bot.conversations.surface import ChannelTraits, SurfaceBase
    from bot.llm.scripted import ScriptedLLM

    class _Quiet(SurfaceBase):
        traits = ChannelTraits(max_chars=2000)

        async def send(self, text: str) -> int:
            return 0

        async def edit(self, handle: Any, text: str) -> None:
            return None

    baseline = rss_kb()
    scripts: list[list[dict[str, Any]]] = [
        [
            {"tool": "search_policy", "args": {"query": "배송 지연 보상 기준"}},
            {"final": "배송 지연 보상 기준을 안내해 드립니다."},
        ]
    ]
    app = await build_app(load_settings(edit_interval=0.0), llm_factory=lambda: ScriptedLLM(scripts.pop(0)))
    conv = app.conversations
    actor = await conv.resolve_actor("9001")
    outcome = await conv.handle(Incoming("console:memory", actor, "배송이 늦으면 보상 되나요?"), _Quiet())
    assert outcome.kind == "answered", outcome
    gc.collect()
    loaded = rss_kb()
    peak = rss_kb("VmHWM")
    for i in range(threads):
        scripts.append([{"final": f"{i}번 문의 확인했습니다."}])
        result = await conv.handle(
            Incoming(f"console:idle-{i}", actor, f"문의 {i}: 배송 확인 부탁드려요"), _Quiet()
        )
        assert result.kind == "answered", result
    gc.collect()
    idle = rss_kb()
    await app.store.close()
    return {
        "rss_baseline_mb": round(baseline / 1024, 1),
        "rss_mb": round(loaded / 1024, 1),
        "rss_peak_mb": round(peak / 1024, 1),
        "idle_conversations": threads,
        "rss_after_idle_mb": round(idle / 1024, 1),
        "rss_kb_per_idle_conversation": round((idle - loaded) / max(threads, 1), 2),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--data-dir", type=Path, help="reuse a data dir (its policy index is built once)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        figures = asyncio.run(_child(args.threads))
        print(json.dumps(figures))
        return figures
    with tempfile.TemporaryDirectory(prefix="arca-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        env = {
            **os.environ,
            "ARCA_DATA_DIR": str(data_dir),
            "ARCA_LOG_LEVEL": "WARNING",
            "HF_HUB_OFFLINE": "1",
        }
        env.setdefault("ANONYMIZED_TELEMETRY", "False")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        done = subprocess.run(
            [sys.executable, "-m", "bench.memory", "--child", "--threads", str(args.threads)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"memory bench child failed:\n{done.stderr[-3000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{'baseline MB':>12}{'bot MB':>9}{'peak MB':>9}{'after idle MB':>15}{'KB/idle conv':>14}")
    print(
        f"{figures['rss_baseline_mb']:>12}{figures['rss_mb']:>9}{figures['rss_peak_mb']:>9}"
        f"{figures['rss_after_idle_mb']:>15}{figures['rss_kb_per_idle_conversation']:>14}"
    )
    for key in ("rss_mb", "rss_kb_per_idle_conversation"):
        print(f"{key}={figures[key]}")
    return figures


if __name__ == "__main__":
    main()
