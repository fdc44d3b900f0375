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


@pytest.mark.parametrize("engine", ["veriloga", "vacask",
                                    pytest.param("ngspice", marks=pytest.mark.slow)])
def test_default_sweep_matches_the_python_engine(engine):
    ref, got = metrics("python"), metrics(engine)
    rel = ((got - ref).abs() / ref.abs()).astype(float)
    assert (rel <= 0.01).all(), rel.to_dict()


@pytest.mark.parametrize("engine", ["python", "veriloga", "vacask"])
def test_cli_sweep_writes_the_same_table_for_each_engine(engine, tmp_path):
    out = tmp_path / f"{engine}.csv"
    result = CliRunner().invoke(main, ["sweep", "--engine", engine, "--out", str(out)])
    assert result.exit_code == 0, result.output
    df = pd.read_csv(out)
    assert tuple(df.columns) == COLUMNS and len(df) > 1000
    # the compliance, and the forming SET's overshoot of the cell's ~2 fF above it
    assert df["current_A"].abs().max() == pytest.approx(100e-6, rel=0.1)


def test_a_long_sweep_in_batches_is_one_sweep():
    """Issue 35: ``rram sweep`` simulates long sweeps in batches (bounded memory), each
    starting in the state the last one left; 6 cycles in batches of 2 give the samples
    and figures of one run of 6 (measured: figures within 1.5e-9, currents 1.2e-11 of
    the largest)."""
    import numpy as np

    from rram.sweep import sweep_batches, sweep_frame, sweep_rows

    loop = DCLoop.of_sweep()
    whole = run_sweep(loop, cycles=6)
    parts = list(sweep_batches(loop, cycles=6, batch=2))
    assert len(parts) == 3
    frame = pd.concat([f for f, _ in parts], ignore_index=True)
    ref = sweep_frame(whole)
    assert len(frame) == len(ref) == sweep_rows(loop, 6)
    assert (frame["cycle"].to_numpy() == ref["cycle"].to_numpy()).all()
    assert np.abs(frame["time_s"].to_numpy() - ref["time_s"].to_numpy()).max() < 1e-12
    scale = ref["current_A"].abs().max()
    assert np.abs(frame["current_A"] - ref["current_A"]).max() < 1e-8 * scale
    got = pd.concat([m for _, m in parts], ignore_index=True)
    want = loop_metrics(whole)
    assert list(got["cycle"]) == list(want["cycle"]) == list(range(6))
    for name in METRICS:
        assert np.allclose(got[name], want[name], rtol=1e-8), name


def test_the_step_limit_is_one_of_each_stimulus_segment():
    """700 cycles of ``rram sweep`` hit a step limit of the whole run (200 000 steps);
    the limit is one of each stimulus segment, so it does not grow with the cycles: 3
    cycles under a limit of 400 steps (the run takes 974, its longest segment < 300)
    complete, with the same figures as without a limit."""
    from rram.engine.run import Options, simulate
    from rram.engine.stimulus import dc_loops
    from rram.status import Stat

    free = simulate("compliance", dc_loops(cycles=3))
    assert free.stats[0, Stat.STEPS] > 2 * 400  # steps of the whole run
    capped = simulate("compliance", dc_loops(cycles=3), options=Options(max_steps=400))
    capped.raise_on_failure()
    a, b = loop_metrics(free), loop_metrics(capped)
    assert list(a[list(METRICS)].iloc[-1]) == list(b[list(METRICS)].iloc[-1])
