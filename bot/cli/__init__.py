"""The `arca-bot` command line: one subcommand per entry point of the product (`parser` wires them; the
commands live in `serving`, `conversing` and `records`; `preflight` holds what they all check first).

Configuration errors and unusable databases end with one clear line on stderr and exit 2;
logs go to stderr so stdout stays machine-readable where a command promises that (`search --json`).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from bot.cli.parser import build_parser
from bot.cli.preflight import CommandError
from bot.config import ConfigError
from bot.redaction import redact_urls

__all__ = ["build_parser", "main"]


def _is_usage_error(exc: Exception) -> bool:
    """A refusal with a message for the operator (exit 2), not a defect. The classes are imported only
    here, when something failed: the store's module alone costs ~0.7 s of CPU on every start."""
    from bot.knowledge.documents import KnowledgeError
    from bot.store import StoreError
    from bot.store.seed import SeedError
    from tools.coupon_rules import CouponRulesError

    return isinstance(exc, (CommandError, StoreError, SeedError, CouponRulesError, KnowledgeError))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command in `argv`; without `argv`, the process's own command line (the `arca-bot`
    script, `python -m bot`), which ends when this returns."""
    collecting = gc.isenabled()
    parser = build_parser()
    args = parser.parse_args(argv)
    short_lived = bool(getattr(args, "short_lived", False))
    if short_lived:
        # A one-shot command (`search`) keeps what it builds until it exits: Chroma's, pydantic's and
        # the models' ~100k objects. Walking them again and again while they load was ~0.3–0.5 s of a
        # cold search's ~4 s of CPU; the garbage left by one query is freed at exit.
        gc.disable()
    try:
        return _run(parser, args)
    finally:
        if short_lived and argv is None:
            # The process ends next. The interpreter's last collections walk every object again
            # (0.6–1.1 s of a search's wall time on a loaded 2-core machine); frozen, they are skipped.
            gc.freeze()
        elif collecting:  # as it was: tests and embedders call `main` in a process that goes on
            gc.enable()


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if not getattr(args, "fn", None):
        parser.print_help()
        return 2
    try:
        return int(args.fn(args) or 0)
    except ConfigError as exc:
        print(f"arca-bot: configuration error: {redact_urls(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not _is_usage_error(exc):
            raise
        print(f"arca-bot: {redact_urls(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
