"""Array reads: the nonlinear DC read at frozen states and the linear vector–matrix path.

:func:`read` solves the whole array with the cells' model (every cell's voltage and
current, the column currents and the IR-drop map).  :func:`vmm` treats every cell as a
fixed conductance, its chord conductance I(v_ref)/v_ref from the model, factorises the
array once and then multiplies input vectors by the array (the column currents),
beside the ideal product Σᵢ vᵢ·gᵢⱼ without wires.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..card import CardBatch
from ..errors import InputError
from .build import build, output_sources
from .cells import CellBank, States, cell_parameters, with_read_noise, with_states
from .circuit import Circuit
from .solve import LinearSolver, OperatingPoint, linearised_guess, operating_point
from .spec import ArraySpec

#: Gate voltage of a selected 1T1R row (V): well above the transistor's threshold.
V_GATE_ON = 1.8
#: Voltage of the RRAM chord conductance in a 1S1R read's first guess (V).
GUESS_V = 0.2


@dataclass(frozen=True)
class ReadResult:
    """One DC read: (rows, cols) maps of the RRAM voltage ``v_cell`` (V, te − be) and
    current ``i_cell`` (A); ``line_drop`` (V): the applied row-to-column voltage minus
    what reaches the cell's taps (the wires' IR drop); ``i_col`` (A) the current each
    column delivers into its sense amplifier; ``iterations`` of Newton; ``seconds``;
    the ``circuit`` solved and every net's voltage ``v_nets`` (V; for the wires'
    currents, :mod:`rram.array.wires`)."""

    v_cell: np.ndarray
    i_cell: np.ndarray
    line_drop: np.ndarray
    i_col: np.ndarray
    iterations: int
    seconds: float
    circuit: Circuit | None = None
    v_nets: np.ndarray | None = None

    @property
    def worst_drop(self) -> float:
        """The largest IR drop of any cell (V)."""
        return float(np.max(np.abs(self.line_drop)))


def noisy_parameters(spec: ArraySpec, states: States | None, noise_read: int | None
                     ) -> CardBatch | None:
    """The cells' cards at read ``noise_read`` of a sequence, their traps' read noise
    drawn (:func:`rram.array.cells.with_read_noise`); None: no read noise."""
    if noise_read is None:
        return None
    return with_read_noise(spec, cell_parameters(spec), states, noise_read)


def read(spec: ArraySpec, v_rows, states: States | None = None, v_gates=None,
         v_cols=0.0, noise_read: int | None = None) -> ReadResult:
    """Nonlinear DC read: rows at ``v_rows`` (V), columns sensed at ``v_cols`` (V),
    1T1R gates at ``v_gates`` (V, default :data:`V_GATE_ON` on every row).
    ``noise_read``: the index of this read in a sequence of reads far apart, whose
    cells meet their traps (cards with ``ntrap`` > 0: RTN, :mod:`rram.noise`)."""
    t0 = time.perf_counter()
    if v_gates is None:
        v_gates = V_GATE_ON
    c, _, op = solve_read(spec, v_rows, states, v_gates, v_cols,
                          noisy_parameters(spec, states, noise_read))
    return read_result(spec, c, op, v_rows, v_cols, t0)


def read_result(spec: ArraySpec, c: Circuit, op: OperatingPoint, v_rows, v_cols,
                t0: float) -> ReadResult:
    """The :class:`ReadResult` of the operating point ``op`` of circuit ``c`` (started
    at ``t0``, :func:`time.perf_counter`)."""
    m, n = spec.shape
    v = np.append(op.v, 0.0)  # ground last, as GND = -1 indexes it
    ii, jj = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    row_tap, col_tap = c.cells[:, 0], _col_taps(spec, c)
    applied = (np.broadcast_to(np.asarray(v_rows, float), (m,))[ii]
               - np.broadcast_to(np.asarray(v_cols, float), (n,))[jj])
    drop = applied - (v[row_tap] - v[col_tap]).reshape(m, n)
    return ReadResult(op.v_cell.reshape(m, n), op.i_cell.reshape(m, n), drop,
                      -op.i_source[output_sources(spec)], op.iterations,
                      time.perf_counter() - t0, c, op.v)


def solve_read(spec: ArraySpec, v_rows, states: States | None, v_gates, v_cols,
               params: CardBatch | None = None
               ) -> tuple[Circuit, CellBank, OperatingPoint]:
    """The circuit of a read, its cells' bank and its operating point (see :func:`read`;
    ``params``: the cells' card rows if already drawn)."""
    c = build(spec, v_rows, states, v_gates=v_gates, v_cols=v_cols, params=params)
    bank = CellBank(c.cell_cards)
    x0 = _selector_guess(spec, c, bank, v_rows, v_cols) if spec.topology == "1s1r" else None
    return c, bank, operating_point(c, bank, x0)


