"""An app (seeded SQLite store, no policy index) whose runs take scripted models from a queue."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_app
from bot.config import load_settings
from bot.store import Store
from tests.fakes.knowledge import EmptyPolicyIndex
from tests.support.attachments import AttachApp


@pytest.fixture
async def attach_app(seeded_store: Store, tmp_path: Path) -> AsyncIterator[AttachApp]:
    settings = load_settings(ARCA_DATA_DIR=str(tmp_path), edit_interval=0.0)
    holder = AttachApp(app=None, data_dir=tmp_path)  # type: ignore[arg-type]

    def next_llm() -> Any:
        if not holder.queue:
            raise AssertionError("the bot called the model but no script was queued")
        return holder.queue.pop(0)

    holder.app = await build_app(
        settings, llm_factory=next_llm, store=seeded_store, policy_index=EmptyPolicyIndex()
    )
    yield holder
