"""The cells of an array: their parameters, their frozen states, their condensed I(V).

Cell (i, j) is device ``i·cols + j``: its card is the spec's card with that device's
device-to-device draw (:func:`rram.mc.draws.draw_d2d`, the same streams a Monte Carlo
uses), and its state (gap, width in nm) is given per cell or, by default, the card's
``x0``/``w0``.  A cell at a state is the card with ``x0``/``w0`` at that state and its
state nodes held, which is also how the ngspice export renders it (a frozen cell).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..card import PARAMETER_NAMES
from ..circuits import CIRCUIT_PARAMETERS, build_circuit
from ..equations import NM
from ..errors import ConvergenceError, InputError
from ..status import Status
from .spec import ArraySpec

#: The resistor circuit's unknowns (the kernel the condensation runs).
_AT = {name: i for i, name in enumerate(build_circuit("resistor").unknowns)}

#: A low-resistance and a high-resistance state of the default card (gap, width in nm):
#: about 10 kΩ and 1.2 MΩ read at 0.2 V.
LRS = (0.3, 5.0)
HRS = (2.0, 3.0)
_IX = {k: PARAMETER_NAMES.index(k) for k in ("x0", "w0", "l0", "wmin", "wcf")}


def cell_parameters(spec: ArraySpec) -> np.ndarray:
    """(rows·cols, n_parameters) card values of every cell, D2D draws applied."""
    base = np.array([spec.card.values[k] for k in PARAMETER_NAMES])
    P = np.tile(base, (spec.n_cells, 1))
    if spec.variation is not None and spec.variation.of_kind("d2d"):
        from ..mc.draws import draw_d2d

        drawn = draw_d2d(spec.variation, dict(spec.card.values), spec.seed,
                         range(spec.n_cells))
        for name, values in drawn.items():
            P[:, PARAMETER_NAMES.index(name)] = values
        # the formed state within its bounds, as the Monte Carlo keeps it (rram.mc.run)
        P[:, _IX["x0"]] = np.clip(P[:, _IX["x0"]], 0.0, P[:, _IX["l0"]])
        P[:, _IX["w0"]] = np.clip(P[:, _IX["w0"]], 1e-11, P[:, _IX["wcf"]])
    return P


@dataclass(frozen=True)
class States:
    """Frozen state of every cell: gap and CF width (nm), arrays of shape (rows, cols)."""

    gap_nm: np.ndarray
    width_nm: np.ndarray

    def __post_init__(self) -> None:
        for what in ("gap_nm", "width_nm"):
            a = np.array(getattr(self, what), dtype=float)
            if a.ndim != 2 or not np.all(np.isfinite(a)):
                raise InputError(f"cell states {what} must be a finite 2-D array, got shape "
                                 f"{a.shape}")
            a.setflags(write=False)
            object.__setattr__(self, what, a)
        if self.gap_nm.shape != self.width_nm.shape:
            raise InputError(f"cell states: gap_nm {self.gap_nm.shape} and width_nm "
                             f"{self.width_nm.shape} differ in shape")


def pattern_states(pattern: np.ndarray, lrs: tuple[float, float] = LRS,
                   hrs: tuple[float, float] = HRS) -> States:
    """States of a data pattern: True cells in ``lrs``, the others in ``hrs`` (nm)."""
    p = np.asarray(pattern, bool)
    return States(np.where(p, lrs[0], hrs[0]), np.where(p, lrs[1], hrs[1]))


PATTERNS = ("all-lrs", "all-hrs", "checkerboard", "random")


def named_pattern(name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A data pattern (True = LRS): ``all-lrs``, ``all-hrs``, ``checkerboard`` or
    ``random`` (half LRS, drawn from ``seed``)."""
    if name == "all-lrs":
        return np.ones(shape, bool)
    if name == "all-hrs":
        return np.zeros(shape, bool)
    if name == "checkerboard":
        return (np.add.outer(np.arange(shape[0]), np.arange(shape[1])) % 2) == 0
    if name == "random":
        return np.random.default_rng(seed).random(shape) < 0.5
    raise InputError(f"data pattern {name!r}: valid are {', '.join(PATTERNS)}")


