"""Tests of staff ops drafting (`/ops draft`, `/ops show`) and its read-only tools."""
