"""The transcript format (DESIGN.md §9): pydantic models and a loader that reports file and line.

One YAML file per case; only `name` and `turns` are required. Additive extensions to §9 (every §9
key keeps its meaning): `fixtures.coupon_rules` (per-case overrides of policies/coupon_rules.yaml,
e.g. `{approval_threshold: 10000}`), `roles` on an interrupt (default: the turn's roles when the
interrupt has no `as`, else none) and `expect.model_saw` / `expect.model_not_saw` (text the model
was / was not sent in the turn's loop calls).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.store.seed import SeedData, SeedError, parse_fixture_data
from bot.yaml_files import child, first_error, fixture_clock, line_of, load_model_file, located

STEP_KINDS = ("tool", "tools", "final", "raw", "answer")


class TranscriptError(Exception):
    """An invalid transcript; the message starts with `file:line:`."""


class Interrupt(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    after_step: int = Field(ge=0)
    text: str = Field(min_length=1)
    as_: str | None = Field(default=None, alias="as")
    roles: list[str] | None = None
    """Extension: the sender's roles (`staff` = the configured staff role); a staff `/stop` mid-run."""

    @field_validator("as_", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value


class CouponExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    amount: int | None = None


class ModelSaw(BaseModel):
    """Text that must be in what the model was sent for one scripted step (system prompt excluded)."""

    model_config = ConfigDict(extra="forbid")

    step: int = Field(ge=0)
    text: str = Field(min_length=1)


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[str] | None = None
    tools_not_called: list[str] | None = None
    codes: list[str] | None = None
    answer: str | None = None
    """Extension (issue 50): the exact answer the player saw (outer whitespace aside)."""
    answer_contains: list[str] | None = None
    answer_not_contains: list[str] | None = None
    coupons: list[CouponExpectation] | None = None
    events: list[str] | None = None
    observations_contain: list[str] | None = None
    observations_not_contain: list[str] | None = None
    reply_contains: list[str] | None = None
    reply_not_contains: list[str] | None = None
    denied: bool | None = None
    model_saw: list[str | ModelSaw] | None = None
    """Extension: text in the messages the model was sent in this turn's loop calls (any call, or the
    call that served script step `step`): proves memory and interrupts reach the model."""
    model_not_saw: list[str] | None = None
    """Extension: text in none of the messages the model was sent in this turn (e.g. after a reset)."""


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    user: str | None = None
    staff: str | None = None
    as_: str | None = Field(default=None, alias="as")
    roles: list[str] = Field(default_factory=list)
    script: list[dict[str, Any]] | None = None
    structured: dict[str, Any] | None = None
    """What the scripted model answers to structured calls (e.g. the `/ops draft` review verdict)."""
    interrupts: list[Interrupt] = Field(default_factory=list)
    expect: Expect = Field(default_factory=Expect)

    @field_validator("as_", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _one_kind(self) -> Turn:
        if (self.user is None) == (self.staff is None):
            raise ValueError("a turn has exactly one of `user` or `staff`")
        return self

    @field_validator("script")
    @classmethod
    def _steps(cls, steps: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for i, step in enumerate(steps or []):
            kinds = [k for k in STEP_KINDS if k in step]
            if len(kinds) != 1:
                raise ValueError(f"step {i} needs exactly one of {', '.join(STEP_KINDS)}")
            kind = kinds[0]
            allowed = {"tool": {"tool", "args", "reasoning", "reasoning_content"}}.get(
                kind, {kind, "reasoning", "reasoning_content"}
            )
            extra = set(step) - allowed
            if extra:
                raise ValueError(f"step {i}: unknown key(s) {sorted(extra)}")
            for key in ("reasoning", "reasoning_content"):
                if key in step and not isinstance(step[key], str):
                    raise ValueError(f"step {i}: {key} must be text")
            if kind == "tool":
                _check_call(i, step)
            elif kind == "tools":
                calls = step["tools"]
                if not isinstance(calls, list) or not calls:
                    raise ValueError(f"step {i}: tools must be a non-empty list of {{tool, args}}")
                for call in calls:
                    if not isinstance(call, dict) or "tool" not in call:
                        raise ValueError(f"step {i}: each entry of tools needs a `tool`")
                    if set(call) - {"tool", "args"}:
                        raise ValueError(f"step {i}: an entry of tools has only `tool` and `args`")
                    _check_call(i, call)
            elif not isinstance(step[kind], str):
                # `final`, `answer` and `raw` are the text the model returns; `{answer: [1]}` is a typo.
                raise ValueError(f"step {i}: {kind} must be text, got {type(step[kind]).__name__}")
        return steps


def _check_call(i: int, call: dict[str, Any]) -> None:
    """One scripted tool call: a tool name as text (any name: unknown ones test the engine) and args."""
    if not isinstance(call.get("tool"), str) or not call["tool"].strip():
        raise ValueError(f"step {i}: tool must be a tool name (text), got {call.get('tool')!r}")
    if not isinstance(call.get("args", {}), dict):
        raise ValueError(f"step {i}: args must be a mapping")


class Transcript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    fixtures: dict[str, Any] = Field(default_factory=dict)
    turns: list[Turn] = Field(min_length=1)

    # Filled by the loader:
    path: str = ""
    seed: SeedData | None = None
    clock: Any = None
    coupon_rules: dict[str, Any] | None = None
    """Validated overrides of the coupon rules for this case (None: the project's rules file)."""
    game_backend_down: bool = False
    """`fixtures.game_backend: down`: the case reads orders from a game backend that cannot be reached
    (ARCA_ORDER_SOURCE=http against a closed loopback port), so the order tools answer
    SOURCE_UNAVAILABLE."""
    _turn_lines: list[int] = PrivateAttr(default_factory=list)


def require_scripts(case: Transcript) -> None:
    """Without `--live` every user turn is answered by its script: a turn without one is invalid
    (`script: []` says the model must not run), not a `ScriptExhausted` crash in the middle of a run."""
    for index, turn in enumerate(case.turns):
        if turn.user is not None and turn.script is None:
            lines = case._turn_lines
            line = lines[index] if index < len(lines) else 1
            raise TranscriptError(
                f"{case.path}:{line}: turns.{index}: a user turn needs a `script` to replay without --live "
                "(`script: []` when the model must not be called)"
            )


def load_transcript(path: Path) -> Transcript:
    """Read one case; any problem is a `TranscriptError` naming file and line."""
    case, root = load_model_file(
        path, Transcript, TranscriptError, "a transcript is a mapping with `name` and `turns`"
    )
    fixtures_node = child(root, "fixtures")
    seed_part = {k: v for k, v in case.fixtures.items() if k not in ("clock", "coupon_rules", "game_backend")}
    backend = case.fixtures.get("game_backend")
    if backend is not None and backend != "down":
        line = line_of(root, ("fixtures", "game_backend")) or 1
        raise TranscriptError(
            f"{path}:{line}: fixtures.game_backend must be `down` (the only state a case sets)"
        )
    case.game_backend_down = backend == "down"
    try:
        case.seed = parse_fixture_data(seed_part, source=str(path), root=fixtures_node)
    except SeedError as exc:
        raise TranscriptError(str(exc) if str(exc).startswith(f"{path}:") else f"{path}:1: {exc}") from None
    case.clock = fixture_clock(case.fixtures, root, path, TranscriptError)
    case.coupon_rules = _coupon_rules(path, root, case.fixtures.get("coupon_rules"))
    for t_index, turn in enumerate(case.turns):
        if turn.user is not None and turn.as_ is None and not case.seed.players:
            where = located(str(path), root, ("turns", t_index), line=1)
            raise TranscriptError(f"{where}: `as` is required when there are no players")
        for i_index, intr in enumerate(turn.interrupts):
            steps = turn.script or []
            if intr.after_step >= max(len(steps), 1) and turn.script is not None:
                where = located(str(path), root, ("turns", t_index, "interrupts", i_index), line=1)
                raise TranscriptError(
                    f"{where}: after_step {intr.after_step} is past the script's {len(steps)} step(s)"
                )
    case.path = str(path)
    case._turn_lines = [line_of(root, ("turns", i)) or 1 for i in range(len(case.turns))]
    return case


def _coupon_rules(path: Path, root: Any, overrides: Any) -> dict[str, Any] | None:
    """`fixtures.coupon_rules`: validated now (merged over the project's rules file) so a typo is exit 2."""
    if overrides is None:
        return None
    from tools.coupon_rules import CouponRules, CouponRulesError, load_coupon_rules

    line = line_of(root, ("fixtures", "coupon_rules")) or 1
    if not isinstance(overrides, dict):
        raise TranscriptError(
            f"{path}:{line}: fixtures.coupon_rules must be a mapping of rule names to values"
        )
    try:
        base = load_coupon_rules().model_dump()
    except CouponRulesError:
        base = CouponRules().model_dump()
    try:
        CouponRules.model_validate({**base, **overrides})
    except ValidationError as exc:
        loc, msg = first_error(exc)
        key_line = line_of(root, ("fixtures", "coupon_rules", *loc[:1])) or line
        where = ".".join(str(p) for p in loc) or "(rules)"
        raise TranscriptError(f"{path}:{key_line}: fixtures.coupon_rules.{where}: {msg}") from None
    return dict(overrides)


def collect_transcripts(paths: list[Path]) -> list[Path]:
    """Files given, and every `*.yaml` below each directory given, in a stable order."""
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.extend(sorted(p.rglob("*.yaml")))
        elif p.exists():
            found.append(p)
        else:
            raise TranscriptError(f"{p}:1: no such file or directory")
    return found
