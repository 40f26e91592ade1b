from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings


def test_defaults_match_the_design() -> None:
    s = load_settings()
    assert s.staff_role == "Support Staff"
    assert s.timezone == "Asia/Seoul"
    assert s.allow_dms is False
    assert s.data_dir == Path("var")
    assert s.database_url.startswith("sqlite+aiosqlite:///") and s.database_url.endswith("var/arca.db")
    assert s.llm_configured is False


def test_env_vars_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ARCA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ARCA_SUPPORT_CHANNELS", "111, 222")
    monkeypatch.setenv("ARCA_ALLOW_DMS", "true")
    monkeypatch.setenv("ARCA_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    s = load_settings()
    assert s.support_channels == [111, 222]
    assert s.allow_dms is True
    assert s.llm_configured
    assert s.model_configs()["main"].abilities()["tool_call"] is True
    assert "sk-test-123" not in repr(s)


def test_arca_toml_is_read_and_env_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "arca.toml"
    cfg.write_text(
        'ARCA_STAFF_ROLE = "GM"\nARCA_TIMEZONE = "UTC"\n[models.local]\nmodel = "qwen"\nroles = ["fast"]\n'
        "tool_call = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    monkeypatch.setenv("ARCA_TIMEZONE", "Asia/Tokyo")
    s = load_settings()
    assert s.staff_role == "GM"
    assert s.timezone == "Asia/Tokyo"
    assert s.models["local"].abilities()["tool_call"] is False


def test_only_the_documented_names_are_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A container's generic variables are not the bot's settings (field names are no env var names).
    for name, value in {"LOG_LEVEL": "DEBUG", "TIMEZONE": "UTC", "MODEL": "x", "STAFF_ROLE": "GM"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("arca_log_format", "json")  # a documented name, in any case
    s = load_settings()
    assert (s.log_level, s.timezone, s.model, s.staff_role) == ("INFO", "Asia/Seoul", None, "Support Staff")
    assert s.log_format == "json"
    cfg = tmp_path / "arca.toml"  # arca.toml and keyword arguments still take the field names
    cfg.write_text('staff_role = "GM"\n', encoding="utf-8")
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    assert load_settings().staff_role == "GM"
    assert load_settings(timezone="UTC").timezone == "UTC"


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("ARCA_TIMEZONE", "Mars/Base", "ARCA_TIMEZONE: expected an IANA time zone"),
        ("ARCA_ALLOW_DMS", "maybe", "ARCA_ALLOW_DMS:"),
        ("ARCA_SUPPORT_CHANNELS", "general", "ARCA_SUPPORT_CHANNELS:"),
        ("ARCA_MAX_ITERATIONS", "0", "ARCA_MAX_ITERATIONS:"),
    ],
)
def test_invalid_value_fails_with_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert message.startswith(expected), message
    assert "\n" not in message


def test_config_error_never_echoes_a_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "arca.toml"
    cfg.write_text('DISCORD_TOKEN = ["not", "a", "string"]\n', encoding="utf-8")
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "DISCORD_TOKEN" in str(info.value)
    assert "not" not in str(info.value).split(":", 1)[1]


def test_malformed_toml_is_a_config_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "arca.toml"
    cfg.write_text("ARCA_MODEL = \n", encoding="utf-8")
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    with pytest.raises(ConfigError, match=r"arca\.toml: invalid TOML"):
        load_settings()
