# Developer entry points. `make bench` sets up the dev environment with the LangGraph anchor (extra
# `anchor`, for the engine's per-run ratio) and runs every benchmark.
# `make live` replays tests/live/ against the configured model (ARCA_MODEL, OPENAI_BASE_URL, ...):
# pass^TRIALS per case and the seconds per run. Needs a model, so never part of CI.
.PHONY: bench live run test

PYTHON ?= .venv/bin/python
TRIALS ?= 3

bench:
	scripts/bootstrap dev && .venv/bin/python -m pip install -q -e ".[dev,st,anchor]" && .venv/bin/python -m bench.run_all

run:
	scripts/run

test:
	scripts/test

live:
	$(PYTHON) -m bot replay tests/live --live --trials $(TRIALS) $(LIVE_ARGS)
