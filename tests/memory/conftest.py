"""The engine's fixtures, shared: probed no-op tools and a ThreadMemory over a real SQLite store."""

from __future__ import annotations

from tests.engine.conftest import db as db
from tests.engine.conftest import memory as memory
from tests.engine.conftest import probe as probe
from tests.engine.conftest import tools as tools
