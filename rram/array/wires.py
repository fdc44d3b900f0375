"""The wires of a DC solve: segment currents, electromigration flags, self-heating.

Every wire section of a built array is a resistor tagged with its line kind (row,
column, gate), line and section (:attr:`rram.array.circuit.Circuit.res_where`).  Its
current I = (v_a − v_b)/R flows along increasing section index (rows: away from the
driver; columns: towards the sense); its current density is J = I/(W·t).

**Electromigration.**  A section is flagged when |I| exceeds I_max = min(i_per_width·W,
j_max·W·t) (:class:`EmLimit`; the default design rule is 1 mA per µm of width, that is
1e3 A/m, about 1e10 A/m² = 1 MA/cm² in a 50 nm × 100 nm line).

**Self-heating** (:func:`heated_read`).  A section of length L and width W dissipates
P = I²·R and rises ΔT = R_th·P above the substrate, with R_th = t_d/(k_d·W·L) (K/W):
one-dimensional conduction through the dielectric of thickness t_d and conductivity k_d
under the section's footprint, without lateral spreading or conduction along the metal
(an upper bound).  Its resistivity becomes ρ₀·(1 + β·ΔT); the DC solve and the
temperatures are iterated to a fixed point.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np

from ..errors import ConvergenceError, InputError
from .build import RESISTOR_KINDS
from .cells import States
from .circuit import Circuit
from .read import ReadResult, read_result, solve_read
from .solve import operating_point
from .spec import ArraySpec, Metal

WIRE_KINDS = ("row", "col", "gate")
#: The default electromigration rule: 1 mA per µm of width (A/m).
I_PER_WIDTH = 1e3


def _positive(value: float | None, what: str) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(f"{what} = {value!r} must be a positive finite number")


@dataclass(frozen=True)
class EmLimit:
    """The largest DC current of a wire: ``i_per_width`` (A per m of width; 1e3 = 1 mA/µm)
    times W and/or ``j_max`` (A/m²) times W·t, the smaller where both are given."""

    i_per_width: float | None = I_PER_WIDTH
    j_max: float | None = None

    def __post_init__(self) -> None:
        if self.i_per_width is None and self.j_max is None:
            raise InputError("an electromigration limit needs i_per_width or j_max")
        _positive(self.i_per_width, "electromigration limit per width (A/m)")
        _positive(self.j_max, "electromigration current density limit j_max (A/m^2)")

    def i_max(self, metal: Metal) -> float:
        """I_max (A) of a line of ``metal``."""
        limits = []
        if self.i_per_width is not None:
            limits.append(self.i_per_width * metal.width)
        if self.j_max is not None:
            limits.append(self.j_max * metal.width * metal.thickness)
        return min(limits)


def _metal(spec: ArraySpec, kind: str) -> Metal:
    return {"row": spec.row_metal, "col": spec.col_metal, "gate": spec.gate_metal}[kind]


def _by_kind(spec: ArraySpec, codes: np.ndarray, value) -> np.ndarray:
    """``value(metal)`` of each resistor's line (kind codes of ``RESISTOR_KINDS``);
    1.0 for resistors that are not wires."""
    table = np.array([value(_metal(spec, k)) if k in WIRE_KINDS else 1.0
                      for k in RESISTOR_KINDS])
    return table[codes]


@dataclass(frozen=True)
class WireCurrents:
    """One entry per wire section (the two halves of a T section are one): its ``kind``
    (row, col or gate), ``line`` and ``section`` (along the line, from the driven end of
    a row or gate line, from row 0 of a column), ``current`` (A, along increasing
    section), current density ``j`` (A/m²) and ``ratio`` |I|/I_max."""

    kind: np.ndarray
    line: np.ndarray
    section: np.ndarray
    current: np.ndarray
    j: np.ndarray
    i_max: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        return np.abs(self.current) / self.i_max

    @property
    def flagged(self) -> np.ndarray:
        """The sections above the limit."""
        return self.ratio > 1.0

    @property
    def worst_ratio(self) -> float:
        return float(self.ratio.max()) if self.current.size else 0.0

    def table(self, flagged_only: bool = False):
        """A pandas DataFrame: kind, line, section, current_A, j_A_per_m2, i_max_A, ratio,
        flagged; worst first."""
        import pandas as pd

        df = pd.DataFrame({"kind": self.kind, "line": self.line, "section": self.section,
                           "current_A": self.current, "j_A_per_m2": self.j,
                           "i_max_A": self.i_max, "ratio": self.ratio,
                           "flagged": self.flagged})
        if flagged_only:
            df = df[df.flagged]
        return df.sort_values("ratio", ascending=False, kind="stable").reset_index(drop=True)

    def cell_map(self, spec: ArraySpec) -> np.ndarray:
        """(rows, cols) map of the largest ratio of the row sections leading to each
        cell's row tap and the column sections leaving its column tap."""
        m, n, s = spec.rows, spec.cols, spec.segments
        out = np.zeros((m, n))
        r = self.ratio
        rows, cols = self.kind == "row", self.kind == "col"
        np.maximum.at(out, (self.line[rows], self.section[rows] // s), r[rows])
        np.maximum.at(out.T, (self.line[cols], self.section[cols] // s), r[cols])
        return out


def wire_currents(spec: ArraySpec, c: Circuit, v_nets: np.ndarray,
                  limit: EmLimit | None = None) -> WireCurrents:
    """The wire sections' currents of circuit ``c`` (built from ``spec``) at net voltages
    ``v_nets`` (V, ground excluded), against ``limit`` (default :class:`EmLimit`)."""
    limit = limit or EmLimit()
    if c.res_where is None:
        raise InputError("the circuit has no wire tags: build it with rram.array.build")
    v = np.append(np.asarray(v_nets, float), 0.0)
    kinds = np.array(RESISTOR_KINDS)[c.res_where[:, 0]]
    wire = np.isin(kinds, WIRE_KINDS)
    # the first half of a T section stands for the section (the same current at DC)
    _, first = np.unique(c.res_where[wire], axis=0, return_index=True)
    k = np.flatnonzero(wire)[np.sort(first)]
    current = (v[c.res[k, 0]] - v[c.res[k, 1]]) / c.ohms[k]
    codes = c.res_where[k, 0]
    area = _by_kind(spec, codes, lambda mt: mt.width * mt.thickness)
    i_max = _by_kind(spec, codes, limit.i_max)
    return WireCurrents(kinds[k], c.res_where[k, 1], c.res_where[k, 2], current,
                        current / area, i_max)


@dataclass(frozen=True)
class WireHeating:
    """Wire self-heating: resistivity ρ₀·(1 + ``beta``·ΔT) (``beta`` in 1/K; ρ₀ is the
    metal's ``rho``, at the substrate temperature), ΔT = R_th·P with R_th =
    ``t_dielectric``/(``k_dielectric``·W·L) (K/W) through a dielectric of thickness
    ``t_dielectric`` (m) and conductivity ``k_dielectric`` (W/(m·K)) to the substrate."""

    beta: float = 3.9e-3  # bulk copper
    k_dielectric: float = 1.4  # SiO2
    t_dielectric: float = 100e-9

    def __post_init__(self) -> None:
        if not (math.isfinite(self.beta) and 0 <= self.beta <= 0.1):
            raise InputError(f"temperature coefficient beta = {self.beta!r} 1/K: valid is "
                             "[0, 0.1]")
        _positive(self.k_dielectric, "dielectric thermal conductivity k_dielectric (W/m/K)")
        _positive(self.t_dielectric, "dielectric thickness t_dielectric (m)")


@dataclass(frozen=True)
class HeatedRead:
    """A read with self-heated wires: the ``read`` at the fixed point, every resistor's
    temperature rise ``delta_t`` (K; 0 off the wires), the fixed-point ``iterations``."""

    read: ReadResult
    delta_t: np.ndarray
    iterations: int

    @property
    def max_delta_t(self) -> float:
        return float(self.delta_t.max()) if self.delta_t.size else 0.0


#: Fixed point: the temperatures move by less than this (K) in an iteration.
TEMP_TOL = 1e-6
MAX_HEAT_ITER = 100
#: A wire this far above the substrate (K) has run away (copper melts ~1060 K above 300 K).
MAX_RISE = 1000.0
MAX_STEP_K = 100.0


def heated_read(spec: ArraySpec, v_rows, states: States | None = None,
                heating: WireHeating | None = None, v_gates=None, v_cols=0.0
                ) -> HeatedRead:
    """:func:`rram.array.read.read` with the wires' resistance at their own temperature
    (see the module docstring): DC solve, Joule power, temperatures, resistances, again,
    until the temperatures settle.  ``beta`` = 0 is the plain read."""
    from .read import V_GATE_ON

    t0 = time.perf_counter()
    heating = heating or WireHeating()
    v_gates = V_GATE_ON if v_gates is None else v_gates
    c, bank, op = solve_read(spec, v_rows, states, v_gates, v_cols)
    delta = np.zeros(len(c.ohms))
    if heating.beta == 0 or c.res_where is None:
        return HeatedRead(read_result(spec, c, op, v_rows, v_cols, t0), delta, 0)
    kinds = np.array(RESISTOR_KINDS)[c.res_where[:, 0]]
    wire = np.isin(kinds, WIRE_KINDS)
    r0 = c.ohms.copy()
    codes = c.res_where[:, 0]
    width = _by_kind(spec, codes, lambda mt: mt.width)
    area = _by_kind(spec, codes, lambda mt: mt.width * mt.thickness)
    rho = _by_kind(spec, codes, lambda mt: mt.rho or 1.0)
    length = r0 * area / rho  # each resistor's own length (half a section for T)
    r_th = np.where(wire, heating.t_dielectric / (heating.k_dielectric * width * length),
                    0.0)
    free = np.setdiff1d(np.arange(c.n_nets), c.src)
    relax, last = np.ones(len(r0)), np.zeros(len(r0))
    for it in range(1, MAX_HEAT_ITER + 1):
        v = np.append(op.v, 0.0)
        current = (v[c.res[:, 0]] - v[c.res[:, 1]]) / c.ohms
        residual = np.max(np.abs(r_th * current**2 * c.ohms - delta), initial=0.0)
        if residual < TEMP_TOL:
            return HeatedRead(read_result(spec, c, op, v_rows, v_cols, t0), delta, it)
        if delta.max() > MAX_RISE:
            k = int(np.argmax(delta))
            raise ConvergenceError(
                f"thermal runaway of the wires: resistor {k} passed {MAX_RISE:g} K above the "
                f"substrate at {abs(current[k]):.3g} A (R_th = {r_th[k]:.3g} K/W)",
                analysis="op")
        # each section's own fixed point at its present current, ΔT = a/(1 − a·β) with
        # a = R_th·I²·R0: plain substitution crawls (or diverges) as a·β nears 1, where
        # the cells, not the wire, set the current; past 1 (no fixed point at this
        # current) the plain substitution, which heats on until the current falls
        a = r_th * current**2 * r0
        gain = a * heating.beta
        target = np.where(gain < 1.0, a / np.where(gain < 1.0, 1.0 - gain, 1.0),
                          a * (1.0 + heating.beta * delta))
        # a section whose step turns back is overshooting: halve its steps.  At most
        # MAX_STEP_K a step: the current falls as the wire heats, which the section's
        # own fixed point at a frozen current ignores
        step = target - delta
        relax = np.where(step * last < 0, relax / 2, np.minimum(1.0, 2 * relax))
        last = step
        delta = delta + np.clip(relax * step, -MAX_STEP_K, MAX_STEP_K)
        c = dataclasses.replace(c, ohms=r0 * (1.0 + heating.beta * delta))
        op = operating_point(c, bank, op.v[free])
    raise ConvergenceError(f"wire self-heating did not settle in {MAX_HEAT_ITER} "
                           f"iterations (largest rise {delta.max():.3g} K)", analysis="op")


__all__ = ["EmLimit", "HeatedRead", "WireCurrents", "WireHeating", "heated_read",
           "wire_currents"]
