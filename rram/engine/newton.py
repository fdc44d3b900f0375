"""Newton's method for the engines' circuits, compiled with numba.

* :func:`newton_dc`: full Newton on F(y) = 0 (operating points, reads at a frozen state),
  holding the unknowns marked frozen.
* :func:`newton_tran`: the corrector of a BDF step, damped Newton on
  F(y) + α₀·JQ·y + qhist = 0 with Deuflhard's monotonicity test.  The Jacobian
  ``JF + α₀·JQ`` (from the generated kernel) is evaluated at the predictor and reused while
  the iteration contracts fast, so most iterations cost one residual.

Updates are limited per unknown (SPICE-style) to keep the exponentials in range.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import circuit_eval, circuit_residual
from ..status import Stat
from .dense import INLINE, NJIT_OPTIONS, lu_factor, lu_solve

# numba reads module globals as compile-time constants: a plain int of the contract
STAT_JAC = int(Stat.JAC)
#: An operating point has converged when an unlimited step is below this fraction of
#: each unknown's tolerance.
DC_STEP_TOL = 1e-3


@njit(**INLINE)
def _apply_update(y, dy, n, wt, lim):
    """y += limited dy; returns (weighted max norm of the step, whether it was limited)."""
    scale = 1.0
    for i in range(n):
        a = abs(dy[i])
        if a * scale > lim[i]:
            scale = lim[i] / a
    err = 0.0
    for i in range(n):
        d = scale * dy[i]
        y[i] += d
        e = abs(d) / wt[i]
        if e > err:
            err = e
    return err, scale < 1.0


@njit(**INLINE)
def _factor(JF, JQ, a0, LU, piv, n):
    for i in range(n):
        for j in range(n):
            LU[i, j] = JF[i, j] + a0 * JQ[i, j]
    return lu_factor(LU, piv, n)


@njit(**NJIT_OPTIONS)
def newton_dc(kind, y, u, p, frozen, F, Q, JF, JQ, LU, piv, dy, n, atol, rtol, lim, maxit,
              wt):
    """Full Newton on F(y) = 0, holding the unknowns marked ``frozen``.  True on success."""
    for _ in range(maxit):
        circuit_eval(kind, y, u, p, F, Q, JF, JQ)
        for i in range(n):
            wt[i] = atol[i] + rtol * abs(y[i])
            if frozen[i]:
                for j in range(n):
                    LU[i, j] = 0.0
                LU[i, i] = 1.0
                dy[i] = 0.0
            else:
                for j in range(n):
                    LU[i, j] = JF[i, j]
                dy[i] = -F[i]
        if not lu_factor(LU, piv, n):
            return False
        lu_solve(LU, piv, dy, n)
        for i in range(n):
            if not np.isfinite(dy[i]):
                return False
        err, limited = _apply_update(y, dy, n, wt, lim)
        if not limited and err <= DC_STEP_TOL:
            return True
    return False


@njit(**INLINE)
def _newton_step(kind, y, u, p, a0, qhist, F, JQ, LU, piv, dy, n, fresh):
    """dy = -J⁻¹·(F(y) + α₀·JQ·y + qhist) with the current LU factors.  False if not finite.

    ``fresh``: ``F`` already holds F(y) (from the Jacobian evaluation at y)."""
    if not fresh:
        circuit_residual(kind, y, u, p, F)
    for i in range(n):
        q = 0.0
        for j in range(n):
            q += JQ[i, j] * y[j]
        dy[i] = -(F[i] + a0 * q + qhist[i])
    lu_solve(LU, piv, dy, n)
    for i in range(n):
        if not np.isfinite(dy[i]):
            return False
    return True


@njit(**INLINE)
def _wnorm(dy, wt, n):
    e = 0.0
    for i in range(n):
        a = abs(dy[i]) / wt[i]
        if a > e:
            e = a
    return e


@njit(**INLINE)
def newton_tran(kind, y, u, p, a0, qhist, F, Q, JF, JQ, LU, piv, dy, n, wt, lim, tol, maxit,
                stats, trial, dyt):
    """Damped Newton on F(y) + α₀·JQ·y + qhist = 0, in place.

    Deuflhard's natural monotonicity test: a (limited) step λ·dy is accepted when the
    simplified Newton step at the trial point, computed with the same factors, is
    smaller than (1 − λ/4)·|λ·dy|; otherwise λ is halved.  The Jacobian is evaluated at
    the start and again whenever the contraction rate exceeds 0.3, so iterations near a
    solution cost one residual.  Returns the residual evaluations used (> 0), or a
    negative count on failure.  ``trial`` and ``dyt`` are work vectors.
    """
    circuit_eval(kind, y, u, p, F, Q, JF, JQ)
    stats[STAT_JAC] += 1
    if not _factor(JF, JQ, a0, LU, piv, n):
        return -1
    if not _newton_step(kind, y, u, p, a0, qhist, F, JQ, LU, piv, dy, n, True):
        return -1
    evals = 1
    lam = 1.0
    norm = _wnorm(dy, wt, n)
    if norm <= tol:
        for i in range(n):
            y[i] += dy[i]
        return evals
    while evals < maxit:
        # Trial point, with SPICE-style limiting of each unknown's change.
        scale = lam
        for i in range(n):
            if abs(dy[i]) * scale > lim[i]:
                scale = lim[i] / abs(dy[i])
        for i in range(n):
            trial[i] = y[i] + scale * dy[i]
        evals += 1
        ok = _newton_step(kind, trial, u, p, a0, qhist, F, JQ, LU, piv, dyt, n, False)
        norm_t = _wnorm(dyt, wt, n) if ok else np.inf
        if norm_t > (1.0 - scale / 4.0) * norm * max(scale, 1e-300) / scale or not ok:
            if scale < 1.0 / 16.0:
                return -evals
            lam = 0.5 * scale
            continue
        for i in range(n):
            y[i] = trial[i]
        if norm_t <= tol and scale == 1.0:
            for i in range(n):
                y[i] += dyt[i]
            return evals
        theta = norm_t / norm
        if theta > 0.3:  # slow contraction: refresh the Jacobian here
            circuit_eval(kind, y, u, p, F, Q, JF, JQ)
            stats[STAT_JAC] += 1
            if not _factor(JF, JQ, a0, LU, piv, n):
                return -evals
            evals += 1
            if not _newton_step(kind, y, u, p, a0, qhist, F, JQ, LU, piv, dy, n, True):
                return -evals
            norm = _wnorm(dy, wt, n)
            if norm <= tol:
                for i in range(n):
                    y[i] += dy[i]
                return evals
        else:
            for i in range(n):
                dy[i] = dyt[i]
            norm = norm_t
        lam = min(1.0, 2.0 * scale)
    return -evals
