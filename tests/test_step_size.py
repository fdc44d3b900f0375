"""Results do not depend on the step size: halving the engine's maximum step and its
tolerances moves V_set, V_reset, R_LRS and R_HRS by at most 0.5 %."""

from __future__ import annotations

import numpy as np

from rram.engine.run import Options, simulate
from rram.engine.stimulus import dc_loops
from rram.metrics import loop_metrics

COLS = ["v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm"]


def _metrics(options):
    res = simulate("compliance", dc_loops(cycles=2), options=options)
    res.raise_on_failure()
    return loop_metrics(res)[COLS].to_numpy(), res.stats[0, 0]


def test_halving_step_and_tolerances_changes_metrics_by_at_most_half_a_percent():
    base = Options()
    half = Options(rtol=base.rtol / 2, atol_nm=base.atol_nm / 2, atol_k=base.atol_k / 2,
                   chgtol=base.chgtol / 2, hfrac=base.hfrac / 2)
    m1, steps1 = _metrics(base)
    m2, steps2 = _metrics(half)
    assert steps2 > steps1  # the second run really used smaller steps
    change = np.abs(m2 / m1 - 1.0)
    assert np.all(change <= 0.005), dict(zip(COLS, change.max(axis=0), strict=True))


def test_halving_only_the_maximum_step():
    m1, _ = _metrics(Options(hmax=20e-6))
    m2, _ = _metrics(Options(hmax=10e-6))
    assert np.all(np.abs(m2 / m1 - 1.0) <= 0.005)
