"""The compensation runs the web process drives in the background: those the console's Approve starts,
and those it resumes by itself (`bot.incidents.resume`) — at start and every `CHECK_SECONDS` after, an
approved run nobody has advanced for a while (its process stopped) is started again here, so staff need
not press "이어서 발급 / Resume"."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from bot.incidents.resume import QUIET, interrupted_runs, resume_run
from bot.periodic import Periodic

log = logging.getLogger(__name__)

CHECK_SECONDS = 10.0
"""How often the web process looks for cut runs."""


def runs_of(app: Any) -> set[asyncio.Task[Any]]:
    """The issuing runs this process started (kept so they are not collected mid-run)."""
    state = app.state
    runs = getattr(state, "incident_runs", None)
    if runs is None:
        runs = state.incident_runs = set()
    return runs  # type: ignore[no-any-return]


def run_name(incident_id: int) -> str:
    return f"incident-{incident_id}-compensation"


def running_here(app: Any, incident_id: int) -> bool:
    return any(not t.done() and t.get_name() == run_name(incident_id) for t in runs_of(app))


def track(app: Any, task: asyncio.Task[Any], incident_id: int) -> None:
    """Keep `task` in this process's runs until it ends; log its failure."""
    runs = runs_of(app)
    runs.add(task)

    def finished(t: asyncio.Task[Any]) -> None:
        runs.discard(t)
        if not t.cancelled() and t.exception() is not None:
            log.error("incident %s: the compensation run failed", incident_id, exc_info=t.exception())

    task.add_done_callback(finished)


class CompensationResumer:
    """Started and stopped with the web server (`WebServer`)."""

    def __init__(self, app: Any, *, interval: float = CHECK_SECONDS, quiet: timedelta = QUIET) -> None:
        self._app = app
        self._interval = interval
        self._quiet = quiet
        self._periodic = Periodic(
            self.check,
            interval,
            name="incident-compensation-resumer",
            log=log,
            failure="could not look for cut compensation runs",
        )

    async def check(self) -> list[int]:
        """Start every cut run not already running here; returns their incident ids."""
        conv = self._app.state.web.conversations
        started = []
        for incident in await interrupted_runs(conv.store, quiet=self._quiet):
            if running_here(self._app, incident.id):
                continue
            log.info("incident %s: resuming its cut compensation run", incident.id)
            run = resume_run(
                conv.store,
                incident,
                clock=conv.clock,
                valid_days=conv.services.coupon_rules.valid_days,
                timezone=conv.services.timezone,
            )
            track(self._app, asyncio.create_task(run, name=run_name(incident.id)), incident.id)
            started.append(incident.id)
        return started

    def start(self) -> None:
        self._periodic.start()

    async def stop(self) -> None:
        await self._periodic.stop()
