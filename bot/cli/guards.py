"""`arca-bot guards`: the guard pipeline for the configured model — every call check and sentence rule
in the order they run, with its origin (core, or a quirk of a model family) and its mode for this model."""

from __future__ import annotations

import argparse
import json

from bot.guard_rules import QUIRKS, GuardRule, Quirks


def pipeline() -> list[GuardRule]:
    from bot.engine.call_checks import CALL_RULES
    from bot.guards.pipeline import SENTENCE_RULES

    return [*CALL_RULES, *SENTENCE_RULES]


def rows(quirks: Quirks) -> list[dict[str, str]]:
    return [
        {
            "stage": r.stage,
            "name": r.name,
            "origin": "core" if r.quirk is None else "quirk",
            "quirk": r.quirk or "",
            "mode": quirks.mode(r.quirk),
            "protects": r.protects,
        }
        for r in pipeline()
    ]


def cmd_guards(args: argparse.Namespace) -> int:
    from bot.cli.preflight import checked_settings

    settings = checked_settings()
    quirks = settings.guard_quirks()
    listed = rows(quirks)
    if args.json:
        print(json.dumps(listed, ensure_ascii=False, indent=2))
        return 0
    main = next((m for m in settings.model_configs().values() if "main" in m.roles), None)
    print(f"Guard pipeline for {main.model if main else 'the scripted model (no model configured)'}")
    print("quirks: " + ", ".join(f"{q}={quirks.mode(q)}" for q in QUIRKS))
    print("(set per model with `quirks` in [models.NAME], or ARCA_QUIRKS=observe / voice=off,…)\n")
    for stage, title in (
        ("call", "before a tool runs (engine)"),
        ("sentence", "each answer sentence (output guard)"),
    ):
        print(f"{title}:")
        for n, row in enumerate((r for r in listed if r["stage"] == stage), 1):
            origin = "core" if not row["quirk"] else f"quirk:{row['quirk']} [{row['mode']}]"
            print(f"  {n:>2}. {row['name']:<28} {origin:<30} {row['protects']}")
        print()
    return 0
