"""Small dense linear algebra for the compiled engines: LU with partial pivoting.

The single-device circuits have 7 unknowns (a cell, its source and its states) and a
condensed array cell fewer: they are factorised in place, inside the compiled loops over
devices and steps, with no allocation and no call out of numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: numba options of the compiled engines (this module, the integrators, the condensation).
NJIT_OPTIONS = {"cache": True, "error_model": "numpy"}
#: The same for the small helpers of the engines' step loops, inlined into their callers:
#: a call between compiled functions passes every array as a struct of seven fields and
#: (under numba's reference counting) an atomic increment and decrement of each, which
#: cost more than the helpers' arithmetic (measured: 19 % of a DC loop's time in
#: NRT_incref/decref alone).
INLINE = {**NJIT_OPTIONS, "inline": "always"}
#: The step loops themselves: no reference counting (numba's runtime off), so they must
#: not allocate; their callers hand them every work array.  Helpers they call are compiled
#: for the same setting.
NO_RUNTIME = {**NJIT_OPTIONS, "_nrt": False}


@njit(**INLINE)
def lu_factor(A, piv, n):
    """LU factorisation in place with partial pivoting.  False if singular."""
    for k in range(n):
        p = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            if abs(A[i, k]) > big:
                big = abs(A[i, k])
                p = i
        if big == 0.0 or not np.isfinite(big):
            return False
        piv[k] = p
        if p != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            A[i, k] *= inv
            m = A[i, k]
            if m != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= m * A[k, j]
    return True


@njit(**INLINE)
def lu_solve(A, piv, b, n):
    """Solve with the factors of :func:`lu_factor`; ``b`` becomes the solution."""
    for k in range(n):  # all row interchanges first: L belongs to P·A
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for k in range(n):
        for i in range(k + 1, n):
            b[i] -= A[i, k] * b[k]
    for k in range(n - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, n):
            s -= A[k, j] * b[j]
        b[k] = s / A[k, k]
