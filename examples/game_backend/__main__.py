"""`python -m examples.game_backend [--host H] [--port P]`: run the reference backend (settings from the
environment: GAME_BACKEND_TOKEN, GAME_BACKEND_DB)."""

from __future__ import annotations

import argparse

import uvicorn

from examples.game_backend.app import BackendSettings, create_app


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.game_backend")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    args = parser.parse_args()
    settings = BackendSettings.from_env()
    # uvloop and httptools (uvicorn's "standard" parts) and no access log: several times the grants per
    # second of the pure-Python defaults, which matters when a bench posts a 10,000-grant wave.
    uvicorn.run(
        create_app(token=settings.token, db_path=settings.db_path),
        host=args.host,
        port=args.port,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
