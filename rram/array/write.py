"""Quasi-static write operations: pulse trains on one cell of an array, every cell's state
advancing with the model's own kinetics.

A write applies ``count`` trapezoidal pulses (amplitude V between the selected row and
the selected column, flat top ``width``, edges ``rise``/``fall``, then ``gap`` at 0 V)
under a bias scheme (:data:`SCHEMES`):

* ``v/2``: selected row at V, selected column at 0, every other line at V/2;
* ``v/3``: selected row at V, selected column at 0, other rows at V/3, other columns at
  2V/3 (every unselected cell sees ±V/3);
* ``float``: selected row at V, selected column at 0, every other line undriven.

Quasi-static splitting, per pulse:

1. the array is solved at the pulse's plateau bias with every cell frozen at its state
   (the sparse Newton engine, :mod:`.solve`); each cell sees a Thevenin source: the
   open-circuit voltage and the small-signal resistance of the rest of the array at its
   terminals (:func:`~.solve.port_resistance`), so a cell's own state change feeds back
   on its voltage as the wires and the other cells make it;
2. every cell is integrated over the pulse as one device of the engine's ``resistor``
   circuit (source = its Thevenin voltage, series resistance = its Thevenin resistance;
   :func:`rram.engine.run.integrate_arrays`, the compiled model and its integrator: no
   equation is written here), from rest at its state (cards re-based: x0, w0 = the
   state);
3. the array is re-solved at the states at the end of the plateau; if some cell's
   Thevenin voltage moved by more than ``vtol``, the plateau is sub-stepped at
   ``substeps`` points, the array re-solved at the sampled states of each, and the
   pulse integrated again through those voltages (waveform relaxation), until they
   agree within ``vtol``.

Valid when the wires settle fast against the pulse: :func:`wire_time_constant` gives the
Elmore delay of the slowest line, and a pulse shorter than :data:`RC_RATIO` times it is
refused.  The edges are applied as linear ramps of each cell's plateau Thevenin voltage.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..card import Card, CardBatch
from ..circuits import CIRCUIT_PARAMETERS, build_circuit
from ..constants import NM
from ..errors import ConvergenceError, InputError
from ..states import set_sign
from ..status import Status, succeeded
from .build import build
from .cells import CellBank, States, cell_parameters, with_states
from .circuit import Circuit
from .solve import OperatingPoint, operating_point, port_resistance
from .spec import ArraySpec, Metal

SCHEMES = ("v/2", "v/3", "float")
#: The pulse width must be at least this many wire Elmore delays.
RC_RATIO = 10.0
#: Read voltage of the cells' resistance (V), each cell on its own.
V_READ = 0.1
MAX_SWEEPS = 40
#: Relative change of a cell's chord conductance that refreshes the Thevenin resistances.
REFRESH = 0.1
#: Sample points on each edge of a pulse.
EDGE_POINTS = 4
_RS_RANGE = (1e-6, 1e9)  # the resistor circuit's rs range (rram.circuits)


def _finite(value: float, what: str, lo: float, hi: float) -> float:
    if not isinstance(value, int | float) or not math.isfinite(value) or not lo <= value <= hi:
        raise InputError(f"{what} = {value!r} is out of range: valid is [{lo:g}, {hi:g}]")
    return float(value)


#: The write pulse's magnitude (V) where none is given: it SETs the default card's HRS.
SET_AMPLITUDE_V = 1.8


def set_amplitude(card: Card) -> float:
    """The default write amplitude (V, selected row minus selected column): a SET,
    :data:`SET_AMPLITUDE_V` in ``card``'s SET polarity (negative for a card that SETs
    at negative voltage, as the fitted TUD card does)."""
    return SET_AMPLITUDE_V * set_sign(card)


@dataclass(frozen=True)
class PulseTrain:
    """``count`` pulses of ``amplitude`` (V, selected row − selected column; > 0 is a
    SET for a card of polarity +1), flat top ``width`` (s), edges ``rise`` and ``fall``
    (s), each followed by ``gap`` (s) at 0 V."""

    amplitude: float
    width: float
    count: int = 1
    rise: float = 10e-9
    fall: float = 10e-9
    gap: float = 100e-9

    def __post_init__(self) -> None:
        _finite(self.amplitude, "pulse amplitude (V)", -10.0, 10.0)
        if self.amplitude == 0:
            raise InputError("pulse amplitude must not be 0 V")
        _finite(self.width, "pulse width (s)", 1e-12, 1.0)
        for what in ("rise", "fall", "gap"):
            _finite(getattr(self, what), f"pulse {what} (s)", 1e-13, 1.0)
        if not isinstance(self.count, int) or not 1 <= self.count <= 10**6:
            raise InputError(f"pulse count = {self.count!r} is out of range: valid is "
                             "[1, 1000000]")

    @property
    def period(self) -> float:
        return self.rise + self.width + self.fall + self.gap


def line_bias(spec: ArraySpec, cell: tuple[int, int], scheme: str, v: float
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row voltages, column voltages, floating rows, floating columns) of ``scheme``
    writing ``cell`` with ``v`` (V)."""
    m, n = spec.shape
    i, j = cell
    if scheme not in SCHEMES:
        raise InputError(f"bias scheme {scheme!r}: valid are {', '.join(SCHEMES)}")
    rows = np.full(m, {"v/2": v / 2, "v/3": v / 3, "float": 0.0}[scheme])
    cols = np.full(n, {"v/2": v / 2, "v/3": 2 * v / 3, "float": 0.0}[scheme])
    rows[i], cols[j] = v, 0.0
    float_rows = np.full(m, scheme == "float")
    float_cols = np.full(n, scheme == "float")
    float_rows[i] = float_cols[j] = False
    return rows, cols, float_rows, float_cols


