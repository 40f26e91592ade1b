"""The deployment files, checked without a Docker daemon (none is reachable where CI runs): the compose
file parses and names its services, hosts, ports and secrets consistently; every setting it gives the bot
is one the bot reads and loads without error; the Dockerfile is multi-stage, pinned, non-root and starts
the console script pyproject.toml declares; and the image's entry command runs outside a container with
the compose environment against the test services (tests marked postgres / chroma_server)."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from sqlalchemy.engine import make_url

from bot.config import load_settings
from bot.config.settings import Settings
from tests.support.game_backend import GameBackend
from tests.support.services import CHROMA_ENV

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
SERVICES = {"bot", "postgres", "chroma", "game-backend"}
OPERATOR_ENV = {"ARCA_WEB_SECRET": "compose-test-secret-" + "x" * 40}
"""What an operator must export before `docker compose up` (the file refuses to start without it)."""

_VAR = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def _interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's `${NAME}`, `${NAME:-default}`, `${NAME-default}` and `${NAME:?message}` substitution."""
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"] or ""
        have = env.get(name)
        if op in (":-", "-"):
            return have if have or (op == "-" and have is not None) else arg
        if op in (":?", "?"):
            if not have:
                raise KeyError(f"{name} is required: {arg}")
            return have
        return have or ""

    return _VAR.sub(one, value)


def _compose(env: dict[str, str] | None = None) -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    env = OPERATOR_ENV if env is None else env
    for service in data["services"].values():
        service["environment"] = {
            k: _interpolate(v, env) for k, v in (service.get("environment") or {}).items()
        }
        service["command"] = [_interpolate(c, env) for c in service.get("command", [])]
    return data


def _container_port(ports: list[str]) -> set[int]:
    return {int(p.rsplit(":", 1)[-1].split("/")[0]) for p in ports}


def _flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_compose_file_starts_the_bot_with_postgres_chroma_and_the_game_backend() -> None:
    compose = _compose()
    services = compose["services"]
    assert set(services) == SERVICES
    bot = services["bot"]
    assert set(bot["depends_on"]) == SERVICES - {"bot"}
    assert all(d["condition"] == "service_healthy" for d in bot["depends_on"].values())
    assert all("healthcheck" in s for s in services.values())
    assert services["game-backend"]["entrypoint"] == ["uvicorn"]
    assert services["game-backend"]["command"][0] == "examples.game_backend.app:app"
    # Every service's named volume is declared.
    for service in services.values():
        for volume in service.get("volumes", []):
            assert volume.split(":")[0] in compose["volumes"]


def test_the_bots_urls_name_the_services_and_ports_they_run_on() -> None:
    services = _compose()["services"]
    env = services["bot"]["environment"]

    db = make_url(env["ARCA_DB_URL"])
    pg = services["postgres"]["environment"]
    assert db.drivername == "postgresql+asyncpg"
    assert (db.host, db.port) == ("postgres", 5432)
    assert (db.username, db.password, db.database) == (
        pg["POSTGRES_USER"],
        pg["POSTGRES_PASSWORD"],
        pg["POSTGRES_DB"],
    )

    chroma = urlsplit(env["ARCA_CHROMA_URL"])
    chroma_cmd = services["chroma"]["command"]
    assert chroma.hostname == "chroma" and chroma.port == int(_flag(chroma_cmd, "--port"))
    assert str(chroma.port) in " ".join(services["chroma"]["healthcheck"]["test"])

    game = urlsplit(env["ARCA_GAME_API_URL"])
    game_cmd = services["game-backend"]["command"]
    assert game.hostname == "game-backend" and game.port == int(_flag(game_cmd, "--port"))
    assert env["ARCA_GAME_API_TOKEN"] == services["game-backend"]["environment"]["GAME_BACKEND_TOKEN"]
    assert env["ARCA_ORDER_SOURCE"] == "http"

    published = _container_port(services["bot"]["ports"])
    assert {int(env["ARCA_WEB_PORT"]), int(env["ARCA_METRICS_PORT"])} <= published
    assert f":{env['ARCA_WEB_PORT']}/readyz" in " ".join(services["bot"]["healthcheck"]["test"])
    # Published on loopback only: a TLS proxy in front, never the bare port on every interface.
    assert all(p.startswith("127.0.0.1:") for p in services["bot"]["ports"])


def test_every_setting_the_compose_file_gives_the_bot_is_one_the_bot_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = _compose()["services"]["bot"]["environment"]
    known = {
        info.validation_alias.choices[0]
        for info in Settings.model_fields.values()
        if info.validation_alias is not None
    }
    unknown = [k for k in env if k.startswith(("ARCA_", "DISCORD_", "OPENAI_")) and k not in known]
    assert not unknown, f"docker-compose.yml sets variables the bot does not read: {unknown}"
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = load_settings()
    assert settings.order_source == "http" and settings.web_port == 8080
    assert settings.database_url.startswith("postgresql+asyncpg://arca:")


def test_the_compose_file_refuses_to_start_without_a_web_secret() -> None:
    with pytest.raises(KeyError, match="ARCA_WEB_SECRET"):
        _compose(env={})


