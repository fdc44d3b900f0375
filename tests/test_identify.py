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
