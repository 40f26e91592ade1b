"""Incidents (issue 25): one declaration answers a flood of players the same way and compensates each
exactly once. `scope` reads what staff type, `compensation` previews and runs the bulk grant,
`report` sums it up, `progress` tells any process how far a run is, `notice` gives conversations the open notices. Storage: `store.incidents`."""

from bot.incidents.compensation import Limits, Preview, Progress, RunResult, preview, run_compensation
from bot.incidents.notice import open_notices
from bot.incidents.progress import RunProgress, progress
from bot.incidents.scope import ScopeError, parse_plan, parse_scope, players_from_csv

__all__ = [
    "Limits",
    "Preview",
    "Progress",
    "RunProgress",
    "RunResult",
    "ScopeError",
    "open_notices",
    "parse_plan",
    "parse_scope",
    "players_from_csv",
    "preview",
    "progress",
    "run_compensation",
]
