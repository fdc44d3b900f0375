# Single entry point.  `make demo` and `make test` bootstrap everything they need
# (ngspice from the OS packages when missing, .venv/, the package with its extras).
VENV := .venv
BIN  := $(VENV)/bin

.PHONY: demo test bootstrap lint generate bench clean

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	$(BIN)/rram demo --out out

test: bootstrap
	$(BIN)/python -m pytest

lint: bootstrap
	$(BIN)/ruff check rram tests benchmarks

generate: bootstrap
	$(BIN)/rram generate

bench: bootstrap
	$(BIN)/python benchmarks/bench_engine.py

clean:
	rm -rf out .pytest_cache build *.egg-info