def half_selected(shape: tuple[int, int], cell: tuple[int, int]) -> np.ndarray:
    """Cells sharing a line with ``cell`` (its row or its column), the cell excluded."""
    mask = np.zeros(shape, bool)
    mask[cell[0], :] = True
    mask[:, cell[1]] = True
    mask[cell] = False
    return mask


def write_circuit(spec: ArraySpec, cell: tuple[int, int], scheme: str, v: float,
                  params: CardBatch | None = None, states: States | None = None) -> Circuit:
    """The array under ``scheme`` (plateau bias ``v``), floating lines without sources."""
    rows, cols, float_rows, float_cols = line_bias(spec, cell, scheme, v)
    c = build(spec, rows, states, params=params, v_cols=cols)
    # sources in build's order: rows, then the columns' sense sources
    floating = np.concatenate([float_rows, float_cols])
    if not floating.any():
        return c
    keep = np.flatnonzero(~floating)
    names = [c.src_name(int(k)) for k in keep]
    return dataclasses.replace(c, src=c.src[keep], volts=c.volts[keep],
                               src_name=names.__getitem__)


def _line_delay(spec: ArraySpec, metal: Metal, pitches: int, r_end: float) -> float:
    """Elmore delay (s) at the far end of a uniform distributed RC line of ``pitches``
    pitches driven through ``r_end``: (r_end + R/2)·C, C with both neighbours switching
    the opposite way (c_ground + 4·c_couple, the worst case)."""
    length = pitches * spec.pitch
    C = (metal.c_ground + 4 * metal.c_couple) * length
    return (r_end + metal.resistance(length) / 2) * C


def wire_time_constant(spec: ArraySpec) -> float:
    """The Elmore delay (s) of the slowest line: a row through its driver or a column
    through its sense resistance."""
    return max(_line_delay(spec, spec.row_metal, spec.cols, spec.r_driver),
               _line_delay(spec, spec.col_metal, spec.rows, spec.r_sense))


def check_quasi_static(spec: ArraySpec, pulse: PulseTrain) -> float:
    """The wire delay (s); an InputError when the pulse is not long against it."""
    tau = wire_time_constant(spec)
    if pulse.width < RC_RATIO * tau:
        raise InputError(
            f"pulse width {pulse.width:g} s is not long against the wire RC (Elmore delay "
            f"{tau:.3g} s of the slowest line): the quasi-static write needs width >= "
            f"{RC_RATIO:g}x that; simulate a transient of the exported deck instead")
    return tau


@dataclass(frozen=True)
class WriteResult:
    """A pulse train on ``cell``: cell states before and after (nm), every cell's
    resistance read on its own at :data:`V_READ` after each pulse ``r_history``
    (Ω, (count + 1, rows, cols), before the first pulse first), the RRAM voltage of
    every cell on the first pulse's plateau ``v_first`` (V), the wire delay ``tau``
    (s), the largest RC of a cell through the array ``tau_cells`` (s: its Thevenin
    resistance into its own, its node's and a line's capacitance, of the cells at a
    tenth of the write voltage or more), array solves and
    relaxation sweeps, and the time (s)."""

    cell: tuple[int, int]
    scheme: str
    pulse: PulseTrain
    states0: States
    states: States
    r_history: np.ndarray
    v_first: np.ndarray
    tau: float
    tau_cells: float
    array_solves: int
    relaxations: int
    seconds: float

    @property
    def r0(self) -> np.ndarray:
        return self.r_history[0]

    @property
    def r(self) -> np.ndarray:
        return self.r_history[-1]

    @property
    def change(self) -> np.ndarray:
        """Relative resistance change of every cell, R/R0 − 1."""
        return self.r / self.r0 - 1

    @property
    def half_selected(self) -> np.ndarray:
        return half_selected(self.r.shape, self.cell)


