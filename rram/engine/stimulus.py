"""Stimuli for the engine: piecewise-linear applied voltage with per-segment compliance.

Every protocol (DC loops, pulse trains, constant stress) becomes a :class:`Stimulus`: the
breakpoints of the applied voltage, the compliance current of each segment, the gate
voltage, the output time grid and, per segment, the cycle and phase labels used in the
tidy output.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ..errors import InputError

PHASES = ("set", "reset", "read", "hold", "pulse", "stress")


def _finite(name: str, value: float, *, positive: bool = False, nonzero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise InputError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{name} must be finite, got {value!r}")
    if positive and value <= 0:
        raise InputError(f"{name} must be > 0, got {value:g}")
    if nonzero and value == 0:
        raise InputError(f"{name} must be non-zero")
    return value


#: Largest sweep amplitude (V): beyond any RRAM operation, and the output grid of a
#: sweep grows with it (a 10^6 V ramp at 2 mV spacing is 10^9 samples).
MAX_AMPLITUDE = 20.0
#: DC sweep rates (V/s): 1 µV/s (a 2 V ramp in ~23 days) to 1 GV/s (in 2 ns, where the
#: default device barely switches any more; faster is a pulse, see :func:`pulse_train`).
RATE_RANGE = (1e-6, 1e9)
#: Compliance currents (A), of a simulated sweep and of measured data alike: 1 nA to
#: 100 mA (a filamentary cell carries µA to mA; more is a unit mistake or a short).
COMPLIANCE_RANGE = (1e-9, 0.1)


def _within(name: str, value: float, lo: float, hi: float, unit: str) -> float:
    if not lo <= abs(value) <= hi:
        what = "|" + name + "|" if value < 0 else name
        raise InputError(f"{what} must be within [{lo:g}, {hi:g}] {unit}, got {value:g}")
    return value


def check_rate(rate: float, name: str = "rate") -> float:
    """A DC sweep rate (V/s): finite, > 0 and within :data:`RATE_RANGE`."""
    return _within(name, _finite(name, rate, positive=True), *RATE_RANGE, "V/s")


def check_compliance(icc: float, name: str = "icc_set") -> float:
    """A compliance current (A): finite, > 0, within :data:`COMPLIANCE_RANGE` (the one
    range of ``rram sweep``, ``rram mc``, the fit's data and recipes)."""
    icc = _finite(name, icc, positive=True)
    if icc > COMPLIANCE_RANGE[1]:
        raise InputError(f"{name} must be within [{COMPLIANCE_RANGE[0]:g}, "
                         f"{COMPLIANCE_RANGE[1]:g}] A, got {icc:g} — is it in another unit?")
    return _within(name, icc, *COMPLIANCE_RANGE, "A")


def check_dc_loop(v_set: float, v_reset: float, rate: float) -> tuple[float, float, float]:
    """The validation every DC sweep shares (``rram sweep``, ``rram mc``): amplitudes
    non-zero, of opposite signs and at most :data:`MAX_AMPLITUDE`, rate within
    :data:`RATE_RANGE`.  Returns the values as floats."""
    v_set = _finite("v_set", v_set, nonzero=True)
    v_reset = _finite("v_reset", v_reset, nonzero=True)
    if v_set * v_reset > 0:
        raise InputError(
            f"v_set ({v_set:g} V) and v_reset ({v_reset:g} V) must have opposite signs"
        )
    if abs(v_set) > MAX_AMPLITUDE or abs(v_reset) > MAX_AMPLITUDE:
        raise InputError(f"|v_set| and |v_reset| must be at most {MAX_AMPLITUDE:g} V, got "
                         f"{v_set:g} V and {v_reset:g} V")
    return v_set, v_reset, check_rate(rate)


@dataclass(frozen=True)
class Stimulus:
    """The applied voltage of one device.

    ``times`` (s) and ``volts`` (V) are the breakpoints; segment ``k`` runs from
    ``times[k]`` to ``times[k+1]`` with compliance ``icc[k]`` (A, used by the compliance
    circuit), label ``cycles[k]`` and ``phases[k]``.  ``sample_times`` is the output grid.
    ``v_gate`` (V, the 1T1R circuit's gate) is one value for the whole stimulus or one per
    segment, like ``icc`` (:attr:`gates`): a pulse record programs at one gate voltage
    and prepares or reads at another.
    """

    times: np.ndarray
    volts: np.ndarray
    icc: np.ndarray
    cycles: np.ndarray
    phases: tuple[str, ...]
    sample_times: np.ndarray
    v_gate: float | np.ndarray = 0.0

    def __post_init__(self) -> None:
        t, v = np.asarray(self.times, float), np.asarray(self.volts, float)
        if t.ndim != 1 or t.shape != v.shape or t.size < 2:
            raise InputError("a stimulus needs at least two breakpoints of time and voltage")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(v))):
            raise InputError("stimulus times and voltages must be finite")
        if np.any(np.diff(t) <= 0):
            raise InputError("stimulus times must increase strictly")
        if len(self.icc) != t.size - 1 or len(self.cycles) != t.size - 1:
            raise InputError("icc and cycle labels need one value per segment")
        if len(self.phases) != t.size - 1:
            raise InputError("phase labels need one value per segment")
        if np.any(np.asarray(self.icc) <= 0) or not np.all(np.isfinite(self.icc)):
            raise InputError("compliance currents must be finite and > 0")
        gate = np.asarray(self.v_gate, float)
        if gate.ndim > 1 or (gate.ndim == 1 and gate.size != t.size - 1):
            raise InputError("the gate voltage needs one value, or one value per segment")
        if not np.all(np.isfinite(gate)):
            raise InputError("gate voltages must be finite")

    @property
    def gates(self) -> np.ndarray:
        """The gate voltage (V) of each segment."""
        return np.broadcast_to(np.asarray(self.v_gate, float), (len(self.times) - 1,))

    @property
    def constant_gate(self) -> float | None:
        """The gate voltage (V) when it is one value throughout, else None."""
        g = self.gates
        return float(g[0]) if np.all(g == g[0]) else None

    @property
    def duration(self) -> float:
        return float(self.times[-1] - self.times[0])

    def segment_of(self, t: np.ndarray) -> np.ndarray:
        """Index of the segment each time falls in (the last segment for the end time)."""
        k = np.searchsorted(self.times, t, side="right") - 1
        return np.clip(k, 0, len(self.times) - 2)

    def voltage(self, t: np.ndarray) -> np.ndarray:
        return np.interp(t, self.times, self.volts)


