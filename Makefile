# Developer entry points. `make bench` sets up the dev environment and runs every benchmark.
.PHONY: bench run test

bench:
	scripts/bootstrap dev && .venv/bin/python -m bench.run_all

run:
	scripts/run

test:
	scripts/test
