"""Which fitted parameters the data identify, and which must be fixed.

A least-squares fit reports a value for every free parameter, whether or not the data
determine it.  From the linearised covariance s²·(JᵀJ)⁻¹ of the point residuals, a
parameter is *not identified* when

- its relative standard error exceeds :data:`MAX_RELATIVE_ERROR` (the data leave it
  free along a flat direction), or
- it correlates beyond :data:`MAX_CORRELATION` with another free parameter (the data
  determine only a combination of the two).

Such parameters are fixed one at a time, worst first, and the covariance of the others
is recomputed (:func:`rram.fit.refit.identify_parameters` chooses the value: the model's
documented one where the data cannot tell it from the fitted one).  A correlated pair
loses the member with the larger relative error, so the other keeps carrying the
combination the data see.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..card import Card
    from .recipe import Recipe

#: Largest relative standard error of a parameter reported as fitted.
MAX_RELATIVE_ERROR = 0.5
#: Largest |correlation| between two parameters reported as fitted.
MAX_CORRELATION = 0.98


def covariance(jac: np.ndarray, residual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors and the correlation matrix of the fitted (maybe log₁₀) values,
    from s²·(JᵀJ)⁺ of the point residuals.  Columns are normalised before the
    pseudo-inverse, which keeps the well-determined directions accurate when others
    are degenerate; a column with no effect at all gets an infinite error."""
    n, k = jac.shape
    s2 = float(residual @ residual) / max(n - k, 1)
    norm = np.linalg.norm(jac, axis=0)
    dead = norm == 0
    norm[dead] = 1.0
    jn = jac / norm
    cov_n = np.linalg.pinv(jn.T @ jn, rcond=1e-10, hermitian=True) * s2
    err = np.sqrt(np.clip(np.diag(cov_n), 0, None)) / norm
    err[dead] = np.inf
    d = np.sqrt(np.clip(np.diag(cov_n), 1e-300, None))
    corr = cov_n / np.outer(d, d)
    np.fill_diagonal(corr, 1.0)
    return err, corr


def relative_errors(err: np.ndarray, values: Sequence[float],
                    log10: Sequence[bool]) -> np.ndarray:
    """Relative standard errors of the values: a log₁₀-fitted error e is a relative
    error ln(10)·e; a linear one is e/|value| (infinite at a value of 0)."""
    out = np.empty(len(err))
    for k, (e, v, lg) in enumerate(zip(err, values, log10, strict=True)):
        out[k] = e * math.log(10) if lg else (e / abs(v) if v else math.inf)
    return out


@dataclass(frozen=True)
class Verdict:
    """A parameter to fix, and why."""

    name: str
    reason: str
    correlated: bool = False  # flagged for its correlation (not its own error)


def worst_unidentified(names: Sequence[str], rel: np.ndarray,
                       corr: np.ndarray) -> Verdict | None:
    """The parameter to fix next (the largest relative error among those that fail a
    rule), or ``None`` when every one is identified."""
    flagged: dict[int, tuple[str, bool]] = {}
    for k in range(len(names)):
        if not rel[k] <= MAX_RELATIVE_ERROR:  # NaN fails too
            flagged[k] = (f"relative standard error {_percent(rel[k])} > "
                          f"{MAX_RELATIVE_ERROR:.0%}", False)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            r = corr[a, b]
            if abs(r) > MAX_CORRELATION:
                loser, other = (a, b) if _worse(rel[a], rel[b]) else (b, a)
                flagged.setdefault(loser, (f"correlated with {names[other]} (r = {r:+.3f}): "
                                           "the data determine only their combination", True))
    if not flagged:
        return None
    k = max(flagged, key=lambda j: (rel[j] if math.isfinite(rel[j]) else math.inf))
    return Verdict(names[k], *flagged[k])


def _worse(a: float, b: float) -> bool:
    return (not math.isfinite(a)) or (math.isfinite(b) and a >= b)


def _percent(x: float) -> str:
    return f"{100 * x:.3g} %" if math.isfinite(x) else "infinite"


def named_covariance(jac: np.ndarray, residual: np.ndarray, names: tuple[str, ...],
                     floor: float = 0.5) -> tuple[np.ndarray, dict[str, float]]:
    """Standard errors (of the fitted, maybe log₁₀, values) and the correlations beyond
    ``floor`` (see :func:`covariance`; the V_set/V_reset terms are
    constraints, not data, so only the point rows enter)."""
    err, corr = covariance(jac, residual)
    k = len(names)
    correl = {f"{names[a]}~{names[b]}": float(corr[a, b]) for a in range(k)
              for b in range(a + 1, k) if abs(corr[a, b]) >= floor}
    return err, correl


def in_card_units(err: float, name: str, card: Card, recipe: Recipe) -> float:
    """A log₁₀-fitted error propagated to the value (first order)."""
    return float(err * math.log(10) * card[name]) if name in recipe.log_parameters \
        else float(err)