class Segments:
    """A stimulus built one segment at a time: each a duration (s) to a voltage (V) with
    its compliance (A), phase and cycle labels and gate voltage (V)."""

    def __init__(self) -> None:
        self.times, self.volts = [0.0], [0.0]
        self.icc: list[float] = []
        self.phases: list[str] = []
        self.cycles: list[int] = []
        self.gates: list[float] = []

    def add(self, duration: float, volts: float, icc: float, phase: str, cycle: int = 0,
            gate: float = 0.0) -> None:
        self.times.append(self.times[-1] + duration)
        self.volts.append(volts)
        self.icc.append(icc)
        self.phases.append(phase)
        self.cycles.append(cycle)
        self.gates.append(gate)

    def __len__(self) -> int:
        return len(self.phases)

    def stimulus(self, sample_times: np.ndarray, v_gate: float | None = None) -> Stimulus:
        """The stimulus sampled at ``sample_times``, its gate ``v_gate`` throughout, or
        each segment's (None)."""
        return Stimulus(np.array(self.times), np.array(self.volts), np.array(self.icc),
                        np.array(self.cycles), tuple(self.phases), sample_times,
                        np.array(self.gates) if v_gate is None else v_gate)


def _grid(times: np.ndarray, dt: float) -> np.ndarray:
    """A uniform grid with spacing ≤ dt that contains every breakpoint."""
    parts = [times[:1]]
    for a, b in itertools.pairwise(times):
        n = max(1, math.ceil((b - a) / dt - 1e-9))
        parts.append(a + (b - a) * np.arange(1, n + 1) / n)
    return np.concatenate(parts)


def dc_loops(
    v_set: float = 2.0,
    v_reset: float = -2.0,
    rate: float = 1e3,
    cycles: int = 1,
    icc_set: float = 100e-6,
    icc_reset: float = 10e-3,
    v_step: float = 2e-3,
    v_gate: float = 0.0,
    reads: bool = False,
    v_read: float = 0.1,
    read_time: float = 10e-6,
    read_edge: float = 1e-6,
) -> Stimulus:
    """Triangular DC loops 0 → v_set → 0 → v_reset → 0, repeated ``cycles`` times.

    ``rate`` is the sweep rate (V/s); ``v_step`` the output spacing in volts of sweep.
    ``v_set`` and ``v_reset`` must have opposite signs (either may be negative, for
    devices that SET at negative bias).  With ``reads``, a read pulse of ``v_read`` (V)
    follows each half cycle (edges ``read_edge``, plateau ``read_time``): the current at
    the end of its plateau gives R_LRS and R_HRS as an instrument measures them.
    """
    v_set, v_reset, rate = check_dc_loop(v_set, v_reset, rate)
    icc_set = _finite("icc_set", icc_set, positive=True)
    icc_reset = _finite("icc_reset", icc_reset, positive=True)
    v_step = _finite("v_step", v_step, positive=True)
    v_read = _finite("v_read", v_read, nonzero=True)
    read_time = _finite("read_time", read_time, positive=True)
    read_edge = _finite("read_edge", read_edge, positive=True)
    if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)) or cycles < 1:
        raise InputError(f"cycles must be a positive integer, got {cycles!r}")
    seg = Segments()
    for c in range(cycles):
        for v_top, i, phase in ((v_set, icc_set, "set"), (v_reset, icc_reset, "reset")):
            seg.add(abs(v_top) / rate, v_top, i, phase, c)
            seg.add(abs(v_top) / rate, 0.0, i, phase, c)
            if reads:
                seg.add(read_edge, v_read, icc_reset, "read", c)
                seg.add(read_time, v_read, icc_reset, "read", c)
                seg.add(read_edge, 0.0, icc_reset, "read", c)
    t = np.array(seg.times)
    grid = _grid(t, v_step / rate)
    if reads:  # the sweep grid is too coarse for the short read pulses
        fine = [np.linspace(t[k], t[k + 1], 11) for k, ph in enumerate(seg.phases)
                if ph == "read"]
        grid = np.union1d(grid, np.concatenate(fine))
    return seg.stimulus(grid, v_gate)