def test_the_dockerfile_is_multi_stage_pinned_non_root_and_runs_the_console_script() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    args = dict(re.findall(r"^ARG (\w+)=(\S+)$", text, flags=re.M))
    froms = re.findall(r"^FROM (\S+)(?: AS (\w+))?$", text, flags=re.M)
    assert len(froms) >= 2, "a build stage and a runtime stage"
    for image, _stage in froms:
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        _, _, tag = image.partition(":")
        assert tag and tag != "latest" and (re.search(r"\d+\.\d+\.\d+", tag) or "@sha256:" in image), image
    runtime = text.split(f"FROM {froms[-1][0]}", 1)[1]
    users = re.findall(r"^USER (\S+)$", runtime, flags=re.M)
    assert users and users[-1] not in ("root", "0"), "the runtime stage runs as a non-root user"
    entry = re.search(r"^ENTRYPOINT (\[.*\])$", runtime, flags=re.M)
    assert entry is not None
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert yaml.safe_load(entry.group(1)) == ["arca-bot"] and "arca-bot" in scripts
    exposed = {int(p) for line in re.findall(r"^EXPOSE (.+)$", runtime, flags=re.M) for p in line.split()}
    bot = _compose()["services"]["bot"]
    assert _container_port(bot["ports"]) <= exposed
    # What the other services run from the same image is inside it.
    for needed in ("examples", "policies", "data", "licenses"):
        assert re.search(rf"^COPY {needed} ", text, flags=re.M), needed
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".venv", "var", ".git", ".env", "arca.toml"} <= set(ignored), (
        "no local state or secret in the context"
    )
    assert not {"examples", "policies", "data", "licenses", "bot", "tools"} & set(ignored)
    assert "HF_HUB_OFFLINE=1" in runtime, "no model is downloaded at run time"


def _local_env(compose_env: dict[str, str], *, db_url: str, chroma_url: str, game_url: str) -> dict[str, str]:
    """The compose environment with the service hosts pointed at the test services on loopback."""
    env = dict(compose_env)
    env["ARCA_DB_URL"] = (
        make_url(env["ARCA_DB_URL"])
        .set(host=make_url(db_url).host, port=make_url(db_url).port, database=make_url(db_url).database)
        .render_as_string(hide_password=False)
    )
    env["ARCA_CHROMA_URL"] = chroma_url
    env["ARCA_GAME_API_URL"] = game_url
    return env


def _run(argv: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *argv],
        env=_run_env(env, tmp_path),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.postgres
@pytest.mark.chroma_server
@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_the_entry_command_runs_outside_a_container_with_the_compose_environment(
    pg_url: str, tmp_path: Path
) -> None:
    compose = _compose()
    bot = compose["services"]["bot"]
    with GameBackend(token=bot["environment"]["ARCA_GAME_API_TOKEN"]) as backend:
        env = _local_env(
            bot["environment"], db_url=pg_url, chroma_url=os.environ[CHROMA_ENV], game_url=backend.url
        )
        seeded = await asyncio.to_thread(_run, ["seed"], env, tmp_path)
        assert seeded.returncode == 0, seeded.stderr
        doctor = await asyncio.to_thread(_run, ["doctor"], env, tmp_path)
        # Everything the compose file sets up is ready; what it leaves to the operator is named.
        for line in (
            "✔ configuration",
            "✔ policies",
            "✔ database: postgresql",
            "✔ policy index: Chroma server",
        ):
            assert line in doctor.stdout, doctor.stdout
        assert doctor.stdout.rstrip().endswith("need fixing: LLM endpoint, Discord token"), doctor.stdout

        # The compose file's own command for a deployment without Discord (ARCA_BOT_COMMAND=web).
        web_command = _compose({**OPERATOR_ENV, "ARCA_BOT_COMMAND": "web"})["services"]["bot"]["command"]
        assert web_command == ["web"]
        port = _free_port()
        env.update({"ARCA_WEB_HOST": "127.0.0.1", "ARCA_WEB_PORT": str(port), "ARCA_METRICS_PORT": ""})
        log_path = tmp_path / "web.log"
        with log_path.open("w") as log:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                *web_command,
                env=_run_env(env, tmp_path),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                ready = await _wait_ready(f"http://127.0.0.1:{port}", proc, log_path)
                assert ready == {"database": "ok", "policy_index": "ok", "game_backend": "ok"}
            finally:
                if proc.returncode is None:
                    proc.terminate()
                code = await asyncio.wait_for(proc.wait(), 60)
        assert code == 0, log_path.read_text()[-3000:]


def _run_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The process environment of the image (offline, its data dir) plus the compose environment."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
        "ARCA_DATA_DIR": str(tmp_path / "var"),  # the image's /var/lib/arca
        "ARCA_CONFIG": "",
        **env,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _wait_ready(url: str, proc: asyncio.subprocess.Process, log: Path) -> dict[str, str]:
    deadline = time.monotonic() + 420  # the first index build embeds every policy chunk; 2 loaded cores
    last: Any = None
    async with httpx.AsyncClient(timeout=10) as client:
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise AssertionError(f"`arca-bot web` exited {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                response = await client.get(f"{url}/readyz")
                last = response.json()
                if response.status_code == 200:
                    return last["checks"]
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.5)
    raise AssertionError(f"never ready: {last}\n{log.read_text()[-3000:]}")