def _selector_guess(spec: ArraySpec, c, bank: CellBank, v_rows, v_cols) -> np.ndarray:
    """A first guess of a 1S1R read: each cell's selector and RRAM share the applied
    voltage as if the wires were ideal (the RRAM at its chord conductance at
    :data:`GUESS_V`, the selector's voltage by bisection), then the circuit with both
    at those chord conductances.  Saves the Newton iterations an exponential selector
    otherwise takes from the 0 V linearisation (~v0 per iteration)."""
    m, n = spec.shape
    applied = (np.broadcast_to(np.asarray(v_rows, float), (m,))[:, None]
               - np.broadcast_to(np.asarray(v_cols, float), (n,))[None, :]).ravel()
    i_r, _ = bank.evaluate(np.full(len(applied), GUESS_V))
    g_r = i_r / GUESS_V
    device = c.groups[0].device
    lo, hi = np.minimum(applied, 0.0), np.maximum(applied, 0.0)
    zero = np.zeros_like(applied)
    for _ in range(60):  # bisection of i_sel(v_s) = g_r·(V − v_s), increasing in v_s
        mid = 0.5 * (lo + hi)
        i_s = device.evaluate([mid, zero])[0]
        up = i_s > g_r * (applied - mid)
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    v_s = 0.5 * (lo + hi)
    i_s, (g0, _) = device.evaluate([v_s, zero])
    g_s = np.where(np.abs(v_s) > 1e-6, i_s / np.where(v_s == 0, 1.0, v_s), g0)
    return linearised_guess(c, g_r, [g_s])


def _col_taps(spec: ArraySpec, c) -> np.ndarray:
    if spec.topology == "1r":
        return c.cells[:, 1]
    return c.groups[0].nodes[:, -1]


@dataclass(frozen=True)
class VmmResult:
    """Column currents ``outputs`` (A; one row per input vector) with the wires, the
    ``ideal`` product without them, the cells' conductances ``g_cell`` (S, rows × cols),
    and the time to factorise the array and to solve all vectors (s)."""

    outputs: np.ndarray
    ideal: np.ndarray
    g_cell: np.ndarray
    factor_seconds: float
    solve_seconds: float

    @property
    def relative_error(self) -> float:
        """‖outputs − ideal‖ / ‖ideal‖ over all vectors and columns."""
        return float(np.linalg.norm(self.outputs - self.ideal) / np.linalg.norm(self.ideal))


def chord_conductance(spec: ArraySpec, states: States | None, v_ref: float,
                      params: CardBatch | None = None) -> np.ndarray:
    """I(v_ref)/v_ref of every cell from the model (S, flattened rows × cols)."""
    if not 0 < abs(v_ref) <= 2:
        raise InputError(f"reference read voltage v_ref = {v_ref!r} V: valid is "
                         "0 < |v_ref| <= 2 V")
    P = with_states(spec, cell_parameters(spec) if params is None else params, states)
    current, _ = CellBank(P).evaluate(np.full(len(P), float(v_ref)))
    return current / v_ref


def vmm_inputs(spec: ArraySpec, inputs: np.ndarray) -> np.ndarray:
    """``inputs`` as a (k, rows) array of input vectors (V), checked; ``spec`` must be a
    1R crossbar (the linear path takes linear cells)."""
    if spec.topology != "1r":
        raise InputError(f"vmm takes a 1r array (linear cells), not {spec.topology}")
    x = np.atleast_2d(np.asarray(inputs, float))
    if x.ndim != 2 or x.shape[1] != spec.rows or not np.all(np.isfinite(x)):
        raise InputError(f"inputs must be finite, of shape (k, {spec.rows}); got {x.shape}")
    return x


