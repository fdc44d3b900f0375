"""Geometric nested dissection: a fill-reducing order of an array's unknowns.

An array is a grid of cells: row lines connect neighbouring cells along x, column lines
along y, so the row-line nets at one column (or the column-line nets at one row) separate
the array in two.  Ordering the two halves first (recursively) and the separator last
keeps the factor's fill at O(N log N) and its work at O(N^1.5), as for any 2-D grid,
where minimum-degree orderings leave more (measured on 1R crossbars: 25-45 % less fill
than SuperLU's minimum degree on A + Aᵀ from 48 x 48 up, 3-5x faster factorisations
from 256 x 256).  Each part is split across its longer side at the median place; its
separator is the set of nets on the low side with a neighbour on the high side.
Compiled with numba: a 1024 x 1024 crossbar has four million parts.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

#: Parts this small are not split further (16: less fill than 8 or 64 on crossbars).
LEAF = 16


def nested_dissection(pattern: sp.spmatrix, xy: np.ndarray) -> np.ndarray:
    """A permutation of the unknowns of the symmetric ``pattern`` (n × n) with places
    ``xy`` (n, 2): ``order[k]`` is the unknown eliminated k-th."""
    A = sp.csr_matrix(pattern)
    xy = np.asarray(xy, float)
    return _dissect(A.indptr.astype(np.int64), A.indices.astype(np.int64),
                    np.ascontiguousarray(xy[:, 0]), np.ascontiguousarray(xy[:, 1]), LEAF)


@njit(cache=True)
def _dissect(indptr, indices, x, y, leaf):  # pragma: no cover - compiled
    n = x.size
    buf = np.arange(n)  # every part is a slice of buf, rearranged in place
    order = np.empty(n, np.int64)
    out = 0
    side = np.zeros(n, np.int8)
    # stack of slices (start, stop, is_separator): a separator is output when popped
    stack = np.empty((256, 3), np.int64)  # grown on demand (depth ~ 3·log2 n)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 0
    top = 1
    low = np.empty(n, np.int64)
    high = np.empty(n, np.int64)
    while top > 0:
        top -= 1
        a, b, is_sep = stack[top, 0], stack[top, 1], stack[top, 2]
        size = b - a
        if is_sep == 1 or size <= leaf:
            for k in range(a, b):
                order[out] = buf[k]
                out += 1
            continue
        xmin, xmax, ymin, ymax = np.inf, -np.inf, np.inf, -np.inf
        for k in range(a, b):
            v = buf[k]
            xmin, xmax = min(xmin, x[v]), max(xmax, x[v])
            ymin, ymax = min(ymin, y[v]), max(ymax, y[v])
        coord = x if xmax - xmin >= ymax - ymin else y
        vals = np.empty(size)
        for k in range(size):
            vals[k] = coord[buf[a + k]]
        cut = np.median(vals)
        nl, nh = 0, 0
        for k in range(a, b):
            v = buf[k]
            if coord[v] < cut:
                low[nl] = v
                nl += 1
            else:
                high[nh] = v
                nh += 1
        if nl == 0 or nh == 0:  # no split possible: output the part as it is
            for k in range(a, b):
                order[out] = buf[k]
                out += 1
            continue
        for k in range(nh):
            side[high[k]] = 2
        # low nets without a high neighbour first, then the separator, then the high part
        inner, ns = 0, 0
        sep = np.empty(nl, np.int64)
        for k in range(nl):
            v = low[k]
            crossing = False
            for e in range(indptr[v], indptr[v + 1]):
                if side[indices[e]] == 2:
                    crossing = True
                    break
            if crossing:
                sep[ns] = v
                ns += 1
            else:
                buf[a + inner] = v
                inner += 1
        for k in range(nh):
            side[high[k]] = 0
            buf[a + inner + k] = high[k]
        for k in range(ns):
            buf[a + inner + nh + k] = sep[k]
        # pushed in reverse: low part, then high part, then the separator
        if top + 3 > stack.shape[0]:
            grown = np.empty((2 * stack.shape[0], 3), np.int64)
            grown[:top] = stack[:top]
            stack = grown
        stack[top, 0], stack[top, 1], stack[top, 2] = a + inner + nh, b, 1
        stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = a + inner, a + inner + nh, 0
        stack[top + 2, 0], stack[top + 2, 1], stack[top + 2, 2] = a, a + inner, 0
        top += 3
    return order
