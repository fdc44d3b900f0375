"""The description of an array: topology, size, wires, periphery and cells, as values.

An :class:`ArraySpec` is immutable and validated on construction; every problem is an
:class:`~rram.errors.InputError` naming the input and its valid range.  Lines:

* **row lines** (``r``), one per row, driven at their start (column 0 side) through
  ``r_driver``: the inputs.  In a 1T1R array they are the bit lines driving the cells'
  top electrodes;
* **column lines** (``c``), one per column, sensed at their end (past row m − 1) through
  ``r_sense`` into a 0 V virtual ground (``r_sense = 0``: ideal): the outputs.  In a 1T1R
  array they are the source lines;
* **gate lines** (``g``, 1T1R only), one per row, the word lines driving the gates.

A cell sits between its row-line tap and its column-line tap: the RRAM (te on the row
line), then the access device (none, a two-terminal selector, or an NMOS whose source
is on the column line).  A wire of resistivity ρ, width W and thickness t has
R = ρ·L/(W·t) per length L; one cell pitch of line is ``segments`` Pi, T or L sections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..card import Card, default_card
from ..checks import is_number
from ..constants import ARRAY_MAX_SEGMENTS as MAX_SEGMENTS
from ..constants import ARRAY_MAX_SIDE as MAX_SIDE
from ..errors import InputError
from ..variation import VariationSpec

TOPOLOGIES = ("1r", "1s1r", "1t1r")
SEGMENT_KINDS = ("pi", "t", "l")


def _real(value: object, what: str, lo: float, hi: float, *, lo_open: bool = False) -> float:
    """A finite number in [lo, hi] (``lo_open``: (lo, hi]), else an InputError."""
    if not is_number(value) or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise InputError(f"{what} must be a finite number, got {value!r}")
    v = float(value)  # type: ignore[arg-type]
    if (v <= lo if lo_open else v < lo) or v > hi:
        left = "(" if lo_open else "["
        raise InputError(f"{what} = {v:g} is out of range: valid is {left}{lo:g}, {hi:g}]")
    return v


def _int(value: object, what: str, lo: int, hi: int) -> int:
    if not is_number(value) or float(value) != int(value):  # type: ignore[arg-type]
        raise InputError(f"{what} must be an integer, got {value!r}")
    v = int(value)  # type: ignore[call-overload]
    if not lo <= v <= hi:
        raise InputError(f"{what} = {v} is out of range: valid is [{lo}, {hi}]")
    return v


@dataclass(frozen=True)
class Metal:
    """One line's metal: resistivity ``rho`` (Ω·m), ``width`` and ``thickness`` (m),
    capacitance to ground ``c_ground`` and to each neighbouring parallel line
    ``c_couple`` (F/m)."""

    rho: float = 5e-8  # copper with the size effect of a ~50 nm line
    width: float = 50e-9
    thickness: float = 100e-9
    c_ground: float = 2e-10  # 0.2 fF/µm
    c_couple: float = 1e-10

    def __post_init__(self) -> None:
        _real(self.rho, "metal resistivity rho (Ohm*m)", 0.0, 1e-3)
        _real(self.width, "metal width (m)", 0.0, 1e-3, lo_open=True)
        _real(self.thickness, "metal thickness (m)", 0.0, 1e-3, lo_open=True)
        _real(self.c_ground, "ground capacitance per length c_ground (F/m)", 0.0, 1e-6)
        _real(self.c_couple, "coupling capacitance per length c_couple (F/m)", 0.0, 1e-6)

    def resistance(self, length: float) -> float:
        """R = ρ·L/(W·t) (Ω) of ``length`` (m) of this line."""
        return self.rho * length / (self.width * self.thickness)


@dataclass(frozen=True)
class Selector:
    """A symmetric two-terminal selector, I = i0·sinh(V/v0) (A): ``i0`` (A) sets the
    off current, ``v0`` (V) the nonlinearity (a current ratio e^(V/(2·v0)) between
    full and half bias)."""

    i0: float = 1e-9
    v0: float = 0.1

    def __post_init__(self) -> None:
        _real(self.i0, "selector i0 (A)", 0.0, 1.0, lo_open=True)
        _real(self.v0, "selector v0 (V)", 1e-3, 10.0)


@dataclass(frozen=True)
class Transistor:
    """The access NMOS of a 1T1R cell (square law, SPICE level 1, λ = 0)."""

    kp: float = 60e-6
    wl: float = 10.0
    vto: float = 0.7

    def __post_init__(self) -> None:
        _real(self.kp, "NMOS kp (A/V^2)", 1e-7, 1e-2)
        _real(self.wl, "NMOS W/L", 0.1, 1e4)
        _real(self.vto, "NMOS vto (V)", -2.0, 3.0)


@dataclass(frozen=True)
class ArraySpec:
    """An m × n array (see the module docstring for the lines and the cell).

    ``pitch`` (m) is the cell pitch along both lines; ``segments`` sections of kind
    ``segment_kind`` model one pitch of line; ``r_driver`` and ``r_sense`` (Ω, 0 =
    ideal) are the row drivers' and the column sense amplifiers' resistances.  Cells
    take ``card``, with device-to-device draws of ``variation`` from ``seed`` (cell
    (i, j) is device i·n + j of :mod:`rram.mc.draws`).
    """

    topology: str = "1r"
    rows: int = 8
    cols: int = 8
    pitch: float = 200e-9
    row_metal: Metal = field(default_factory=Metal)
    col_metal: Metal = field(default_factory=Metal)
    gate_metal: Metal = field(default_factory=Metal)
    segments: int = 1
    segment_kind: str = "pi"
    r_driver: float = 0.0
    r_sense: float = 0.0
    selector: Selector = field(default_factory=Selector)
    transistor: Transistor = field(default_factory=Transistor)
    card: Card = field(default_factory=default_card)
    variation: VariationSpec | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise InputError(f"array topology {self.topology!r}: valid are "
                             + ", ".join(TOPOLOGIES))
        _int(self.rows, "rows", 1, MAX_SIDE)
        _int(self.cols, "cols", 1, MAX_SIDE)
        _real(self.pitch, "cell pitch (m)", 0.0, 1e-3, lo_open=True)
        _int(self.segments, "segments per cell pitch", 1, MAX_SEGMENTS)
        if self.segment_kind not in SEGMENT_KINDS:
            raise InputError(f"segment kind {self.segment_kind!r}: valid are "
                             + ", ".join(SEGMENT_KINDS))
        _real(self.r_driver, "driver resistance r_driver (Ohm)", 0.0, 1e9)
        _real(self.r_sense, "sense resistance r_sense (Ohm)", 0.0, 1e9)
        for what, value, kind in (("row_metal", self.row_metal, Metal),
                                  ("col_metal", self.col_metal, Metal),
                                  ("gate_metal", self.gate_metal, Metal),
                                  ("selector", self.selector, Selector),
                                  ("transistor", self.transistor, Transistor),
                                  ("card", self.card, Card)):
            if not isinstance(value, kind):
                raise InputError(f"{what} must be a {kind.__name__}, got {value!r}")
        if self.variation is not None and not isinstance(self.variation, VariationSpec):
            raise InputError(f"variation must be a VariationSpec, got {self.variation!r}")
        _int(self.seed, "seed", 0, 2**63 - 1)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    @property
    def n_cells(self) -> int:
        return self.rows * self.cols

    def segment_resistance(self, metal: Metal) -> float:
        """Resistance (Ω) of one section: a pitch of ``metal`` over ``segments``."""
        return metal.resistance(self.pitch) / self.segments

    @property
    def wire_nodes(self) -> int:
        """Nodes of the lines: ``segments`` per cell pitch on each line family (rows,
        columns and, in a 1T1R array, gates)."""
        families = 3 if self.topology == "1t1r" else 2
        return families * self.n_cells * self.segments

    def memory_estimate(self, work: str = "solve") -> float:
        """Resident memory (bytes) of ``work`` on this array: ``solve`` (a read, a vector-
        matrix product, a margin or a write: the cells, the sparse nodal matrix and its
        LU factors) or ``deck`` (the ngspice deck of ``rram array netlist``, built in
        memory as text).  From :data:`MEMORY_MODEL`, calibrated against measured peaks
        (``benchmarks/bench_array_memory.py`` prints both), a little above them."""
        base, per_cell, per_node, per_fill = MEMORY_MODEL[work]
        nodes = self.wire_nodes
        return (base + per_cell[self.topology] * self.n_cells + per_node * nodes
                + per_fill * nodes * math.log2(max(nodes, 2)))

    def require_memory(self, work: str = "solve") -> None:
        """Refuse at once (:class:`~rram.errors.InputError`, with the estimate and the
        memory available) when :meth:`memory_estimate` exceeds what the machine has."""
        from ..resources import require_memory

        sections = "1 wire section" if self.segments == 1 else \
            f"{self.segments} wire sections"
        what = (f"a {self.rows} x {self.cols} {self.topology.upper()} array with {sections} "
                "per pitch")
        require_memory(f"{what} ({'its deck' if work == 'deck' else 'its solve'})",
                       self.memory_estimate(work),
                       "use fewer rows, columns or --segments")


#: (base, per cell by topology, per wire node, per wire node and log2 of the nodes),
#: bytes, of :meth:`ArraySpec.memory_estimate`.  Measured peaks (1R, one section per
#: pitch): 447 MiB at 256 x 256, 1.10 GiB at 512 x 512, 3.75 GiB at 1024 x 1024; the deck
#: 714 MiB at 256 x 256 and 2.40 GiB at 512 x 512.
MEMORY_MODEL: dict[str, tuple[float, dict[str, float], float, float]] = {
    "solve": (300 * 2**20, {"1r": 2.2e3, "1s1r": 3.4e3, "1t1r": 5.3e3}, 0.0, 50.0),
    "deck": (300 * 2**20, {"1r": 9.0e3, "1s1r": 10.0e3, "1t1r": 12.0e3}, 1.1e3, 0.0),
}


__all__ = ["SEGMENT_KINDS", "TOPOLOGIES", "ArraySpec", "Metal", "Selector", "Transistor"]