def with_states(spec: ArraySpec, P: np.ndarray, states: States | None) -> np.ndarray:
    """``P`` with each cell's ``x0``/``w0`` at its state, checked against its range:
    0 ≤ gap ≤ l0 and wmin ≤ width ≤ wcf of that cell's card."""
    if states is None:
        return P
    if states.gap_nm.shape != spec.shape:
        raise InputError(f"cell states have shape {states.gap_nm.shape}; the array is "
                         f"{spec.rows} x {spec.cols}")
    gap = states.gap_nm.reshape(-1) * NM
    width = states.width_nm.reshape(-1) * NM
    checks = (("gap", gap, np.zeros_like(gap), P[:, _IX["l0"]]),
              ("width", width, P[:, _IX["wmin"]], P[:, _IX["wcf"]]))
    for what, v, lo, hi in checks:
        bad = np.flatnonzero((v < lo) | (v > hi))
        if bad.size:
            k = int(bad[0])
            raise InputError(
                f"cell ({k // spec.cols}, {k % spec.cols}) {what} {v[k] / NM:g} nm is out "
                f"of range: valid is [{lo[k] / NM:g}, {hi[k] / NM:g}] nm")
    out = P.copy()
    out[:, _IX["x0"]] = gap
    out[:, _IX["w0"]] = width
    return out


#: Series resistance of the condensing kernel's bit line (Ω): any value works (the
#: bit line sits at te, so it carries nothing); 1 MΩ keeps its 1/rs out of dI/dV.
_RS = 1e6
TIP_GUESSES = (0.5, 1.0, 0.0)
#: Below this many cells the condensation runs on one thread: starting the threads costs
#: more than the work (16 cells: 1.2 ms on 2 threads, 0.2 ms on one; 256: 7 against
#: 1.9 ms; about even at 576, on this project's loaded 2-core machine).
SERIAL_BELOW = 512


class CellBank:
    """All RRAM cells of an array, condensed: :meth:`evaluate` gives every cell's
    current and conductance at given te−be voltages, warm-started from the last call."""

    def __init__(self, P: np.ndarray) -> None:
        from ..engine.jit import load_compiled

        self._k = load_compiled("rram.array._condense")
        circuit = {p.name: p.default for p in CIRCUIT_PARAMETERS}
        circuit["rs"] = _RS
        tail = np.array([circuit[p.name] for p in CIRCUIT_PARAMETERS])
        self.P = np.ascontiguousarray(np.hstack([P, np.tile(tail, (len(P), 1))]))
        self.n = len(P)
        self.Y = np.zeros((self.n, 7))  # mid, ti, bi, tip, dgap, dwidth, dtemp
        # the states sit at x0, w0: their changes are zero and held
        self.frozen = np.array([True, False, False, False, True, True, False])
        self.atol = np.array([1e-12] * 4 + [1e-6] * 2 + [1e-6])
        self.lim = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 100.0])
        self._fresh = True

    def evaluate(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(current into te (A), dI/dV (S)) of every cell at te−be voltage ``v`` (V)."""
        if self.n >= SERIAL_BELOW:
            return self._evaluate(v)
        import numba

        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return self._evaluate(v)
        finally:
            numba.set_num_threads(threads)

    def _evaluate(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.ascontiguousarray(v, dtype=float)
        current, cond = np.empty(self.n), np.empty(self.n)
        status = np.full(self.n, int(Status.DC_FAILED), np.int64)
        todo = np.arange(self.n)
        guesses = TIP_GUESSES if self._fresh else (None, *TIP_GUESSES)
        for tip in guesses:
            Y = self.Y[todo].copy()
            if tip is not None:
                # ti at te, bi at be (ground in the kernel's frame), the tip in between
                Y[:, _AT["ti"]], Y[:, _AT["bi"]] = v[todo], 0.0
                Y[:, _AT["tip"]], Y[:, _AT["dtemp"]] = tip * v[todo], 0.0
            st = np.zeros(todo.size, np.int64)
            I, G = np.empty(todo.size), np.empty(todo.size)
            self._k.condense(self.P[todo] if todo.size < self.n else self.P, v[todo], Y,
                             self.frozen, self.atol, 1e-10, self.lim, _RS, I, G, st)
            ok = st == Status.OK
            self.Y[todo[ok]] = Y[ok]
            current[todo[ok]], cond[todo[ok]], status[todo[ok]] = I[ok], G[ok], Status.OK
            todo = todo[~ok]
            if not todo.size:
                break
        if todo.size:
            d = int(todo[0])
            raise ConvergenceError(f"the static solve of cell {d} at {v[d]:g} V: "
                                   f"{Status(int(status[d])).text}", analysis="op", device=d)
        self._fresh = False
        return current, cond
