"""Every RRAM phenomenon of issue 2 §5, asserted with its threshold on the default card."""

from __future__ import annotations

import numpy as np
import pytest

from rram import phenomena as ph


@pytest.fixture(scope="module")
def results():
    return {f.__name__: f() for f in ph.ALL}


def test_abrupt_set_10_to_90_percent_within_50_mV(results):
    p = results["abrupt_set"]
    assert p.passed, p.figures
    assert max(p.figures["rise_10_90_mV"]) <= 50.0
    assert len(p.figures["rise_10_90_mV"]) == 3  # every cycle, not only the first


def test_gradual_reset_over_300_mV_without_an_abrupt_step(results):
    p = results["gradual_reset"]
    assert p.passed, p.figures
    assert min(p.figures["decay_to_half_mV"]) >= 300.0
    assert min(p.figures["worst_10mV_kept"]) >= 0.5


def test_lrs_is_set_by_compliance(results):
    p = results["lrs_vs_compliance"]
    r = np.array(p.figures["r_lrs_ohm"])
    assert np.all(np.diff(r) < 0)
    assert -1.4 <= p.figures["log_slope"] <= -0.6


def test_hrs_is_set_by_reset_voltage(results):
    p = results["hrs_vs_reset_voltage"]
    r = np.array(p.figures["r_hrs_ohm"])
    assert p.figures["v_reset_V"][0] == -1.0 and p.figures["v_reset_V"][-1] == -2.0
    assert np.all(np.diff(r) > 0)
    assert r[-1] / r[0] >= 10.0


def test_overshoot_grows_with_drain_capacitance(results):
    p = results["overshoot"]
    peaks = np.array(p.figures["peak_over_compliance"])
    r = np.array(p.figures["r_lrs_ohm"])
    cds = np.array(p.figures["cd_F"])
    k100 = int(np.argmin(np.abs(cds - 100e-15)))
    assert peaks[k100] >= 2.0
    assert peaks[0] == pytest.approx(1.0, abs=0.05)  # 1 fF: the transistor limits
    assert r[k100] < r[0]


def test_read_disturb_exceeds_ten_years_and_falls_exponentially(results):
    p = results["read_disturb"]
    t = np.array(p.figures["t_half_s"])
    v = np.array(p.figures["voltage_V"])
    assert v[0] == pytest.approx(0.1) and v[-1] == pytest.approx(0.6)
    assert t[0] > 10 * ph.YEAR
    assert np.all(np.diff(t) < 0)
    assert p.checks["exponential in voltage (log-linear fit, R^2 > 0.95)"]


def test_reset_temperature_rise_is_reported_and_continuous(results):
    p = results["reset_temperature"]
    assert p.figures["max_rise_K"] > 0.5
    assert p.passed
