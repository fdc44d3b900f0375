"""A switching metric is reported only where the state switched (rram.events), in every
engine and in ``rram mc``."""

from __future__ import annotations

import numpy as np
import pytest

from rram.engine.run import simulate
from rram.engine.stimulus import dc_loops
from rram.experiment import DCLoop
from rram.mc import MonteCarlo, run_devices
from rram.metrics import (
    NO_RESET,
    NO_SET,
    failed_reset_share,
    failed_resets,
    loop_metrics,
    switching_rule,
)


def test_the_rule_keeps_a_voltage_only_where_the_resistance_changed_twofold():
    v_set, v_reset, reason = switching_rule(
        v_set=[1.0, 1.0, 1.0, np.nan], v_reset=[-0.6, -0.6, -0.6, -0.6],
        r_before=[1e5, 1.5e4, 1e5, 1e5], r_lrs=[1e4, 1e4, 1e4, 1e4],
        r_hrs=[1e5, 1e5, 1.9e4, 1e5])
    np.testing.assert_array_equal(v_set, [1.0, np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(v_reset, [-0.6, -0.6, np.nan, -0.6])
    assert list(reason) == ["", NO_SET, NO_RESET, ""]


def test_a_failed_reset_is_one_after_a_set_that_switched():
    """Issue 38: a run of failed SETs reads no_set+no_reset (its RESET had nothing to
    reset) and counts among the failed SETs only; a failed RESET is one after a SET
    that switched, and its share is over those cycles."""
    reason = ["", NO_RESET, f"{NO_SET}+{NO_RESET}", NO_SET, "", np.nan]
    assert failed_resets(reason).tolist() == [False, True, False, False, False, False]
    assert failed_reset_share(reason) == pytest.approx(1 / 4)
    assert np.isnan(failed_reset_share([f"{NO_SET}+{NO_RESET}", NO_SET]))


def test_a_cell_that_conducts_nothing_reports_why():
    """Issue 35: corner cards read R_LRS = R_HRS = inf, and inf >= 2 * inf held: an
    empty reason.  An open cell after its SET switched neither way; an open HRS after a
    finite LRS is a RESET."""
    v_set, v_reset, reason = switching_rule(
        v_set=[1.0, 1.0, 1.0], v_reset=[-0.6, -0.6, -0.6],
        r_before=[np.inf, np.inf, 1e5], r_lrs=[np.inf, 1e4, np.inf],
        r_hrs=[np.inf, np.inf, np.inf])
    np.testing.assert_array_equal(v_set, [np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(v_reset, [np.nan, -0.6, np.nan])
    assert list(reason) == [f"{NO_SET}+{NO_RESET}", "", f"{NO_SET}+{NO_RESET}"]


@pytest.mark.parametrize("engine", ["python", "veriloga"])
def test_a_cell_that_never_switches_reports_no_switching_voltage(engine):
    """The sweep stops below the SET voltage: no V_set, no V_reset, and why."""
    st = dc_loops(v_set=0.3, v_reset=-0.3)
    if engine == "python":
        res = simulate("compliance", st)
    else:
        from rram.spice import simulate_spice

        res = simulate_spice("compliance", st, model="osdi")
    m = loop_metrics(res).iloc[0]
    assert np.isnan(m["v_set_V"]) and np.isnan(m["v_reset_V"])
    assert m["reason"] == f"{NO_SET}+{NO_RESET}"
    assert m["r_lrs_ohm"] == pytest.approx(m["r_hrs_ohm"], rel=1e-3)


def test_a_sweep_too_fast_to_set_reports_no_set_voltage():
    m = loop_metrics(simulate("compliance", dc_loops(rate=1e9))).iloc[0]
    assert np.isnan(m["v_set_V"]) and NO_SET in m["reason"]


def test_a_set_that_never_reaches_a_high_compliance_still_has_its_voltage():
    """10 mA is never reached (contacts and the hot CF limit the current): the SET is
    the steepest rise of the current, and it is reported because R fell."""
    res = simulate("compliance", dc_loops(icc_set=1e-2, cycles=2))
    m = loop_metrics(res)
    assert (m["i_peak_A"] < 0.5e-2).all()
    assert m["v_set_V"].notna().all() and (m["reason"] == "").all()
    # the same voltage as where a compliance-limited SET of this cycle jumps
    ref = loop_metrics(simulate("compliance", dc_loops(icc_set=1e-4, cycles=2)))
    assert m["v_set_V"].to_numpy() == pytest.approx(ref["v_set_V"].to_numpy(), abs=0.02)
    assert (m["r_hrs_ohm"] > 2 * m["r_lrs_ohm"]).all()


def test_the_monte_carlo_applies_the_same_rule():
    mc = MonteCarlo(devices=3, cycles=2, seed=1, protocol=DCLoop(v_set=0.3, v_reset=-0.3))
    frame = run_devices(mc, range(3))
    assert frame["converged"].all()
    assert frame["v_set_V"].isna().all() and frame["v_reset_V"].isna().all()
    assert (frame["reason"] == f"{NO_SET}+{NO_RESET}").all()
    ok = run_devices(MonteCarlo(devices=3, cycles=2, seed=1), range(3))
    assert (ok["reason"] == "").all() and ok["v_set_V"].notna().all()