def sweep_phase(
    v_top: float,
    rate: float = 1e3,
    icc: float = 100e-6,
    phase: str = "set",
    v_read: float = 0.1,
    read_time: float = 10e-6,
    read_edge: float = 1e-6,
    v_step: float = 2e-3,
    cycle: int = 0,
    read_icc: float = 10e-3,
    v_gate: float = 0.0,
) -> Stimulus:
    """One half of a DC loop: 0 → ``v_top`` → 0 at ``rate`` (V/s) with compliance
    ``icc``, then a read pulse of ``v_read``.  Monte Carlo runs each SET and each RESET as
    one such phase, so cycle-to-cycle parameters can change between them."""
    v_top = _finite("v_top", v_top, nonzero=True)
    _within("v_top", v_top, 0.0, MAX_AMPLITUDE, "V")
    rate = check_rate(rate)
    if phase not in ("set", "reset"):
        raise InputError(f"phase {phase!r}: valid are set, reset")
    ramp = abs(v_top) / rate
    t0 = 0.0
    times = [t0, t0 + ramp, t0 + 2 * ramp, t0 + 2 * ramp + read_edge,
             t0 + 2 * ramp + read_edge + read_time, t0 + 2 * ramp + 2 * read_edge + read_time]
    volts = [0.0, v_top, 0.0, v_read, v_read, 0.0]
    t = np.array(times)
    grid = np.union1d(_grid(t[:3], v_step / rate), np.linspace(t[2], t[5], 31))
    return Stimulus(t, np.array(volts), np.array([icc, icc, read_icc, read_icc, read_icc]),
                    np.full(5, cycle), (phase, phase, "read", "read", "read"), grid,
                    float(v_gate))


def pulse_train(
    amplitudes: Sequence[float],
    width: float,
    rise: float = 10e-9,
    fall: float | None = None,
    gap: float = 1e-6,
    icc: float = 10e-3,
    v_gate: float = 0.0,
    dt: float | None = None,
    cycles: Sequence[int] | None = None,
) -> Stimulus:
    """Trapezoidal pulses of the given amplitudes (V), each ``rise``/``width``/``fall``
    long (``width`` is the flat top), separated by ``gap`` at 0 V."""
    width = _finite("width", width, positive=True)
    rise = _finite("rise", rise, positive=True)
    fall = rise if fall is None else _finite("fall", fall, positive=True)
    gap = _finite("gap", gap, positive=True)
    icc = _finite("icc", icc, positive=True)
    if len(amplitudes) == 0:
        raise InputError("a pulse train needs at least one amplitude")
    times, volts, cyc, phases = [0.0], [0.0], [], []
    labels = list(range(len(amplitudes))) if cycles is None else list(cycles)
    for a, c in zip(amplitudes, labels, strict=True):
        a = _finite("pulse amplitude", a)
        t0 = times[-1]
        times += [t0 + rise, t0 + rise + width, t0 + rise + width + fall,
                  t0 + rise + width + fall + gap]
        volts += [a, a, 0.0, 0.0]
        phase = "set" if a > 0 else "reset"
        cyc += [c] * 4
        phases += [phase, phase, phase, "hold"]
    t = np.array(times)
    step = dt if dt is not None else min(rise, width, fall) / 20
    return Stimulus(t, np.array(volts), np.full(t.size - 1, icc), np.array(cyc),
                    tuple(phases), _grid(t, _finite("dt", step, positive=True)), v_gate)


