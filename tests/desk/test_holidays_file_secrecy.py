"""A holidays file with the wrong content: the start-up error names the file and the line, and never
prints what the file holds (a secret put in the wrong file would land on the screen and in the logs)."""

from __future__ import annotations

import pytest

from bot.config import ConfigError, load_settings
from bot.desk.hours import SupportHours

SECRET = "sk-live-4f9c2e7a1b8d6f3e0a5c9b2d7e4f1a8c"


@pytest.mark.parametrize(
    "content",
    [
        f"2026-03-03\nOPENAI_API_KEY={SECRET}\n",
        f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n",
        SECRET.encode() + b"\xff\xfe\x00",
    ],
    ids=["env-line", "key-file", "binary"],
)
def test_a_holidays_file_with_a_secret_is_refused_without_echoing_it(tmp_path, content) -> None:
    path = tmp_path / "holidays.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    settings = load_settings(
        ARCA_DATA_DIR=str(tmp_path), ARCA_SUPPORT_HOURS="mon-fri 10:00-19:00", ARCA_SUPPORT_HOLIDAYS=str(path)
    )
    with pytest.raises(ConfigError) as err:
        SupportHours.from_settings(settings)
    said = str(err.value)
    assert str(path) in said and "YYYY-MM-DD" in said
    assert SECRET not in said and SECRET[:12] not in said and "BEGIN" not in said
