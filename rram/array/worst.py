"""The worst data pattern of a V/2 read: the states of the other cells that minimise a
cell's read margin, found by an adjoint-guided descent checked by nonlinear reads.

A read of cell (i, j) (:func:`~rram.array.read.half_bias`) senses the current into
column j with the cell in the LRS (``i_on``) and in the HRS (``i_off``); the other cells
hold a background pattern of LRS and HRS states.  Two objectives:

* ``same``: one background for both reads, margin (i_on − i_off)/i_on (the definition
  of :func:`~rram.array.read.read_margin`, which uses the all-LRS background);
* ``window``: the sense amplifier's fixed reference must separate every LRS read from
  every HRS read, so the backgrounds are searched apart — the smallest ``i_on`` and the
  largest ``i_off`` — and the margin is (min i_on − max i_off)/min i_on (≤ ``same``;
  negative when no reference separates the states).

The search starts from the standard patterns (all-LRS, all-HRS, the two
checkerboards) and ``random_starts`` random ones, and descends from the best of them.
At each pattern one transposed solve (:func:`~rram.array.solve.cell_transfer`) predicts
the output change of flipping each cell, T_k·ΔI_k, with ΔI_k the change of the cell's
current at its present voltage: the cells predicted to lower the objective are flipped
together, then the better half of them, and so on, each try a full nonlinear read that
is kept only if it lowers the objective.  On arrays of at most ``polish_cells`` cells,
when no predicted flip helps, every single flip is tried by nonlinear reads, so the
result is a local minimum under single flips (the brute force over all patterns agrees
on 3 × 3 arrays, ``tests/test_array_worst.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .build import output_sources
from .cells import CellBank, cell_parameters, pattern_states, with_states
from .read import check_cell, half_bias, solve_read
from .solve import cell_transfer
from .spec import ArraySpec

OBJECTIVES = ("same", "window")
#: An accepted flip must lower the objective by more than this fraction of it (the
#: Newton tolerance leaves ~1e-9 relative noise in the currents).
IMPROVEMENT = 1e-7
MAX_ROUNDS = 1000


def standard_patterns(shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """The standard backgrounds (True = LRS)."""
    board = (np.add.outer(np.arange(shape[0]), np.arange(shape[1])) % 2) == 0
    return {"all-lrs": np.ones(shape, bool), "all-hrs": np.zeros(shape, bool),
            "checkerboard": board, "checkerboard-inverse": ~board}


class _Reader:
    """Reads of one cell, held in one state, against background patterns."""

    def __init__(self, spec: ArraySpec, v_read: float, cell: tuple[int, int], lrs: bool,
                 params: np.ndarray, count: Callable[[], None]) -> None:
        self.spec, self.cell, self.lrs, self.params, self.count = spec, cell, lrs, params, count
        self.bias = half_bias(spec, v_read, cell)
        self.source = output_sources(spec).start + cell[1]
        self.sign = 1.0 if v_read > 0 else -1.0  # currents along the read's direction

    def _background(self, pattern: np.ndarray) -> np.ndarray:
        p = np.array(pattern, bool)
        p[self.cell] = self.lrs
        return p

    def current(self, pattern: np.ndarray) -> tuple[float, np.ndarray]:
        """(current into the selected column's sense (A; its sign flipped for a
        negative read voltage, so that larger is a stronger read), the predicted
        change of it when each cell flips (A; 0 at the selected cell))."""
        p = self._background(pattern)
        rows, cols, gates = self.bias
        c, bank, op = solve_read(self.spec, rows, pattern_states(p, self.spec.card), gates,
                                 cols, self.params)
        self.count()
        current = -float(op.i_source[self.source])
        flipped = with_states(self.spec, self.params, pattern_states(~p, self.spec.card))
        i_flip, _ = CellBank(flipped).evaluate(op.v_cell)
        gain = (cell_transfer(c, bank, op, self.source)
                * (i_flip - op.i_cell)).reshape(self.spec.shape)
        gain[self.cell] = 0.0
        return self.sign * current, self.sign * gain


#: An objective: pattern → (value to minimise, predicted change of it per flip).
Objective = Callable[[np.ndarray], tuple[float, np.ndarray]]


@dataclass(frozen=True)
class Descent:
    """The end of one descent: the ``pattern``, its objective ``value``, the value of
    each start pattern ``starts``."""

    pattern: np.ndarray
    value: float
    starts: dict[str, float]


def descend(objective: Objective, starts: dict[str, np.ndarray], polish: bool,
            fixed: tuple[int, int]) -> Descent:
    """Minimise ``objective`` over patterns from the best of ``starts``: batches of the
    flips predicted to help, halved until a nonlinear read confirms one; then (``polish``)
    single flips of every cell but ``fixed`` by nonlinear reads, best predicted first."""
    memo: dict[bytes, tuple[float, np.ndarray]] = {}

    def cached(p: np.ndarray) -> tuple[float, np.ndarray]:
        key = _key(p, fixed)
        if key not in memo:
            memo[key] = objective(p)
        return memo[key]

    values, gains = {}, {}
    for name, p in starts.items():
        values[name], gains[name] = cached(p)
    name = min(values, key=values.__getitem__)
    p, f, gain = np.array(starts[name], bool), values[name], gains[name]
    for _ in range(MAX_ROUNDS):
        tol = IMPROVEMENT * max(abs(f), 1e-30)
        order = np.argsort(gain, axis=None)
        helpful = order[gain.ravel()[order] < -tol]
        tries = []
        k = helpful.size
        while k >= 1:
            tries.append(helpful[:k])
            k //= 2
        if polish:
            single = [np.array([x]) for x in order if np.unravel_index(x, p.shape) != fixed]
            tries += [t for t in single if not (helpful.size and t[0] == helpful[0])]
        for flips in tries:
            q = p.copy()
            q.flat[flips] = ~q.flat[flips]
            fq, gq = cached(q)
            if fq < f - tol:
                p, f, gain = q, fq, gq
                break
        else:
            break
    return Descent(p, f, values)


def _key(p: np.ndarray, fixed: tuple[int, int]) -> bytes:
    """A background's identity: the fixed cell's own state is set by the reads."""
    key = np.array(p, bool)
    key[fixed] = False
    return key.tobytes()


@dataclass(frozen=True)
class WorstPattern:
    """The worst backgrounds found for ``cell``: ``on_pattern`` for its LRS read and
    ``off_pattern`` for its HRS read (True = LRS; equal for the ``same`` objective; the
    cell itself is shown in the LRS), their currents ``i_on``/``i_off`` (A; along the
    read, positive for a negative ``v_read`` too), the
    same-pattern margins of the standard backgrounds ``standard``, the nonlinear
    ``reads`` it took and its ``seconds``."""

    cell: tuple[int, int]
    objective: str
    on_pattern: np.ndarray
    off_pattern: np.ndarray
    i_on: float
    i_off: float
    standard: dict[str, float]
    reads: int
    seconds: float

    @property
    def margin(self) -> float:
        return (self.i_on - self.i_off) / self.i_on


def worst_pattern(spec: ArraySpec, v_read: float, cell: tuple[int, int] | None = None,
                  objective: str = "same", random_starts: int = 2, seed: int = 0,
                  polish_cells: int = 64,
                  progress: Callable[[], None] | None = None) -> WorstPattern:
    """The background that minimises the V/2 read margin of ``cell`` (default: the far
    corner) at ``v_read`` (V) under ``objective`` (see the module docstring).
    ``progress`` is called after every nonlinear read."""
    if objective not in OBJECTIVES:
        raise InputError(f"objective {objective!r}: valid are {', '.join(OBJECTIVES)}")
    if not 0 < abs(v_read) <= 5:
        raise InputError(f"read voltage v_read = {v_read!r} V: valid is 0 < |v_read| <= 5")
    if not 0 <= int(random_starts) <= 100:
        raise InputError(f"random starts = {random_starts}: valid is [0, 100]")
    t0 = time.perf_counter()
    ij = check_cell(spec, cell)
    reads = [0]

    def count() -> None:
        reads[0] += 1
        if progress is not None:
            progress()

    params = cell_parameters(spec)
    on = _Reader(spec, v_read, ij, True, params, count)
    off = _Reader(spec, v_read, ij, False, params, count)
    starts = standard_patterns(spec.shape)
    rng = np.random.default_rng(seed)
    for k in range(int(random_starts)):
        starts[f"random-{k}"] = rng.random(spec.shape) < 0.5
    polish = spec.n_cells <= polish_cells
    if objective == "same":
        seen: dict[bytes, tuple[float, float]] = {}

        def margin(p: np.ndarray) -> tuple[float, np.ndarray]:
            (a, da), (b, db) = on.current(p), off.current(p)
            seen[_key(p, ij)] = (a, b)
            # first order of 1 − b/a in the currents' predicted changes
            return 1.0 - b / a, -(db * a - b * da) / a**2

        d = descend(margin, starts, polish, ij)
        i_on, i_off = seen[_key(d.pattern, ij)]
        standard = {k: v for k, v in d.starts.items() if not k.startswith("random")}
        p_on = p_off = d.pattern
    else:
        low = descend(on.current, starts, polish, ij)

        def negated(p: np.ndarray) -> tuple[float, np.ndarray]:
            i, gain = off.current(p)
            return -i, -gain

        high = descend(negated, starts, polish, ij)
        i_on, i_off, p_on, p_off = low.value, -high.value, low.pattern, high.pattern
        standard = {k: 1.0 + high.starts[k] / low.starts[k] for k in standard_patterns(
            spec.shape)}
    return WorstPattern(ij, objective, _shown(p_on, ij), _shown(p_off, ij), i_on, i_off,
                        standard, reads[0], time.perf_counter() - t0)


def worst_cell(spec: ArraySpec, v_read: float,
               progress: Callable[[], None] | None = None
               ) -> tuple[tuple[int, int], np.ndarray]:
    """The cell with the smallest all-LRS V/2 read margin at ``v_read`` (V), and every
    cell's margin (rows × cols): two nonlinear reads per cell."""
    from .read import read_margin

    margins = np.empty(spec.shape)
    for i, j in np.ndindex(*spec.shape):
        margins[i, j] = read_margin(spec, v_read, (i, j)).margin
        if progress is not None:
            progress()
    k = np.unravel_index(int(np.argmin(margins)), spec.shape)
    return (int(k[0]), int(k[1])), margins


def _shown(p: np.ndarray, cell: tuple[int, int]) -> np.ndarray:
    out = np.array(p, bool)
    out[cell] = True
    out.setflags(write=False)
    return out


__all__ = ["OBJECTIVES", "WorstPattern", "descend", "standard_patterns", "worst_cell",
           "worst_pattern"]
