"""Compiled condensation of RRAM cells at a frozen state (load through :mod:`.cells`).

Each cell's internal nodes (ti, bi, tip and the temperature rise) are solved for a given
te−be voltage with the generated ``resistor`` circuit kernel, its bit line pinned to the
te voltage so the series element carries nothing; the state nodes are held.  The
cell's current into te and its small-signal conductance dI/dV follow from the converged
Jacobian by a Schur complement, so the array's Newton sees each cell as one nonlinear
two-terminal conductance.  Import this module only through
:func:`rram.engine.jit.load_compiled` (it inlines the generated kernels).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._kernels import CIRCUITS, UNKNOWNS, circuit_eval
from ..engine.dense import NJIT_OPTIONS, lu_factor, lu_solve
from ..engine.newton import newton_dc
from ..status import Status

#: Unknowns of the resistor-circuit kernel that stay free: the cell's internal nodes
#: and its temperature rise (the gap and width states are held).
FREE = ("ti", "bi", "tip", "dtemp")
INTERNAL = tuple(UNKNOWNS[CIRCUITS.index("resistor")].index(name) for name in FREE)
N_INTERNAL = len(INTERNAL)
OK = int(Status.OK)
FAILED = int(Status.DC_FAILED)  # Newton did not converge, or a singular Jacobian


@njit(**NJIT_OPTIONS, parallel=True)
def condense(P, V, Y, frozen, atol, rtol, lim, rs, I, G, STATUS):
    """For each cell d at te−be voltage V[d] (V): solve its internal nodes (Y[d], warm
    start, updated in place), its current I[d] (A, into te) and dI/dV G[d] (S).
    STATUS[d] is ``Status.OK``, or ``Status.DC_FAILED`` when Newton did not converge or
    the internal nodes' Jacobian is singular."""
    n = Y.shape[1]
    idx = np.array(INTERNAL)
    for d in prange(P.shape[0]):
        F = np.zeros(n)
        Q = np.zeros(n)
        JF = np.zeros((n, n))
        JQ = np.zeros((n, n))
        LU = np.zeros((n, n))
        piv = np.zeros(n, np.int64)
        dy = np.zeros(n)
        wt = np.zeros(n)
        u = np.zeros(3)
        y = Y[d]
        y[0] = V[d]
        u[0] = V[d]
        if not newton_dc(0, y, u, P[d], frozen, F, Q, JF, JQ, LU, piv, dy, n, atol, rtol,
                         lim, 100, wt):
            STATUS[d] = FAILED
            continue
        circuit_eval(0, y, u, P[d], F, Q, JF, JQ)
        # the bit line sits at te: F[0] is the current into te alone
        I[d] = F[0]
        A = np.empty((N_INTERNAL, N_INTERNAL))
        b = np.empty(N_INTERNAL)
        p4 = np.zeros(N_INTERNAL, np.int64)
        for i in range(N_INTERNAL):
            b[i] = JF[idx[i], 0]
            for j in range(N_INTERNAL):
                A[i, j] = JF[idx[i], idx[j]]
        if not lu_factor(A, p4, N_INTERNAL):
            STATUS[d] = FAILED
            continue
        lu_solve(A, p4, b, N_INTERNAL)
        g = JF[0, 0] - 1.0 / rs
        for i in range(N_INTERNAL):
            g -= JF[0, idx[i]] * b[i]
        G[d] = g
        STATUS[d] = OK
