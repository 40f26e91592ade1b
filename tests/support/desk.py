"""SLA targets the desk tests share."""

from __future__ import annotations

from datetime import timedelta

from bot.analytics.staff_response import SlaTargets

TARGETS = SlaTargets(
    first_response=timedelta(hours=1), resolution=timedelta(hours=8), warn_before=timedelta(minutes=10)
)
