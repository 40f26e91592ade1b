"""Fixtures for the Discord end-to-end tests: the fake Discord on loopback, the real discord.py client
(`ArcaDiscordBot`) started against it, a real app (SQLite store seeded with the demo data) and scripted
models that stream slowly or hold a loop call so a test can speak mid-run.
"""

from __future__ import annotations


# END
