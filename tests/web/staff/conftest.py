"""Fixtures for the staff console: a running web server (tests/web/conftest.py), sign-in links, a signed-in
HTTP client with its CSRF token, and a pending coupon."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
async def web(make_web: Any) -> Any:
    return await make_web("native")
