"""Identifiability rules of the loop fit (rram.fit.identify): which parameters the data
determine, on synthetic Jacobians whose answer is known."""

from __future__ import annotations

import numpy as np

from rram.fit.identify import (
    MAX_CORRELATION,
    covariance,
    relative_errors,
    worst_unidentified,
)

RNG = np.random.default_rng(5)


def _fit(jac: np.ndarray, noise: float = 0.01):
    residual = noise * RNG.standard_normal(jac.shape[0])
    return covariance(jac, residual)


def test_well_determined_parameters_pass():
    jac = RNG.standard_normal((400, 3))
    err, corr = _fit(jac)
    rel = relative_errors(err, [1.0, 2.0, 3.0], [False, False, False])
    assert np.all(rel < 0.01)
    assert worst_unidentified(("a", "b", "c"), rel, corr) is None


def test_a_parameter_without_effect_is_fixed():
    jac = RNG.standard_normal((400, 3))
    jac[:, 1] = 0.0  # the data do not see b at all
    err, corr = _fit(jac)
    rel = relative_errors(err, [1.0, 2.0, 3.0], [False, False, False])
    assert np.isinf(rel[1])
    verdict = worst_unidentified(("a", "b", "c"), rel, corr)
    assert verdict.name == "b" and not verdict.correlated
    assert "relative standard error infinite" in verdict.reason


def test_of_a_correlated_pair_the_worse_determined_is_fixed():
    base = RNG.standard_normal((400, 2))
    # c follows a almost exactly, and enters with a tenth of the weight: a larger error
    jac = np.column_stack([base[:, 0], base[:, 1], 0.1 * base[:, 0]
                           + 1e-4 * RNG.standard_normal(400)])
    err, corr = _fit(jac, noise=1e-6)
    assert abs(corr[0, 2]) > MAX_CORRELATION
    rel = relative_errors(err, [1.0, 1.0, 1.0], [False, False, False])
    verdict = worst_unidentified(("a", "b", "c"), rel, corr)
    assert verdict.name == "c" and verdict.correlated and "correlated with a" in verdict.reason


def test_log_fitted_errors_are_relative():
    rel = relative_errors(np.array([0.1, 0.1]), [5.0, 5.0], [True, False])
    assert rel[0] == np.log(10) * 0.1 and rel[1] == 0.1 / 5.0


def test_switching_samples_are_the_jump_and_its_neighbours():
    from rram.fit.objective import switching_samples

    current = np.r_[np.full(5, 1e-7), np.full(5, 1e-4)]  # a SET between samples 4 and 5
    current[3] = 1.1e-7
    assert np.flatnonzero(switching_samples(current)).tolist() == [3, 4, 5, 6]
    smooth = np.geomspace(1e-8, 1e-4, 40)  # 0.1 dec per sample: no event
    assert not switching_samples(np.r_[0.0, smooth, 0.0]).any()  # nor 0 A at rest
    assert not switching_samples(smooth).any()
    assert not switching_samples(-smooth).any()  # a negative branch, by magnitude


def test_a_recipe_that_excludes_switching_samples_fits_without_them():
    from dataclasses import replace

    from rram.card import default_card
    from rram.fit.loop import IVCurve, MeasuredLoop
    from rram.fit.objective import Objective
    from rram.fit.recipe import Stage, default_recipe

    v = np.r_[np.linspace(0, 1, 11), np.linspace(1, 0, 11)[1:]]
    t = np.arange(v.size) * 1e-3
    k = np.arange(v.size)  # the SET between samples 5 and 6, an LRS of 10 kOhm back
    i_set = np.where(k < 6, 1e-7 * (1 + v), np.where(k <= 10, 1e-4, 1e-4 * v))
    i_reset = -1e-5 * (1 + v) * np.r_[np.ones(8), 0.8, 0.6, 0.5, np.full(10, 0.4)]
    loop = MeasuredLoop(IVCurve(1, t, v, i_set, "x"), IVCurve(1, t, -v, i_reset, "x"), 1e-4)
    stage = Stage("s", ("ea",), "all")
    plain = Objective(loop, default_recipe(), stage, default_card()).mask
    recipe = replace(default_recipe(), exclude_switching_samples=True)
    left = Objective(loop, recipe, stage, default_card()).mask
    # the SET's jump (samples 5 and 6) and a neighbour on each side; the RESET's gradual
    # fall stays
    assert np.flatnonzero(plain & ~left).tolist() == [4, 5, 6, 7]
    assert not (left & ~plain).any()

