"""The scenario format: fixtures (the transcripts' own), the simulated player and the grading. A loader
that reports file and line, like the transcripts' (`bot.replay.format`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.store.seed import SeedData, SeedError, parse_fixture_data
from bot.yaml_files import child, first_error, fixture_clock, line_of, load_model_file, located


class ScenarioError(Exception):
    """An invalid scenario; the message starts with `file:line:`."""


class ScriptedLine(BaseModel):
    """One line of a scripted player: said when the bot's last answer contains any of `if_bot_says`
    (always, without it); a line whose condition does not hold is skipped."""

    model_config = ConfigDict(extra="forbid")

    say: str = Field(min_length=1)
    if_bot_says: list[str] | None = None


class SimPlayer(BaseModel):
    """Who the simulated player is and what they want. A model plays them from this description; without
    a model (`ARCA_SIM_MODEL` unset, or `--scripted`), `turns` are said instead."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    as_: str | None = Field(default=None, alias="as")
    """Their Discord id (default: the first fixture player's)."""
    language: Literal["ko", "en"] = "ko"
    manner: str = "polite"
    """How they write: polite, curt, angry, slangy, …"""
    knows: list[str] = Field(default_factory=list)
    """Facts they can give when asked (an order number, a date)."""
    wants: str = Field(min_length=1)
    """Their goal, in a sentence."""
    must_not_reveal: list[str] = Field(default_factory=list)
    gives_up: str = "after three answers that do not move them closer to their goal"
    opening: str | None = None
    """Their first message, word for word (else the model writes it)."""
    turns: list[ScriptedLine] = Field(default_factory=list)
    """The scripted player's lines, in order."""
    max_turns: int | None = Field(default=None, ge=1, le=50)
    attachments: list[str] = Field(default_factory=list)
    """Files sent with the first message (paths beside the scenario file), e.g. a screenshot."""

    @field_validator("as_", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("turns", mode="before")
    @classmethod
    def _plain_lines(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"say": v} if isinstance(v, str) else v for v in value]
        return value


class CouponState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    order_id: str
    amount: int | None = None


class Grade(BaseModel):
    """The expected end state, read from the database. Each key given is one criterion."""

    model_config = ConfigDict(extra="forbid")

    coupons: list[CouponState] | None = None
    """The exact set of active coupons at the end (amount checked when given)."""
    no_coupon_for: list[str] | None = None
    """Orders that must end without an active or pending coupon."""
    escalation: bool | None = None
    """An escalation to a person was opened (true) or not (false)."""
    orders_untouched: bool = True
    """Every order's status is what the fixtures said."""
    answered_in: Literal["ko", "en"] | None = None
    """Every answer the bot gave is in this language (Hangul or not)."""
    rubric: list[str] = Field(default_factory=list)
    """Lines a model judges from the conversation ("never promised a refund"); extra, never the only check."""

    @model_validator(mode="after")
    def _something_is_checked(self) -> Grade:
        if self.coupons is None and self.no_coupon_for is None and self.escalation is None:
            raise ValueError("give at least one end-state criterion: coupons, no_coupon_for or escalation")
        return self


class IncidentFixture(BaseModel):
    """An incident open when the conversation starts (its notice is what the bot tells players)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    notice_ko: str = Field(min_length=1)
    notice_en: str = Field(min_length=1)
    statuses: list[str] = Field(default_factory=list)
    """Orders in these statuses are in scope (empty: every player)."""


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    fixtures: dict[str, Any] = Field(default_factory=dict)
    player: SimPlayer
    grade: Grade

    # Filled by the loader:
    path: str = ""
    seed: SeedData | None = None
    clock: datetime | None = None
    coupon_rules: dict[str, Any] | None = None
    incidents: list[IncidentFixture] = Field(default_factory=list)
    attachment_paths: list[Path] = Field(default_factory=list)


def load_scenario(path: Path) -> Scenario:
    """Read one scenario; any problem is a `ScenarioError` naming file and line."""
    scenario, root = load_model_file(
        path, Scenario, ScenarioError, "a scenario is a mapping with `name`, `player` and `grade`"
    )
    fixtures_node = child(root, "fixtures")
    seed_part = {
        k: v for k, v in scenario.fixtures.items() if k not in ("clock", "coupon_rules", "incidents")
    }
    try:
        scenario.seed = parse_fixture_data(seed_part, source=str(path), root=fixtures_node)
    except SeedError as exc:
        raise ScenarioError(str(exc) if str(exc).startswith(f"{path}:") else f"{path}:1: {exc}") from None
    scenario.clock = fixture_clock(scenario.fixtures, root, path, ScenarioError)
    rules = scenario.fixtures.get("coupon_rules")
    if rules is not None and not isinstance(rules, dict):
        line = line_of(root, ("fixtures", "coupon_rules")) or 1
        raise ScenarioError(f"{path}:{line}: fixtures.coupon_rules must be a mapping")
    scenario.coupon_rules = rules
    try:
        scenario.incidents = [
            IncidentFixture.model_validate(i) for i in scenario.fixtures.get("incidents") or []
        ]
    except ValidationError as exc:
        loc, msg = first_error(exc)
        raise ScenarioError(
            f"{located(str(path), root, ('fixtures', 'incidents', *loc), line=1)}: {msg}"
        ) from None
    for i, name in enumerate(scenario.player.attachments):
        file = path.parent / name
        if not file.is_file():
            raise ScenarioError(
                f"{located(str(path), root, ('player', 'attachments', i), line=1)}: no file {file}"
            )
        scenario.attachment_paths.append(file)
    if scenario.player.as_ is None and not scenario.seed.players:
        raise ScenarioError(
            f"{located(str(path), root, ('player',), line=1)}: `as` is required without players"
        )
    scenario.path = str(path)
    return scenario


def collect_scenarios(paths: list[Path]) -> list[Scenario]:
    """Every scenario in the files and directories (`*.yaml` below them) given, validated up front."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.rglob("*.yaml")))
        elif p.exists():
            files.append(p)
        else:
            raise ScenarioError(f"{p}:1: no such file or directory")
    if not files:
        raise ScenarioError(f"{', '.join(map(str, paths))}:1: no scenario (*.yaml) found")
    return [load_scenario(f) for f in files]
