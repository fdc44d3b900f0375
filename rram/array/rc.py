"""Delay of a linear RC circuit: exact step response and Elmore delay.

For the wires alone (resistors, capacitors, grounded sources; no cells): every source
steps from 0 V to its value at t = 0.  Nets without capacitance are eliminated (Kron
reduction), the remaining system C·dv/dt = −G·v + b is solved exactly through the
generalised eigenproblem G·φ = λ·C·φ (dense: meant for lines and small arrays, a few
thousand nets at most), and the delay is the time the observed net reaches a fraction of
its final value.  The Elmore delay is the first moment of the same response,
[G⁻¹·C·(v∞ − v₀)]ₖ / v∞ₖ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
from scipy.optimize import brentq

from ..errors import InputError
from .circuit import GND, Circuit

MAX_DENSE = 5000


@dataclass(frozen=True)
class StepResponse:
    """v(t) = v∞ + Σᵢ aᵢ·e^(−λᵢ·t) at one net (V, s) for t > 0; ``v_start``: its DC
    value before the step; ``elmore``: the first moment of the response (s)."""

    v_final: float
    rates: np.ndarray
    amplitudes: np.ndarray
    elmore: float
    v_start: float = 0.0

    def __call__(self, t: float) -> float:
        return float(self.v_final + np.sum(self.amplitudes * np.exp(-self.rates * t)))

    def delay(self, fraction: float = 0.5) -> float:
        """Time (s) at which the net has covered ``fraction`` of its swing from
        ``v_start`` to ``v_final``."""
        if not 0 < fraction < 1:
            raise InputError(f"delay fraction must be within (0, 1), got {fraction!r}")
        swing = self.v_final - self.v_start
        target = self.v_start + fraction * swing
        hi = 1.0 / self.rates.min()
        while (self(hi) - target) * np.sign(swing) < 0:
            hi *= 2
        return float(brentq(lambda t: self(t) - target, 0.0, hi, xtol=1e-30, rtol=1e-14))


def _matrix(n: int, pairs: np.ndarray, values: np.ndarray) -> np.ndarray:
    M = np.zeros((n + 1, n + 1))  # last row/column: ground
    a, b = pairs[:, 0], pairs[:, 1]
    np.add.at(M, (a, a), values)
    np.add.at(M, (b, b), values)
    np.add.at(M, (a, b), -values)
    np.add.at(M, (b, a), -values)
    return M[:n, :n]


def step_response(c: Circuit, net: int, before: np.ndarray | None = None) -> StepResponse:
    """Response at ``net`` to the sources of ``c`` stepping at t = 0 from ``before``
    (V, one per source; default 0: the circuit at rest) to their values.  The circuit
    starts in its DC state at ``before``; the step injects charge through the
    capacitors between sources and nets (an aggressor line's coupling)."""
    if len(c.cells) or c.groups:
        raise InputError("the RC step response takes resistors and capacitors only")
    n = c.n_nets
    if n > MAX_DENSE:
        raise InputError(f"{n} nets: the dense RC response takes at most {MAX_DENSE}")
    G = _matrix(n, c.res, 1.0 / c.ohms)
    C = _matrix(n, c.caps, c.farads)
    free = np.setdiff1d(np.arange(n), c.src)
    vk = c.volts
    v_before = np.zeros_like(vk) if before is None else np.asarray(before, float)
    if v_before.shape != vk.shape:
        raise InputError(f"before: one voltage per source ({vk.size}), got {v_before.shape}")
    Gf, Cf = G[np.ix_(free, free)], C[np.ix_(free, free)]
    b = -G[np.ix_(free, c.src)] @ vk
    # the DC state before the step, then the charge the step injects through capacitors
    # from the sources: C·v(0+) = C·v(0-) − C_src·Δv
    start = la.solve(Gf, -G[np.ix_(free, c.src)] @ v_before)
    q0 = Cf @ start - C[np.ix_(free, c.src)] @ (vk - v_before)
    cap = np.flatnonzero(np.abs(Cf).sum(1) > 0)
    alg = np.flatnonzero(np.abs(Cf).sum(1) == 0)
    # Kron reduction of the nets without capacitance
    Gaa = Gf[np.ix_(alg, alg)]
    Gac, Gca = Gf[np.ix_(alg, cap)], Gf[np.ix_(cap, alg)]
    X = la.solve(Gaa, np.column_stack([Gac, b[alg]])) if alg.size else np.zeros((0, cap.size + 1))
    Gr = Gf[np.ix_(cap, cap)] - Gca @ X[:, :-1]
    br = b[cap] - Gca @ X[:, -1]
    Cr = Cf[np.ix_(cap, cap)]
    v_inf = la.solve(Gr, br)
    v0 = la.solve(Cr, q0[cap])
    lam, phi = la.eigh(Gr, Cr)  # φᵀ·C·φ = 1
    coef = phi.T @ (Cr @ (v0 - v_inf))
    k = np.flatnonzero(free == net)
    if not k.size:
        raise InputError(f"net {net} is driven or unknown: observe a free net")
    moment = la.solve(Gr, Cr @ (v_inf - v0))
    if k[0] in alg:  # an algebraic net follows the capacitive ones
        row = -X[list(alg).index(k[0]), :-1]
        vf = float(row @ v_inf + X[list(alg).index(k[0]), -1])
        amp = (row @ phi) * coef
        m1 = float(row @ moment)
    else:
        i = list(cap).index(k[0])
        vf = float(v_inf[i])
        amp = phi[i] * coef
        m1 = float(moment[i])
    v_start = float(start[k[0]])
    swing = vf - v_start
    return StepResponse(vf, lam, amp, m1 / swing if swing else float("nan"), v_start)


__all__ = ["GND", "StepResponse", "step_response"]
