"""The native sparse engine: DC operating point of a circuit with frozen RRAM cells.

Nodal analysis on the nets a source does not drive.  Resistors stamp a constant sparse
conductance matrix; every RRAM cell is condensed to a nonlinear two-terminal element
(its current and dI/dV from the compiled model, :class:`~rram.array.cells.CellBank`,
all cells in one call), and the IR devices (selectors, transistors) are evaluated with
their symbolic derivatives over all instances at once.  Newton on the node voltages
with a damped step; each iteration factorises the sparse Jacobian with SuperLU
(``scipy.sparse.linalg.splu``).  Capacitors play no part at DC.

:class:`LinearSolver` is the fast path for repeated reads: every nonlinear element
replaced by a fixed conductance, the matrix factorised once, then one pair of
triangular solves per input vector (or per block of vectors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ..errors import ConvergenceError, InputError
from .cells import CellBank
from .circuit import GND, Circuit

#: Largest change of a net's voltage per Newton iteration (V): keeps the exponential
#: conductances of cells and selectors from overshooting into their far tails.
MAX_STEP_V = 0.3
VTOL = 1e-9  # V: converged when a full Newton step moves no node by more
MAX_ITER = 100
#: A reused Jacobian is kept while each step is at most this fraction of the last.
CONTRACTION = 0.3
#: SuperLU's fill-reducing ordering when the nets have no places: the nodal matrices are
#: structurally symmetric, and minimum degree on A + Aᵀ left 25 % less fill and
#: factorised 30 % faster than the default COLAMD on a 256 x 256 crossbar.  Arrays built
#: by :mod:`rram.array.build` carry places and are ordered by geometric nested
#: dissection instead (:mod:`rram.array.ordering`): on a 1R crossbar 3x (256 x 256) to
#: 5x (1024 x 1024) faster factorisations than minimum degree, with 40 % less fill.
#: (CHOLMOD, tried on the SPD linear path with AMD, METIS and its own nested
#: dissection, was no faster than SuperLU here.)
ORDERING = "MMD_AT_PLUS_A"


class Factor:
    """The sparse LU factors of ``A`` (SuperLU), in the nested-dissection order ``perm``
    when given (``spd``: symmetric positive definite, no pivoting needed)."""

    def __init__(self, A: sp.spmatrix, perm: np.ndarray | None = None,
                 spd: bool = False) -> None:
        self.perm = perm
        kw: dict = {"options": {"SymmetricMode": True}}
        kw["diag_pivot_thresh"] = 0.0 if spd else 0.01
        try:
            if perm is None:
                self.lu = splu(sp.csc_matrix(A), permc_spec=ORDERING, **kw)
            else:
                Ap = sp.csr_matrix(A)[perm][:, perm].tocsc()
                self.lu = splu(Ap, permc_spec="NATURAL", **kw)
        except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
            raise ConvergenceError(f"array matrix is singular ({exc}): a net without a "
                                   "DC path to a source?", analysis="op") from None

    def solve(self, b: np.ndarray) -> np.ndarray:
        if self.perm is None:
            return self.lu.solve(b)
        x = np.empty_like(b)
        x[self.perm] = self.lu.solve(np.ascontiguousarray(b[self.perm]))
        return x


def _order(c: Circuit, free: np.ndarray, pattern: sp.spmatrix) -> np.ndarray | None:
    if c.xy is None:
        return None
    from .ordering import nested_dissection

    return nested_dissection(pattern, c.xy[free])


@dataclass(frozen=True)
class OperatingPoint:
    """Every net's voltage ``v`` (V, ground excluded), every cell's te−be voltage
    ``v_cell`` (V) and current ``i_cell`` (A, te → be), and the current each source
    delivers into the circuit ``i_source`` (A; a 0 V sense source absorbs −i_source)."""

    v: np.ndarray
    v_cell: np.ndarray
    i_cell: np.ndarray
    i_source: np.ndarray
    iterations: int
    factorisations: int = 0


class _Stamp:
    """Index maps and the constant part of a circuit's nodal system."""

    def __init__(self, c: Circuit) -> None:
        self.c = c
        n = c.n_nets
        driven = np.zeros(n, bool)
        driven[c.src] = True
        self.free = np.flatnonzero(~driven)
        self.pos = np.full(n + 1, -1, np.int64)  # net -> unknown index; [-1] = ground
        self.pos[self.free] = np.arange(self.free.size)
        self.known = np.zeros(n)
        self.known[c.src] = c.volts
        a, b = c.res[:, 0], c.res[:, 1]
        g = 1.0 / c.ohms
        self.G = _assemble(n, a, b, g)  # all nets x all nets (ground dropped)

    def full(self, x: np.ndarray) -> np.ndarray:
        """Voltages of all nets plus ground (last entry) from the unknowns ``x``."""
        v = np.zeros(self.c.n_nets + 1)
        v[:-1] = self.known
        v[self.free] = x
        return v


