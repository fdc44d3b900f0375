# Single entry point.  `make demo` and `make test` bootstrap everything they need
# (ngspice from the OS packages when missing, .venv/, the package with its extras).
VENV := .venv
BIN  := $(VENV)/bin

.PHONY: demo test test-fast bootstrap lint generate bench fit clean

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	$(BIN)/rram demo --out out

# all cores (pytest-xdist; tests are independent, each worker one numba thread)
test: bootstrap
	$(BIN)/python -m pytest -n auto --dist worksteal

# the edit-test loop: every test not marked slow (CI runs them all: make test)
test-fast: bootstrap
	$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow"

lint: bootstrap
	$(BIN)/ruff check rram tests benchmarks

generate: bootstrap
	$(BIN)/rram generate

bench: bootstrap
	$(BIN)/python benchmarks/bench_engine.py --markdown
	$(BIN)/python benchmarks/bench_spice.py --markdown
	$(BIN)/python benchmarks/bench_mc.py --markdown
	$(BIN)/python benchmarks/bench_floor.py --markdown
	$(BIN)/python benchmarks/bench_endurance.py --markdown

# Calibration of the TUD device (fitting/README.md): loop fit, variation fit, exports.
TUD := fitting/data/tud_H16248L_M12/tud_H16248L_M12
FIT := fitting/results/tud_H16248L_M12
# The loop fit is ill-conditioned (j0 and rho0 are not identified): the last bit of a
# BLAS result moves its kinetics stage between minima of nearly equal RMS (0.138 and
# 0.146 dec).  OpenBLAS picks its kernels by the CPU (fitting/README.md has the CFs the
# kernels gave), so the fit pins the Haswell kernels, which every x86-64 machine of the
# last decade runs; with them it writes the committed files.
fit: export OPENBLAS_CORETYPE = Haswell
fit: bootstrap
	$(BIN)/python -m rram.fit.tud $(TUD)_endurance_summary_1000cyc.txt $(TUD)_distribution.csv
	$(BIN)/rram fit $(TUD)_set_IV_101cyc.csv $(TUD)_reset_IV_105cyc.csv \
	    --recipe fitting/recipes/default.json --out $(FIT).card.json --plot $(FIT)_fit.png \
	    --holdout 0.1
	$(BIN)/rram fit-cycles $(TUD)_set_IV_101cyc.csv $(TUD)_reset_IV_105cyc.csv \
	    --card $(FIT).card.json --out $(FIT).cycles.csv
	# --accept: the variation fit passes 12 of its 14 checks; it fails R_LRS's shape (KS
	# 0.107) and the failed RESETs (0.56 % against none measured), and the spec is
	# written with that verdict in it (issue 38, open)
	$(BIN)/rram fit-variation $(TUD)_distribution.csv --card $(FIT).card.json \
	    --scatter $(FIT).cycles.csv --out $(FIT).variation.json \
	    --plots fitting/results --holdout 0.1 --rounds 16 --polish 20 --accept
	$(BIN)/rram export --format spice --card $(FIT).card.json --name rram_tud \
	    --out $(FIT).lib
	$(BIN)/rram export --format veriloga --card $(FIT).card.json --name rram_tud \
	    --out $(FIT).va

clean:
	rm -rf out .pytest_cache build *.egg-info
