"""Configuration errors: one line naming the file or variable, never a secret value."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_settings
from bot.redaction import redact_url, redact_urls

KEY = "sk-arcaSECRETmodelkey0123456789"
PASSWORD = "hunter2PASSWORD"


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    cfg = tmp_path / "arca.toml"
    cfg.write_text(text, encoding="utf-8")
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    return cfg


def _error(monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_models_table_with_a_missing_field_names_it_without_echoing_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config(
        tmp_path,
        monkeypatch,
        f'[models.local]\napi_key = "{KEY}"\nbase_url = "http://arca:{PASSWORD}@127.0.0.1:11434/v1"\n',
    )
    message = _error()
    assert message.startswith("models.local.model: Field required"), message
    assert KEY not in message and PASSWORD not in message


@pytest.mark.parametrize(
    "text",
    [
        f'[models]\nlocal = "{KEY}"\n',  # a key written where a table belongs
        f'[models.local]\nmodel = "m"\ncontext_window = "{KEY}"\n',
        f'OPENAI_API_KEY = ["{KEY}"]\n',
        f'ARCA_METRICS_PORT = "http://arca:{PASSWORD}@host"\n',
    ],
)
def test_no_settings_error_echoes_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    _config(tmp_path, monkeypatch, text)
    message = _error()
    assert KEY not in message and PASSWORD not in message, message


def test_unknown_keys_in_a_models_table_are_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, '[models.local]\nmodel = "qwen"\ncontext_windw = 8000\n')
    assert _error().startswith("models.local.context_windw: Extra inputs are not permitted")


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _config(tmp_path, monkeypatch, 'ARCA_STAFF_ROLE = "GM"\nARCA_MODEL = \n')
    message = _error()
    assert message.startswith(f"{cfg}: invalid TOML"), message
    assert "line 2" in message


def test_a_toml_file_that_is_not_utf8_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "arca.toml"
    cfg.write_bytes(b'ARCA_MODEL = "\xff\xfe"\n')
    monkeypatch.setenv("ARCA_CONFIG", str(cfg))
    assert _error() == f"{cfg}: invalid TOML: not UTF-8 text"


def test_arca_config_naming_a_missing_file_or_a_folder_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCA_CONFIG", str(tmp_path / "nope.toml"))
    assert _error().startswith(f"ARCA_CONFIG: {tmp_path / 'nope.toml'}: no such file")
    monkeypatch.setenv("ARCA_CONFIG", str(tmp_path))
    assert _error().startswith(f"ARCA_CONFIG: {tmp_path}: is a folder, not a file")
    monkeypatch.setenv("ARCA_CONFIG", "")
    assert load_settings().staff_role == "Support Staff"  # empty: no configuration file at all


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("ARCA_EDIT_INTERVAL", "inf"),
        ("ARCA_EDIT_INTERVAL", "nan"),
        ("ARCA_LLM_TIMEOUT", "inf"),
        ("ARCA_STAFF_ROLE", ""),
        ("ARCA_STAFF_ROLE", "   "),
        ("ARCA_MAX_MESSAGE_CHARS", "100000000000"),
        ("ARCA_WEB_RATE_WINDOW", "inf"),
        ("ARCA_WEB_RATE_WINDOW", "0"),
    ],
)
def test_absurd_values_are_rejected(monkeypatch: pytest.MonkeyPatch, var: str, value: str) -> None:
    monkeypatch.setenv(var, value)
    assert _error().startswith(f"{var}:")


@pytest.mark.parametrize(
    "var,expected",
    [
        ("ARCA_WEB_RATE_LIMIT", "integer"),
        ("ARCA_TIMEZONE", "IANA time zone"),
        ("ARCA_LOG_LEVEL", "DEBUG, INFO"),
        ("ARCA_LOG_FORMAT", "'text' or 'json'"),
    ],
)
def test_a_bad_value_is_never_echoed_only_named_and_explained(
    monkeypatch: pytest.MonkeyPatch, var: str, expected: str
) -> None:
    monkeypatch.setenv(var, KEY)  # a secret pasted into the wrong variable
    message = _error()
    assert message.startswith(f"{var}:") and expected in message and KEY not in message


def test_a_bad_toml_value_is_never_echoed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, monkeypatch, f'ARCA_TIMEZONE = "{KEY}"\nARCA_WEB_PORT = "{PASSWORD}"\n')
    message = _error()
    assert KEY not in message and PASSWORD not in message


def test_the_cli_and_doctor_report_the_same_config_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, monkeypatch, f'[models.local]\napi_key = "{KEY}"\n')
    assert main(["seed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "arca-bot: configuration error: models.local.model: Field required"
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "✘ configuration: models.local.model: Field required" in out
    assert KEY not in out


def test_one_url_redaction() -> None:
    assert redact_url(f"http://arca:{PASSWORD}@host:8000/v1") == "http://arca:***@host:8000/v1"
    assert (
        redact_url(f"postgresql+asyncpg://arca:{PASSWORD}@db/arca") == "postgresql+asyncpg://arca:***@db/arca"
    )
    assert redact_url(f"arca:{PASSWORD}@host:8000") == "arca:***@host:8000"
    assert redact_url(f"https://host/v1?api_key={PASSWORD}&x=1") == "https://host/v1?api_key=***&x=1"
    assert redact_url("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1"
    assert redact_url("sqlite+aiosqlite:////tmp/a.db") == "sqlite+aiosqlite:////tmp/a.db"
    text = f"cannot reach http://u:{PASSWORD}@h/v1 or chroma https://x:{PASSWORD}@c:8000"
    assert PASSWORD not in redact_urls(text)
