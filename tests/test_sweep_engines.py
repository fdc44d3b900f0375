"""``rram sweep`` gives the same loop with each engine (acceptance of issue 3)."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from rram.cli import main
from rram.engine.run import COLUMNS
from rram.experiment import DCLoop
from rram.metrics import loop_metrics
from rram.sweep import run_sweep

METRICS = ("v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm", "i_peak_A")


def metrics(engine: str) -> pd.Series:
    return loop_metrics(run_sweep(DCLoop.of_sweep(), engine=engine)).iloc[0][list(METRICS)]


@pytest.mark.parametrize("engine", ["veriloga", pytest.param("ngspice", marks=pytest.mark.slow)])
def test_default_sweep_matches_the_python_engine(engine):
    ref, got = metrics("python"), metrics(engine)
    rel = ((got - ref).abs() / ref.abs()).astype(float)
    assert (rel <= 0.01).all(), rel.to_dict()


@pytest.mark.parametrize("engine", ["python", "veriloga"])
def test_cli_sweep_writes_the_same_table_for_each_engine(engine, tmp_path):
    out = tmp_path / f"{engine}.csv"
    result = CliRunner().invoke(main, ["sweep", "--engine", engine, "--out", str(out)])
    assert result.exit_code == 0, result.output
    df = pd.read_csv(out)
    assert tuple(df.columns) == COLUMNS and len(df) > 1000
    # the compliance, and the forming SET's overshoot of the cell's ~2 fF above it
    assert df["current_A"].abs().max() == pytest.approx(100e-6, rel=0.1)