def _assemble(n: int, a: np.ndarray, b: np.ndarray, g: np.ndarray) -> sp.csr_matrix:
    """Sum of two-terminal conductances ``g`` between nets ``a`` and ``b`` (GND: -1)."""
    rows = np.concatenate([a, b, a, b])
    cols = np.concatenate([a, b, b, a])
    data = np.concatenate([g, g, -g, -g])
    keep = (rows != GND) & (cols != GND)
    return sp.csr_matrix((data[keep], (rows[keep], cols[keep])), shape=(n, n))


def _injection(st: _Stamp, v: np.ndarray, i_cell: np.ndarray,
               dev_currents: list[np.ndarray]) -> np.ndarray:
    """Current leaving each net into the elements (A), ground dropped."""
    c = st.c
    inj = st.G @ v[:-1]
    acc = np.zeros(c.n_nets + 1)
    np.add.at(acc, c.cells[:, 0], i_cell)
    np.add.at(acc, c.cells[:, 1], -i_cell)
    for g, cur in zip(c.groups, dev_currents, strict=True):
        np.add.at(acc, g.nodes[:, 0], cur)
        np.add.at(acc, g.nodes[:, -1], -cur)
    return inj + acc[:-1]


def _triplets(c: Circuit, g_cell: np.ndarray, dev_derivs: list[list[np.ndarray]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row net, column net, value) of the cells' and devices' d(injection)/dv."""
    rows, cols, data = [], [], []
    te, be = c.cells[:, 0], c.cells[:, 1]
    for r, col, d in ((te, te, g_cell), (te, be, -g_cell), (be, te, -g_cell),
                      (be, be, g_cell)):
        rows.append(r)
        cols.append(col)
        data.append(d)
    for g, derivs in zip(c.groups, dev_derivs, strict=True):
        out, into = g.nodes[:, 0], g.nodes[:, -1]
        for t, d in enumerate(derivs):
            rows += [out, into]
            cols += [g.nodes[:, t], g.nodes[:, t]]
            data += [d, -d]
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(data)


def _jacobian(st: _Stamp, g_cell: np.ndarray, dev_derivs: list[list[np.ndarray]]
              ) -> sp.csc_matrix:
    """d(injection)/d(unknowns) over the free nets."""
    rows, cols, dv = _triplets(st.c, g_cell, dev_derivs)
    r, k = st.pos[rows], st.pos[cols]
    keep = (r >= 0) & (k >= 0)
    nf = st.free.size
    J = sp.csc_matrix((dv[keep], (r[keep], k[keep])), shape=(nf, nf))
    return (J + st.G[st.free][:, st.free]).tocsc()


def _devices(c: Circuit, v: np.ndarray) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    currents, derivs = [], []
    for g in c.groups:
        cur, d = g.device.evaluate([v[g.nodes[:, t]] for t in range(g.nodes.shape[1])])
        currents.append(cur)
        derivs.append(d)
    return currents, derivs


def operating_point(c: Circuit, bank: CellBank | None = None,
                    x0: np.ndarray | None = None) -> OperatingPoint:
    """Newton's DC solution of ``c`` (cells frozen).  ``bank``: the cells' condensed
    model, reused (warm start) across calls on the same cells; ``x0``: a first guess
    of the free nets' voltages (default: the circuit linearised at 0 V).

    A chord Newton: the factorised Jacobian is reused while the steps it gives contract
    by :data:`CONTRACTION` or better, and refreshed otherwise (the factorisation costs
    ten to a hundred cell evaluations on a large array)."""
    st = _Stamp(c)
    bank = bank or CellBank(c.cell_cards)
    if bank.n != len(c.cells):
        raise InputError(f"the cell bank has {bank.n} cells, the circuit {len(c.cells)}")
    x = np.zeros(st.free.size) if x0 is None else np.asarray(x0, float).copy()
    lu, previous, factorisations, perm = None, np.inf, 0, None
    for it in range(1, MAX_ITER + 1):
        v = st.full(x)
        i_cell, g_cell = bank.evaluate(v[c.cells[:, 0]] - v[c.cells[:, 1]])
        cur, derivs = _devices(c, v)
        f = _injection(st, v, i_cell, cur)[st.free]
        dx = -lu.solve(f) if lu is not None else None
        if dx is None or _norm(dx) > CONTRACTION * previous:
            J = _jacobian(st, g_cell, derivs)
            if perm is None:
                perm = _order(c, st.free, J)
            lu = Factor(J, perm)
            factorisations += 1
            dx = -lu.solve(f)
        step = _norm(dx)
        if not np.isfinite(step):
            raise ConvergenceError("array Newton step is not finite: a net without a DC "
                                   "path to a source, or a singular Jacobian", analysis="op")
        # the first step solves the circuit linearised at the guess: taken in full; later
        # ones are limited net by net (a few floating middle nets of off selectors must
        # not hold back the rest, as one global scale would)
        x = x + (dx if it == 1 else np.clip(dx, -MAX_STEP_V, MAX_STEP_V))
        previous = step
        if step < VTOL:
            v = st.full(x)
            v_cell = v[c.cells[:, 0]] - v[c.cells[:, 1]]
            i_cell, _ = bank.evaluate(v_cell)
            cur, _ = _devices(c, v)
            inj = _injection(st, v, i_cell, cur)
            return OperatingPoint(v[:-1], v_cell, i_cell, inj[c.src], it, factorisations)
    raise ConvergenceError(f"array Newton did not converge in {MAX_ITER} iterations (last "
                           f"step {step:.3g} V, residual {np.max(np.abs(f)):.3g} A)",
                           analysis="op")


def cell_transfer(c: Circuit, bank: CellBank, op: OperatingPoint, source: int
                  ) -> np.ndarray:
    """The adjoint sensitivity of one output at the operating point ``op``: for every
    cell k, d(current into source ``source``)/d(δ_k) (A/A), where δ_k is a current added
    in parallel with cell k, te → be.  The current into a source is −``i_source``
    (a sense amplifier's reading).  One transposed solve gives all cells: flipping a
    cell's state changes its current at its voltage by ΔI_k, which moves the output by
    about transfer_k · ΔI_k (first order; exact for a linear circuit and a small ΔI)."""
    st = _Stamp(c)
    v = np.append(op.v, 0.0)
    _, g_cell = bank.evaluate(op.v_cell)
    _, derivs = _devices(c, v)
    rows, cols, dv = _triplets(c, g_cell, derivs)
    keep = (rows != GND) & (cols != GND)
    n = c.n_nets
    J = (sp.csr_matrix((dv[keep], (rows[keep], cols[keep])), shape=(n, n)) + st.G).tocsr()
    net = int(c.src[source])
    # residual F(x) + δ·u_free = 0 and i_source = inj[net]: the output −inj[net] moves by
    # λ·u_free − u[net] per unit δ, with Jᵀ_ff λ = J[net, free]ᵀ
    A = J[st.free][:, st.free]
    rhs = np.asarray(J[net][:, st.free].todense()).ravel()
    lam = np.zeros(n + 1)
    lam[st.free] = Factor(A.T.tocsc()).solve(rhs)
    lam[net] = -1.0
    te, be = c.cells[:, 0], c.cells[:, 1]
    return lam[te] - lam[be]


def _norm(dx: np.ndarray) -> float:
    return float(np.max(np.abs(dx))) if dx.size else 0.0


def linearised_guess(c: Circuit, g_cell: np.ndarray, g_groups: list[np.ndarray]
                     ) -> np.ndarray:
    """Free-net voltages of ``c`` with every cell a conductance ``g_cell`` (S) and every
    two-terminal device of group k a conductance ``g_groups[k]`` (S): a first guess for
    :func:`operating_point` (chord conductances near the solution beat the default
    linearisation at 0 V, where an off selector is all but open)."""
    st = _Stamp(c)
    G = st.G + _assemble(c.n_nets, c.cells[:, 0], c.cells[:, 1], g_cell)
    for g, cond in zip(c.groups, g_groups, strict=True):
        G = G + _assemble(c.n_nets, g.nodes[:, 0], g.nodes[:, -1], cond)
    G = G.tocsr()
    A = G[st.free][:, st.free]
    rhs = -(G[st.free][:, c.src] @ c.volts)
    return Factor(A, _order(c, st.free, A), spd=True).solve(rhs)


class LinearSolver:
    """Repeated DC solves of ``c`` with every cell a fixed conductance ``g_cell`` (S)
    and no IR devices: the nodal matrix is ordered and factorised once
    (:attr:`factor_seconds`, of which :attr:`order_seconds` the ordering).

    :meth:`solve` takes source voltages (one column per input vector, sources in the
    circuit's order) and returns the current each source delivers."""

    def __init__(self, c: Circuit, g_cell: np.ndarray) -> None:
        import time

        if c.groups:
            raise InputError("the linear path takes cells and wires only (a 1r array); "
                             "use the nonlinear read for arrays with access devices")
        g_cell = np.asarray(g_cell, float)
        if g_cell.shape != (len(c.cells),) or np.any(g_cell <= 0):
            raise InputError(f"g_cell must be {len(c.cells)} positive conductances (S)")
        t0 = time.perf_counter()
        st = _Stamp(c)
        G = st.G + _assemble(c.n_nets, c.cells[:, 0], c.cells[:, 1], g_cell)
        self.G = G.tocsr()
        self._ff = G[st.free][:, st.free].tocsc()
        self._fk = G[st.free][:, c.src].tocsr()
        self._kk = G[c.src][:, st.free].tocsr()
        self._kk_known = G[c.src][:, c.src].tocsr()
        t1 = time.perf_counter()
        perm = _order(c, st.free, self._ff)
        self.order_seconds = time.perf_counter() - t1
        # symmetric positive definite: no pivoting needed, the ordering kept
        self._lu = Factor(self._ff, perm, spd=True)
        self.factor_seconds = time.perf_counter() - t0
        self.st = st

    def solve(self, volts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(free-net voltages, source currents into the circuit) for source voltages
        ``volts`` of shape (sources,) or (sources, k)."""
        vk = np.asarray(volts, float)
        x = self._lu.solve(-(self._fk @ vk))
        return x, self._kk @ x + self._kk_known @ vk


#: Cells per block of right-hand sides in :func:`port_resistance`.
PORT_BLOCK = 256


def port_resistance(c: Circuit, bank: CellBank, op: OperatingPoint) -> np.ndarray:
    """Thevenin resistance (Ω) the rest of the circuit presents to each RRAM cell at the
    operating point ``op``: the small-signal driving-point impedance Z = eᵀ·J⁻¹·e
    between the cell's te and be (J: the nodal Jacobian with every element linearised
    at ``op``), with the cell's own conductance g removed, R = Z/(1 − g·Z).  0 where
    both terminals are driven by sources."""
    st = _Stamp(c)
    v = np.append(op.v, 0.0)
    _, g_cell = bank.evaluate(op.v_cell)
    _, derivs = _devices(c, v)
    J = _jacobian(st, g_cell, derivs)
    lu = Factor(J, _order(c, st.free, J))
    te, be = st.pos[c.cells[:, 0]], st.pos[c.cells[:, 1]]
    z = np.zeros(len(c.cells))
    for a in range(0, len(c.cells), PORT_BLOCK):
        k = np.arange(a, min(a + PORT_BLOCK, len(c.cells)))
        E = np.zeros((st.free.size, k.size))
        cols = np.arange(k.size)
        E[te[k][te[k] >= 0], cols[te[k] >= 0]] += 1.0
        E[be[k][be[k] >= 0], cols[be[k] >= 0]] -= 1.0
        z[k] = np.einsum("ij,ij->j", E, lu.solve(E))
    return z / np.maximum(1.0 - g_cell * z, 1e-300)
