"""Nested (D2D/C2C) variation fit: statistics of many devices × many cycles, and the
round trip from a spec with known D2D and C2C spreads."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_fit_variation import FORMED, as_distribution

from rram.errors import InputError
from rram.fit.nested import (
    check_design,
    conditional_d2d,
    median_covariance,
    median_factors,
    nested_stats,
    winsorized_sigma,
)
from rram.fit.variation import fit_variation, target_of
from rram.mc import MonteCarlo, run_devices
from rram.variation import Variation, VariationSpec


def synthetic(devices: int, cycles: int, d2d: float, c2c: float, seed: int
              ) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centre = 2.0 + d2d * rng.standard_normal(devices)
    y = centre[:, None] + c2c * rng.standard_normal((devices, cycles))
    return y.ravel(), np.repeat(np.arange(devices), cycles)


@pytest.mark.parametrize(("d2d", "c2c", "cycles"), [(0.3, 0.15, 50), (0.04, 0.08, 50),
                                                     (0.1, 0.2, 5)])
def test_nested_stats_recover_known_spreads(d2d, c2c, cycles):
    # 2000 devices: the estimates' own noise is ~2 %, far inside the 6 % asserted
    y, dev = synthetic(2000, cycles, d2d, c2c, seed=4)
    s = nested_stats(y, dev)
    assert s["devices"] == 2000 and s["cycles"] == cycles
    assert abs(s["within"] / c2c - 1) < 0.06, s
    assert abs(s["d2d"] / d2d - 1) < 0.06, s
    # the medians' spread still carries the C2C noise the d2d figure removes
    assert s["between"] > s["d2d"]


def paired(devices: int, cycles: int, seed: int) -> tuple[np.ndarray, ...]:
    """x = a + e, y = 0.8·a + c + 0.5·e + f per cycle: a shared D2D draw (ln-σ 0.3), y's
    own D2D part c (0.1), and C2C noise that x and y share within a cycle."""
    rng = np.random.default_rng(seed)
    a, c = rng.normal(0, 0.3, devices), rng.normal(0, 0.1, devices)
    e, f = rng.normal(0, 0.2, (2, devices * cycles))
    x = np.repeat(a, cycles) + e
    y = 0.8 * np.repeat(a, cycles) + np.repeat(c, cycles) + 0.5 * e + f
    return y, x, np.repeat(np.arange(devices), cycles)


@pytest.mark.parametrize("cycles", [5, 50])
def test_the_conditional_d2d_spread_is_what_the_other_metric_leaves(cycles):
    """y's D2D σ is √(0.8²·0.3² + 0.1²) = 0.26, of which x's medians leave 0.1, for
    medians of 5 cycles (the model's design) as of 50 (the data's): the C2C noise the
    medians share is taken out (with k(n)·ρ instead of the medians' own covariance, it
    came out 9 % high at 5 cycles)."""
    y, x, dev = paired(4000, cycles, seed=2)
    assert abs(conditional_d2d(y, x, dev) / 0.1 - 1) < 0.05
    assert abs(nested_stats(y, dev)["d2d"] / math.hypot(0.24, 0.1) - 1) < 0.05
    # no shared D2D draw: the whole D2D spread is left
    rng = np.random.default_rng(5)
    assert abs(conditional_d2d(y, rng.permutation(x), dev) / nested_stats(y, dev)["d2d"] - 1) \
        < 0.1


def test_median_covariance_spans_independent_to_identical_pairs():
    k = median_factors(5)[1]
    assert abs(median_covariance(5, 0.0)) < 2e-3
    assert median_covariance(5, 1.0) == pytest.approx(k, rel=1e-5)
    # below k·ρ (the sign correlation of a normal pair, (2/π)·arcsin ρ for many values)
    assert k * 2 / math.pi * math.asin(0.5) * 0.95 < median_covariance(5, 0.5) < k * 0.5


def test_conditional_d2d_needs_three_devices():
    y, x, dev = paired(2, 10, seed=1)
    assert math.isnan(conditional_d2d(y, x, dev))


def test_the_c2c_noise_of_few_cycles_is_removed():
    """No D2D at all: the medians of 5 cycles still scatter (k(5)·σ² ≈ 0.29·σ²), and
    the corrected D2D spread is a small fraction of it."""
    y, dev = synthetic(2000, 5, 0.0, 0.2, seed=5)
    s = nested_stats(y, dev)
    assert s["between"] == pytest.approx(0.2 * math.sqrt(median_factors(5)[1]), rel=0.06)
    assert s["d2d"] < 0.3 * s["between"]


def test_median_factors_match_theory():
    _, k = median_factors(50)
    assert k == pytest.approx(math.pi / 100, rel=0.05)  # large n: π/(2n)
    assert median_factors(2)[1] == pytest.approx(0.5, rel=0.02)  # the mean of two


def test_a_stray_device_is_winsorized():
    x = np.random.default_rng(1).standard_normal(64)
    wild = np.r_[x, 40.0]
    assert winsorized_sigma(wild) < 1.3 * winsorized_sigma(x)
    assert np.std(wild, ddof=1) > 4 * winsorized_sigma(x)


def test_devices_with_a_single_value_are_left_out():
    y, dev = synthetic(10, 4, 0.1, 0.1, seed=2)
    s = nested_stats(np.r_[y, 99.0], np.r_[dev, 77])
    assert s["devices"] == 10


def _frame(devices: int, cycles: int, source: str = "cells.csv") -> pd.DataFrame:
    rows = [{"device": str(d), "cycle": c, "state": st, "resistance_ohm": 1e3 + d + c}
            for d in range(devices) for c in range(cycles) for st in ("LRS", "HRS")]
    frame = pd.DataFrame(rows)
    frame.attrs["source"] = source
    return frame


def test_check_design_names_the_file_and_the_problem():
    assert check_design(_frame(3, 4)) == (3, 4)
    with pytest.raises(InputError, match=r"cells\.csv.*>= 2 devices, got 1"):
        check_design(_frame(1, 40))
    with pytest.raises(InputError, match=r"cells\.csv.*>= 2 cycles per device; device '0'"):
        check_design(_frame(30, 1))


def test_target_of_nested_refuses_single_cycle_data():
    with pytest.raises(InputError, match="2 cycles per device"):
        target_of(_frame(30, 1), nested=True)


#: Known spreads: the CF's heating (kth → R_LRS) and the hopping barrier (deh → R_HRS),
#: each with a D2D and a C2C entry; kth's centre shifted as well.
TRUE_SPEC = VariationSpec((
    Variation("kth", "d2d", "lognormal", 0.3, shift=0.1),
    Variation("kth", "c2c", "lognormal", 0.15),
    Variation("deh", "d2d", "normal", 0.04),
    Variation("deh", "c2c", "normal", 0.08),
))


@functools.cache
def _round_trip(data_seed: int) -> tuple[dict, dict]:
    """64 devices × 50 cycles from a spec with known D2D and C2C spreads (seed
    ``data_seed``); the nested fit, started ≥ 30 % off and simulating with seed 1.
    Returns (fitted sigmas, start sigmas) by (parameter, kind)."""
    import tempfile

    from rram.fit.data import load_distribution

    measured = run_devices(MonteCarlo(card=FORMED, spec=TRUE_SPEC, devices=64, cycles=50, burn_in=1,
                                      seed=data_seed), range(64))
    assert measured["converged"].all()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cells.csv"
        as_distribution(measured).to_csv(path, index=False)
        target = target_of(load_distribution(path), skip=("v_set_V", "v_reset_V"),
                           nested=True)
    assert target.design == (64, 50)
    start = {"kth.d2d": 0.18, "kth.c2c": 0.22, "deh.d2d": 0.06, "deh.c2c": 0.05}
    fit = fit_variation(target, FORMED, seed=1, rounds=8, polish_nfev=0, start_sigma=start)
    got = {(v.parameter, v.kind): v.sigma for v in fit.spec.variations}
    assert set(got) == {(v.parameter, v.kind) for v in TRUE_SPEC.variations}
    return got, {tuple(k.split(".")): v for k, v in start.items()}


TRUTH = {(v.parameter, v.kind): v.sigma for v in TRUE_SPEC.variations}
ROBUST = [("kth", "d2d"), ("kth", "c2c"), ("deh", "c2c")]


@pytest.mark.slow
@pytest.mark.parametrize("data_seed", [2, 11])
def test_a_multi_device_spec_is_recovered(data_seed):
    """Issue acceptance (for the spreads the nested fit identifies on two data sets):
    each σ within 15 % from a start ≥ 30 % off."""
    got, start = _round_trip(data_seed)
    for key in ROBUST:
        assert abs(start[key] / TRUTH[key] - 1) >= 0.3
        assert abs(got[key] / TRUTH[key] - 1) <= 0.15, (key, got)


@pytest.mark.slow
@pytest.mark.parametrize("data_seed", [2, 11])
def test_the_hopping_barrier_d2d_spread_is_recovered(data_seed):
    """deh's D2D σ, a small part of R_HRS's D2D spread beside kth's draw (~70 %): fitted
    to what the devices' R_LRS medians leave of it (``d2d_given``).  Fitted to the whole
    spread, seed 2 gave 0.015 eV of 0.04 (replaying the 64 × 50 design instead: kth's
    D2D −17 %, and on seed 11 −26 %, deh +23 %)."""
    got, _ = _round_trip(data_seed)
    key = ("deh", "d2d")
    assert abs(got[key] / TRUTH[key] - 1) <= 0.15, got


def test_cli_nested_on_single_device_data_exits_2_naming_the_file(tmp_path):
    from click.testing import CliRunner

    from rram.cli import main

    path = tmp_path / "one_cell.csv"
    _frame(1, 40).to_csv(path, index=False)
    out = tmp_path / "v.json"
    r = CliRunner().invoke(main, ["fit-variation", str(path), "--nested", "--out", str(out)],
                           catch_exceptions=False)
    assert r.exit_code == 2
    assert "one_cell.csv" in r.output and ">= 2 devices, got 1" in r.output
    assert not out.exists()
