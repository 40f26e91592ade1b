"""`arca-bot demo`: the demo transcripts through the console renderer with the scripted model.

Clearly labelled as scripted: the tools, guards, ledger, policy index and renderer are real; only
the model's decisions come from a script. It needs no LLM and no network.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from bot.app import PROJECT_ROOT
from bot.config import Settings
from bot.players.terminal import ConsoleSurface
from bot.replay.command import load_cases
from bot.replay.format import Turn
from bot.replay.runner import Replayer

DEMO_DIR = PROJECT_ROOT / "data" / "demo"
BANNER = (
    "[bold yellow]SCRIPTED DEMO[/bold yellow] — no LLM is configured, so the model's choices come from a "
    "script. Tools, coupon ledger, guards, policy search and streaming are the real ones."
)


async def run_demo(settings: Settings, path: Path | None = None) -> int:
    console = Console(highlight=False)
    cases = load_cases([path or DEMO_DIR])
    surface_holder: list[ConsoleSurface] = []

    def surface() -> ConsoleSurface:
        s = ConsoleSurface()
        surface_holder.append(s)
        return s

    def announce(turn: Turn) -> None:
        who = "🛡 staff" if turn.staff is not None else "👤 player"
        console.print(f"\n[bold cyan]{who}[/bold cyan] {turn.user if turn.user is not None else turn.staff}")

    console.print(BANNER)
    replayer = Replayer(settings, surface_factory=surface, announce=announce, edit_interval=0.05)
    failed = 0
    for case in cases:
        console.rule(f"[bold]{case.name}[/bold] (scripted)")
        result = await replayer.run_case(case, "native")
        if not result.passed:
            failed += 1
            for f in result.failures:
                console.print(f"[red]  {f}[/red]")
    console.print(
        "\n[dim]To talk to the bot for real: set ARCA_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for a "
        "local server), then run `arca-bot chat`.[/dim]"
    )
    return 1 if failed else 0
