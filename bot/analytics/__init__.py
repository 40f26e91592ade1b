"""Support analytics and the facts it reads: runs, tool calls, cited sections, feedback. The `/stats`
staff command that shows them is `bot.staff.stats`."""

from bot.analytics.feedback import record_vote
from bot.analytics.record import record_run
from bot.analytics.stats import STATS_KEYS, compute_stats, format_stats

__all__ = ["STATS_KEYS", "compute_stats", "format_stats", "record_run", "record_vote"]
