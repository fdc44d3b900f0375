"""Geometric nested dissection: a fill-reducing order of an array's unknowns.

An array is a grid of cells: row lines connect neighbouring cells along x, column lines
along y, so the row-line nets at one column (or the column-line nets at one row) separate
the array in two.  Ordering the two halves first (recursively) and the separator last
keeps the factor's fill at O(N log N) and its work at O(N^1.5), as for any 2-D grid,
where minimum-degree orderings leave far more.  The split is along the longer side of
each part at the median place; the separator is the set of nets on the low side with a
neighbour on the high side.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: Parts this small are not split further.
LEAF = 256


def nested_dissection(pattern: sp.spmatrix, xy: np.ndarray) -> np.ndarray:
    """A permutation of the unknowns of the symmetric ``pattern`` (n × n) with places
    ``xy`` (n, 2): ``order[k]`` is the unknown eliminated k-th."""
    A = sp.csr_matrix(pattern)
    n = A.shape[0]
    indptr, indices = A.indptr, A.indices
    side = np.zeros(n, np.int8)
    out: list[np.ndarray] = []
    # an explicit stack: (nets of a part, whether its separator is pending output)
    stack: list[tuple[np.ndarray, np.ndarray | None]] = [(np.arange(n), None)]
    while stack:
        nodes, sep = stack.pop()
        if sep is not None:
            out.append(sep)
            continue
        if nodes.size <= LEAF:
            out.append(nodes)
            continue
        pts = xy[nodes]
        axis = int(np.argmax(pts.max(0) - pts.min(0)))
        coord = pts[:, axis]
        cut = np.median(coord)
        low = coord < cut
        if not low.any() or low.all():
            out.append(nodes)
            continue
        side[nodes[low]] = 1
        side[nodes[~low]] = 2
        lo = nodes[low]
        # nets of the low side with a neighbour on the high side
        counts = indptr[lo + 1] - indptr[lo]
        nbr = _neighbours(indptr, indices, lo)
        owner = np.repeat(np.arange(lo.size), counts)
        crossing = np.zeros(lo.size, bool)
        crossing[owner[side[nbr] == 2]] = True
        side[nodes] = 0
        separator = lo[crossing]
        # the separator is eliminated last: push it first (a stack)
        stack.append((np.empty(0, np.int64), separator))
        stack.append((nodes[~low], None))
        stack.append((lo[~crossing], None))
    order = np.concatenate(out) if out else np.zeros(0, np.int64)
    return order.astype(np.int64)


def _neighbours(indptr: np.ndarray, indices: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The column indices of ``rows`` of a CSR pattern, concatenated in row order."""
    starts, ends = indptr[rows], indptr[rows + 1]
    lengths = ends - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return indices[np.arange(lengths.sum()) + offsets]
