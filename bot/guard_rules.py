"""The guards as one pipeline's parts: each rule's name, what it protects, and its origin — a core rule,
or a quirk of a model family (small models' habits) that can be switched per model.

Declared at the bottom layer so the engine's call checks (`bot.engine.call_checks`) and the output
guard's sentence rules (`bot.guards.pipeline`) describe themselves the same way, and `arca-bot guards`
lists both. A quirk's mode comes from the model's `quirks` (`[models.NAME]` in arca.toml) or
`ARCA_QUIRKS`: `enforce` (default), `observe` (log what it would have done, do nothing) or `off`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

ENFORCE, OBSERVE, OFF = "enforce", "observe", "off"
QUIRK_MODES = (ENFORCE, OBSERVE, OFF)
CORE = "core"

QUIRKS: dict[str, str] = {
    "repairs": "a call's unambiguous mistakes mended (a 'functions.' prefix, arguments as a JSON string)",
    "example_values": "a tool description's example id or a placeholder ('ORD…') not used as a value",
    "unasked": "no coupon for a player who asked about a rule, not for compensation",
    "withdrawals": "no side effect after the player took the request back mid-run",
    "voice": "talk about 'the player' said to them; tool and argument names in the player's words",
    "model_notes": "text written for the model (tool notes, engine notes, the model's asides) never delivered",
    "echo": "the player's own words, or a fact's sentence said again, not delivered as the answer",
}
"""Each switchable quirk and what its rules do. Seen with small models (Qwen2.5-Coder-1.5B class, live
sittings 2026-12-02..04); a strong model rarely trips them, and a studio may turn them off for it."""
QUIRK_FAMILY = "small models (Qwen2.5 1.5B class)"


@dataclass(frozen=True)
class GuardRule:
    """One named check of the pipeline."""

    name: str
    """Dotted, by stage: `call.example_value`, `claim.run_or_ledger`, `fact.unbacked`, `voice.second_person`."""
    stage: str
    """`call` (before a tool runs, in the engine) or `sentence` (each answer sentence, in the output guard)."""
    protects: str
    """What goes wrong without it, in one line."""
    quirk: str | None = None
    """The quirk it belongs to (a key of `QUIRKS`), or None for a core rule, which is always on."""

    @property
    def origin(self) -> str:
        return CORE if self.quirk is None else f"quirk of {QUIRK_FAMILY} ({self.quirk})"


@dataclass(frozen=True)
class Quirks:
    """The mode of each quirk for one model (`enforce` unless set)."""

    modes: Mapping[str, str] = field(default_factory=dict)
    default: str = ENFORCE

    def mode(self, quirk: str | None) -> str:
        """A core rule (None) is always enforced."""
        if quirk is None:
            return ENFORCE
        return self.modes.get(quirk, self.default)

    def acts(self, quirk: str | None, what: str) -> bool:
        """Whether a quirk's rule may act; observing, log what it would have done instead."""
        mode = self.mode(quirk)
        if mode == OBSERVE:
            log.info("quirk %s observing: would have %s", quirk, what)
        return mode == ENFORCE

    @classmethod
    def parse(cls, spec: str | Mapping[str, str] | None) -> Quirks:
        """`"observe"` (every quirk), `"voice=off,example_values=observe"`, or a mapping (`all` sets the
        default). Unknown names or modes raise ValueError with the valid ones."""
        if not spec:
            return cls()
        if isinstance(spec, str):
            items: dict[str, str] = {}
            for part in (p.strip() for p in spec.split(",") if p.strip()):
                name, _, mode = part.partition("=")
                items.update({"all": name.strip()} if not mode else {name.strip(): mode.strip()})
            spec = items
        modes = {str(k).strip().lower(): str(v).strip().lower() for k, v in spec.items()}
        for name, mode in modes.items():
            if name != "all" and name not in QUIRKS:
                raise ValueError(f"unknown quirk {name!r}; known: all, {', '.join(QUIRKS)}")
            if mode not in QUIRK_MODES:
                raise ValueError(f"quirk {name!r}: mode {mode!r} is not one of {', '.join(QUIRK_MODES)}")
        default = modes.pop("all", ENFORCE)
        return cls(modes, default)

    def merged(self, other: Quirks) -> Quirks:
        """`other` on top of these (the env var over the model's table)."""
        if not other.modes and other.default == ENFORCE:
            return self
        return Quirks(
            {**self.modes, **other.modes}, other.default if other.default != ENFORCE else self.default
        )