def _load_line(v: np.ndarray, i: np.ndarray, r_th: np.ndarray) -> np.ndarray:
    """Thevenin resistances (Ω) for the next relaxation sweep, from the array's cell
    voltages ``v`` and currents ``i`` (V, A; columns: before and after the pulse, at
    the plateau's bias): a cell whose chord conductance changed more than 2x (it
    switches, and its own current moves its voltage along a nonlinear load line, e.g.
    through a selector) takes the secant between the two, when positive; the others
    keep ``r_th``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g0, g1 = np.abs(i[:, 0] / v[:, 0]), np.abs(i[:, -1] / v[:, -1])
        secant = -(v[:, -1] - v[:, 0]) / (i[:, -1] - i[:, 0])
    switching = (np.maximum(g0, g1) > 2 * np.minimum(g0, g1)) & np.isfinite(secant) \
        & (secant > 0)
    return np.clip(np.where(switching, secant, r_th), *_RS_RANGE)


class _Pulse:
    """One pulse of every cell as a device of the resistor circuit (see the module
    docstring); the array and the cells' banks are reused across pulses.

    Sample points (where the array may be solved and the cells' Thevenin voltages are
    breakpoints): :data:`EDGE_POINTS` on each edge (sources at that fraction of their
    plateau value) and ``substeps`` on the plateau."""

    def __init__(self, spec: ArraySpec, cell: tuple[int, int], scheme: str,
                 pulse: PulseTrain, cards: CardBatch, substeps: int, vtol: float,
                 options) -> None:
        self.c = write_circuit(spec, cell, scheme, pulse.amplitude, cards)
        self.bank = CellBank(cards)
        self.pulse, self.vtol, self.options = pulse, vtol, options
        self.model = cards.model
        #: every cell as a device of the resistor circuit: its layout and parameters
        self.circuit = build_circuit("resistor", cards.model)
        self.lay = self.circuit.layout
        tail = np.array([p.default for p in CIRCUIT_PARAMETERS])
        self.P = np.hstack([cards.values, np.tile(tail, (len(cards), 1))])
        p, E = pulse, EDGE_POINTS
        up = np.arange(1, E + 1) / E  # the rise's points, its end (the plateau's start) last
        down = 1 - np.arange(1, E) / E  # the fall's points before its end (0 V)
        plateau = np.arange(1, substeps + 1) / substeps
        self.t = np.concatenate([p.rise * up, p.rise + p.width * plateau,
                                 p.rise + p.width + p.fall * (1 - down)])
        self.scale = np.concatenate([up, np.ones(substeps), down])
        self.k_start, self.k_end = E - 1, E - 1 + substeps  # the plateau's ends
        self.times = np.concatenate([[0.0], self.t, [p.rise + p.width + p.fall, p.period]])
        self._circuits = {1.0: self.c}
        self.solves = 0
        self.relaxations = 0
        self._x: np.ndarray | None = None
        self._r_th: np.ndarray | None = None
        self.tau_cells = 0.0
        self.c_line = max((mt.c_ground + 4 * mt.c_couple) * k * spec.pitch
                          for mt, k in ((spec.row_metal, spec.cols),
                                        (spec.col_metal, spec.rows)))
        self._g_ref: np.ndarray | None = None

    def solve(self, gap_m: np.ndarray, width_m: np.ndarray, scale: float = 1.0
              ) -> OperatingPoint:
        """The array with its sources at ``scale`` times the plateau, cells at the
        given states (m)."""
        c = self._circuits.get(scale)
        if c is None:
            c = self._circuits[scale] = dataclasses.replace(self.c, volts=self.c.volts * scale)
        self.bank.set_states(gap_m, width_m)
        op = operating_point(c, self.bank, self._x if scale == 1.0 else None)
        if scale == 1.0:
            self._x = op.v[np.setdiff1d(np.arange(c.n_nets), c.src)]
        self.solves += 1
        return op

    def _port_resistance(self, op: OperatingPoint) -> np.ndarray:
        """The cells' Thevenin resistances (Ω) at ``op``, recomputed only when some
        cell's chord conductance moved by more than :data:`REFRESH` since the last time
        (the relaxation's fixed point does not depend on them, its speed does)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(np.abs(op.v_cell) > 1e-3, op.i_cell / op.v_cell, np.nan)
        if self._r_th is not None:
            with np.errstate(invalid="ignore"):
                moved = np.abs(g / self._g_ref - 1)
            if not np.any(moved > REFRESH):  # NaN (a cell near 0 V) does not count
                return self._r_th.copy()
        self._r_th = np.clip(port_resistance(self.c, self.bank, op), *_RS_RANGE)
        self._g_ref = g
        # each cell's own RC: its Thevenin resistance into its capacitance, the device
        # circuit's node capacitance and a whole line's (an undriven line charges
        # through the cells); of the cells that take a tenth of the write voltage or
        # more (the others hardly move: an unselected 1S1R cell's middle node charges
        # through its off selector, slowly and to nothing)
        col = self.lay.column
        cap = self.P[:, col("cp")] + self.P[:, col("cd")] + self.c_line
        loaded = np.abs(op.v_cell) >= 0.1 * abs(self.pulse.amplitude)
        if loaded.any():
            self.tau_cells = max(self.tau_cells,
                                 float(np.max((self._r_th * cap)[loaded])))
        return self._r_th.copy()

    def run(self, gap_m: np.ndarray, width_m: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """States (m) after the pulse and its gap; the cells' plateau voltages (V)."""
        op = self.solve(gap_m, width_m)
        r_th = self._port_resistance(op)
        # the array's cell voltage and current at each sample, first guessed as the
        # plateau's start scaled by the sources
        v = op.v_cell[:, None] * self.scale[None, :]
        i = op.i_cell[:, None] * self.scale[None, :]
        v_th = v + r_th[:, None] * i
        lay = self.lay
        self.P[:, lay.column("x0")], self.P[:, lay.column("w0")] = gap_m, width_m
        every = list(range(len(self.t)))
        for sweep in range(1, MAX_SWEEPS + 1):
            self.P[:, lay.column("rs")] = r_th
            y = self._integrate(v_th)
            gaps = gap_m[:, None] + y[:, :, lay.unknown("dgap")] * lay.anchor("dgap")[1]
            widths = width_m[:, None] + y[:, :, lay.unknown("dwidth")] * lay.anchor("dwidth")[1]
            # the array at the states of the plateau's ends; at every sample once they
            # moved the voltages
            todo = [self.k_start, self.k_end] if sweep == 1 else every
            for k in todo:
                o = self.solve(gaps[:, k], widths[:, k], float(self.scale[k]))
                v[:, k], i[:, k] = o.v_cell, o.i_cell
            moved = float(np.max(np.abs(v[:, todo] + r_th[:, None] * i[:, todo]
                                        - v_th[:, todo])))
            if moved <= self.vtol:
                return gaps[:, -1], widths[:, -1], op.v_cell
            self.relaxations += 1
            if sweep == 1:
                for k in every:
                    if k not in todo:
                        o = self.solve(gaps[:, k], widths[:, k], float(self.scale[k]))
                        v[:, k], i[:, k] = o.v_cell, o.i_cell
            # the load line between the plateau's bias at the states before the pulse
            # and at the plateau's end
            r_th = _load_line(np.stack([op.v_cell, v[:, self.k_end]], 1),
                              np.stack([op.i_cell, i[:, self.k_end]], 1), r_th)
            v_th = v + r_th[:, None] * i
        raise ConvergenceError(
            f"the quasi-static write did not settle in {MAX_SWEEPS} relaxation sweeps: the "
            f"cells' Thevenin voltages still moved by {moved:.3g} V (vtol "
            f"{self.vtol:g} V); more substeps may help", analysis="tran")

    def _integrate(self, v_th: np.ndarray) -> np.ndarray:
        """Unknowns of every cell at the sample points and at the period's end."""
        from ..engine.run import integrate_arrays

        n = len(v_th)
        TP = np.tile(self.times, (n, 1))
        VP = np.hstack([np.zeros((n, 1)), v_th, np.zeros((n, 2))])
        OUT = np.tile(np.append(self.t, self.times[-1]), (n, 1))
        ICC = np.ones((n, TP.shape[1] - 1))
        out, status, _, _ = integrate_arrays(self.circuit, self.P, TP, VP, ICC,
                                             np.zeros_like(ICC), OUT, self.model,
                                             self.options)
        bad = np.flatnonzero(~succeeded(status))
        if bad.size:
            d = int(bad[0])
            raise ConvergenceError(f"cell {d} failed in its write pulse: "
                                   f"{Status(int(status[d])).text}", analysis="tran", device=d)
        return out


def cell_resistance(cards: CardBatch, gap_m: np.ndarray, width_m: np.ndarray,
                    bank: CellBank | None = None) -> tuple[np.ndarray, CellBank]:
    """Every cell's resistance on its own at :data:`V_READ` (Ω), its states ``gap_m``,
    ``width_m`` (m) on ``cards``; ``bank``: reused (warm start)."""
    bank = bank or CellBank(cards)
    bank.set_states(gap_m, width_m)
    current, _ = bank.evaluate(np.full(len(cards), V_READ))
    return V_READ / current, bank


def _warn_slow_cells(tau: float, pulse: PulseTrain) -> None:
    """A warning when the cells' own RC (s) is not short against the pulse's edges and
    width: an undriven line that charges through high-resistance cells."""
    if pulse.width < RC_RATIO * tau or min(pulse.rise, pulse.fall) < tau:
        warnings.warn(f"a cell's RC through the array ({tau:.3g} s) is not short against "
                      f"the pulse (edges {pulse.rise:g}/{pulse.fall:g} s, width "
                      f"{pulse.width:g} s): the quasi-static write lags less than a "
                      "transient would", stacklevel=3)


def check_write(spec: ArraySpec, cell: tuple[int, int], pulse: PulseTrain,
                scheme: str = "v/2", substeps: int = 8, vtol: float = 1e-4) -> float:
    """Every input of :func:`write` checked (an InputError naming the first bad one);
    returns the wire delay (s, :func:`wire_time_constant`)."""
    if spec.topology == "1t1r":
        raise InputError("write schemes v/2, v/3 and float bias crossbar lines: take a 1r "
                         "or 1s1r array (1t1r writes select by the word line)")
    if scheme not in SCHEMES:
        raise InputError(f"bias scheme {scheme!r}: valid are {', '.join(SCHEMES)}")
    m, n = spec.shape
    if not (isinstance(cell, tuple) and len(cell) == 2 and 0 <= cell[0] < m
            and 0 <= cell[1] < n):
        raise InputError(f"cell {cell!r} is outside the {m} x {n} array")
    if not isinstance(pulse, PulseTrain):
        raise InputError(f"pulse must be a PulseTrain, got {pulse!r}")
    if not isinstance(substeps, int) or not 1 <= substeps <= 1000:
        raise InputError(f"substeps = {substeps!r}: valid is [1, 1000]")
    _finite(vtol, "vtol (V)", 1e-9, 1.0)
    return check_quasi_static(spec, pulse)


def write(spec: ArraySpec, cell: tuple[int, int], pulse: PulseTrain, scheme: str = "v/2",
          states: States | None = None, substeps: int = 8, vtol: float = 1e-4,
          options=None, progress: Callable[[int], None] | None = None) -> WriteResult:
    """Apply ``pulse`` to ``cell`` under ``scheme``; every cell starts at ``states``
    (default: each card's x0/w0).  ``substeps``: plateau points of a relaxation;
    ``vtol`` (V): how far a cell's Thevenin voltage may move before the plateau is
    sub-stepped; ``options``: the integrator's :class:`rram.engine.run.Options`;
    ``progress(k)`` is called after pulse k."""
    t0 = time.perf_counter()
    tau = check_write(spec, cell, pulse, scheme, substeps, vtol)
    m, n = spec.shape
    P = with_states(spec, cell_parameters(spec), states)
    gap, width = P["x0"].copy(), P["w0"].copy()
    engine = _Pulse(spec, cell, scheme, pulse, P, substeps, vtol, options)
    history = np.empty((pulse.count + 1, m * n))
    history[0], reader = cell_resistance(P, gap, width)
    v_first = None
    for k in range(pulse.count):
        gap, width, v_cell = engine.run(gap, width)
        if v_first is None:
            v_first = v_cell
            _warn_slow_cells(engine.tau_cells, pulse)
        history[k + 1], _ = cell_resistance(P, gap, width, reader)
        if progress is not None:
            progress(k + 1)
    s0 = States(P["x0"].reshape(m, n) / NM, P["w0"].reshape(m, n) / NM)
    return WriteResult(cell, scheme, pulse, s0,
                       States(gap.reshape(m, n) / NM, width.reshape(m, n) / NM),
                       history.reshape(-1, m, n), np.asarray(v_first).reshape(m, n), tau,
                       engine.tau_cells,
                       engine.solves, engine.relaxations, time.perf_counter() - t0)


__all__ = ["RC_RATIO", "SCHEMES", "PulseTrain", "WriteResult", "cell_resistance",
           "check_quasi_static", "check_write", "half_selected", "line_bias",
           "wire_time_constant", "write", "write_circuit"]
