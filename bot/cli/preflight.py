"""What every `arca-bot` command checks before it starts: the settings load and the storage is usable,
the policies load; and the one error a command raises for the operator (`CommandError`, exit 2)."""

from __future__ import annotations

import logging

from bot.config import Settings, load_settings


class CommandError(Exception):
    """The command cannot run as configured; one line for the operator, exit 2."""


def checked_settings() -> Settings:
    """The settings, with logging configured; a storage problem is a `CommandError`, a bad staff-hours
    value or holidays file a `ConfigError` — both before anything is created or opened."""
    from bot.desk.hours import SupportHours
    from bot.doctor import storage_problem
    from bot.observability import configure_logging

    settings = load_settings()
    problem = storage_problem(settings)
    if problem:
        raise CommandError(problem)
    SupportHours.from_settings(settings)  # read only at the first escalation otherwise, after the database
    configure_logging(settings)
    return settings


def quiet_logs_for_a_person(settings: Settings) -> None:
    """`chat` and `demo` are read by a person on the same terminal as stderr: INFO lines (database
    seeded, index built, HTTP requests) would land between the conversation's lines. WARNING and up
    still show; an operator who sets ARCA_LOG_LEVEL (env or arca.toml) gets exactly that level."""
    if "log_level" not in settings.model_fields_set:
        logging.getLogger().setLevel(logging.WARNING)


def require_policies(settings: Settings) -> None:
    """The policy documents and coupon rules load (the same check as `doctor`), before anything starts."""
    from bot.doctor import policies_problem

    problem, _ = policies_problem(settings)
    if problem:
        raise CommandError(problem)