@dataclass(frozen=True)
class PulseCycle:
    """A pulsed SET/RESET cycle of a 1T1R cell, as endurance is measured: a SET pulse of
    ``v_set`` (V) and a RESET pulse of ``v_reset``, each ``width`` (s, flat top) with
    ``edge`` rise and fall and ``gap`` at 0 V after it, the word line at ``v_gate`` (V:
    1.28 V passes ~100 µA), in the SET polarity of a card whose ``polarity`` is +1
    (:meth:`stimulus` flips both for −1).  The cell is read at ``v_read`` (V) after each
    pulse.  ngspice's ``pulses`` testbench (:mod:`rram.spice.decks`) runs the same."""

    v_set: float = 2.0
    v_reset: float = -1.8
    width: float = 80e-9
    edge: float = 10e-9
    gap: float = 100e-9
    v_gate: float = 1.28
    v_read: float = 0.1

    #: The circuit the cycle drives.
    circuit = "1t1r"
    #: Segments per pulse (rise, flat top, fall, 0 V): the SET pulse's state is the end
    #: of segment 3 of a cycle, the RESET pulse's of segment 7.
    SEGMENTS = 4

    def __post_init__(self) -> None:
        for name in ("v_set", "v_reset", "width", "edge", "gap", "v_gate", "v_read"):
            _finite(name, getattr(self, name))
        if not 0 < self.v_set <= MAX_AMPLITUDE or not -MAX_AMPLITUDE <= self.v_reset < 0:
            raise InputError(f"v_set must be in (0, {MAX_AMPLITUDE:g}] V and v_reset in "
                             f"[-{MAX_AMPLITUDE:g}, 0) V, got {self.v_set!r}, {self.v_reset!r}")
        for name in ("width", "edge", "gap"):
            if not 0 < getattr(self, name) <= 1.0:
                raise InputError(f"{name} must be in (0, 1] s, got {getattr(self, name)!r}")
        if not 0 < abs(self.v_read) <= 0.5:
            raise InputError(f"v_read must be within 0 < |v_read| <= 0.5 V, got {self.v_read!r}")

    #: Where a card fitted on an endurance record keeps its pulses (rram fit-endurance).
    META_KEY = "endurance_protocol"

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> PulseCycle:
        """The pulses a card was fitted with (``meta["fit"]["endurance_protocol"]``), or
        the default cycle for a card without them."""
        fit = meta.get("fit") if isinstance(meta, Mapping) else None
        p = fit.get(cls.META_KEY) if isinstance(fit, Mapping) else None
        if p is None:
            return cls()
        names = [f.name for f in fields(cls)]
        if not isinstance(p, Mapping) or set(p) - set(names):
            raise InputError(f"the card's {cls.META_KEY} must be an object with keys among "
                             f"{', '.join(names)}, got {p!r}")
        return cls(**p)

    def as_meta(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}

    def stimulus(self, cycles: int = 1, sign: float = 1.0) -> Stimulus:
        """``cycles`` SET/RESET pulse pairs (``sign``: the card's SET polarity)."""
        return pulse_train([self.v_set * sign, self.v_reset * sign] * cycles,
                           width=self.width, rise=self.edge, gap=self.gap, v_gate=self.v_gate,
                           cycles=[c for c in range(cycles) for _ in (0, 1)])

    def pulse(self, amplitude: float, sign: float = 1.0) -> Stimulus:
        """One pulse of the cycle (``v_set`` or ``v_reset``), alone: its state is the end
        of segment ``SEGMENTS`` − 1."""
        return pulse_train([amplitude * sign], width=self.width, rise=self.edge,
                           gap=self.gap, v_gate=self.v_gate)

    def ends(self, cycles: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The segments (of :meth:`stimulus`) at whose ends each cycle's SET and RESET
        states are."""
        first = 2 * self.SEGMENTS * np.arange(cycles)
        return first + self.SEGMENTS - 1, first + 2 * self.SEGMENTS - 1


def constant_stress(
    voltage: float,
    duration: float,
    rise: float = 1e-6,
    icc: float = 10e-3,
    samples_per_decade: int = 20,
) -> Stimulus:
    """Ramp to ``voltage`` in ``rise`` and hold it for ``duration`` (s); output on a
    logarithmic time grid (read disturb, retention)."""
    voltage = _finite("voltage", voltage)
    duration = _finite("duration", duration, positive=True)
    rise = _finite("rise", rise, positive=True)
    t = np.array([0.0, rise, rise + duration])
    decades = max(1.0, math.log10((rise + duration) / rise))
    grid = np.concatenate([[0.0], np.geomspace(rise, rise + duration,
                                               int(decades * samples_per_decade) + 1)])
    return Stimulus(t, np.array([0.0, voltage, voltage]), np.full(2, icc), np.zeros(2, int),
                    ("stress", "stress"), grid, 0.0)