def vmm(spec: ArraySpec, inputs: np.ndarray, states: States | None = None,
        v_ref: float = 0.2, g_cell: np.ndarray | None = None,
        noise_read: int | None = None) -> VmmResult:
    """Column currents of a 1R array for every input vector (row voltages, V) in the
    rows of ``inputs`` (k × rows); cells at their chord conductance at ``v_ref`` (V) or
    at the given ``g_cell`` (S, rows × cols); ``noise_read`` as :func:`read`'s."""
    x = vmm_inputs(spec, inputs)
    if g_cell is None:
        g = chord_conductance(spec, states, v_ref, noisy_parameters(spec, states, noise_read))
    else:
        g = np.asarray(g_cell, float).reshape(-1)
    c = build(spec, 0.0, states)
    solver = LinearSolver(c, g)
    volts = np.zeros((len(c.src), x.shape[0]))
    volts[: spec.rows] = x.T
    t0 = time.perf_counter()
    _, i_src = solver.solve(volts)
    solve_s = time.perf_counter() - t0
    out = -i_src[output_sources(spec)].T
    ideal = x @ g.reshape(spec.shape)
    return VmmResult(out, ideal, g.reshape(spec.shape), solver.factor_seconds, solve_s)


@dataclass(frozen=True)
class ReadMargin:
    """A V/2 read of one cell against every other cell in the LRS (the most sneak
    current): the selected column's current with the cell in the LRS (``i_on``) and in
    the HRS (``i_off``), A; ``margin`` = (i_on − i_off)/i_on."""

    cell: tuple[int, int]
    i_on: float
    i_off: float

    @property
    def margin(self) -> float:
        return (self.i_on - self.i_off) / self.i_on


def check_cell(spec: ArraySpec, cell: tuple[int, int] | None) -> tuple[int, int]:
    """``cell`` as (row, column), checked; None: the far corner (0, cols − 1)."""
    m, n = spec.shape
    i, j = cell if cell is not None else (0, n - 1)
    if not (0 <= i < m and 0 <= j < n):
        raise InputError(f"cell ({i}, {j}) is outside the {m} x {n} array")
    return int(i), int(j)


def half_bias(spec: ArraySpec, v_read: float, cell: tuple[int, int]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and gate voltages (V) of a V/2 read of ``cell``: its row at
    ``v_read``, its column sensed at 0 V, every other line at ``v_read``/2; in a 1T1R
    array only the cell's word line on (:data:`V_GATE_ON`), the others at 0 V."""
    m, n = spec.shape
    rows = np.full(m, v_read / 2)
    rows[cell[0]] = v_read
    cols = np.full(n, v_read / 2)
    cols[cell[1]] = 0.0
    gates = np.zeros(m)
    gates[cell[0]] = V_GATE_ON
    return rows, cols, gates if spec.topology == "1t1r" else np.full(m, V_GATE_ON)


def read_margin(spec: ArraySpec, v_read: float, cell: tuple[int, int] | None = None
                ) -> ReadMargin:
    """The read margin of ``cell`` (default: row 0, column cols − 1, the farthest from
    both the driver and the sense) under the V/2 scheme: its row at ``v_read``, the
    other rows and columns at ``v_read``/2, its column sensed at 0 V."""
    from ..states import programmed

    i, j = check_cell(spec, cell)
    rows, cols, gates = half_bias(spec, v_read, (i, j))
    lrs, hrs = programmed(spec.card, "lrs"), programmed(spec.card, "hrs")
    currents = []
    for state in (lrs, hrs):
        gap, width = np.full(spec.shape, lrs[0]), np.full(spec.shape, lrs[1])
        gap[i, j], width[i, j] = state
        r = read(spec, rows, States(gap, width), v_gates=gates, v_cols=cols)
        currents.append(float(r.i_col[j]))
    return ReadMargin((i, j), currents[0], currents[1])
