"""Pulse records: programming pulses and the reads after them, as a measured stimulus.

A pulse record is what a pulse tester or a 1T1R array's write circuit produces: pulse
staircases (ISPP: a SET staircase at each gate voltage, a RESET staircase on the source
line), write-verify or pulse cycling.  Each row is one pulse — its amplitude on the bit
line (V, signed: the cell's top electrode is on the bit line, the 1T1R transistor
between its bottom electrode and ground, so the transistor limits the positive pulses),
its width (s), the gate voltage during it (V, 1T1R) or the compliance (A, a 1R cell
behind a limited source) — and the resistance read after it (Ω; empty where the pulse was not
followed by a read, such as a preparation pulse).  Rows are grouped in ``sequence``s
run one after another on one cell (``chain``; each from the record's start state
otherwise, for sequences measured on different cells).  The record starts from the
start card's programmed LRS (``start``) and puts its preparation pulses (the RESET
before a SET staircase) in its rows.

The model replays each sequence as one stimulus (:meth:`PulseRecord.stimulus`):
trapezoidal pulses (``rise`` edges), then after ``settle`` a read of ``v_read`` for
``read_time`` at the read gate, and the resistance is the cell's own, V_cell/I at the
read's end (a tester's ``V_read/I`` through the transistor with ``read="path"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..circuits import check_transistor
from ..engine.stimulus import COMPLIANCE_RANGE, MAX_AMPLITUDE, Segments, Stimulus
from ..errors import InputError
from .tables import numeric_columns

#: What each column of a pulse record is called in a file (before any unit suffix).
NAMES = {
    "sequence": ("sequence", "staircase", "seq"),
    "v_pulse_V": ("v_pulse", "vpulse", "amplitude", "v_bl", "pulse"),
    "width_s": ("width", "pulse_width", "t_pulse", "tpulse"),
    "v_gate_V": ("v_gate", "vgate", "vg", "v_wl", "gate"),
    "icc_A": ("icc", "compliance"),
    "resistance_ohm": ("resistance", "r", "res", "r_read"),
}
#: Pulse widths a record may hold (s): 100 ps to 1 s.
WIDTH_RANGE = (1e-10, 1.0)
READS = ("cell", "path")
STARTS = ("lrs", "hrs", "card")


@dataclass(frozen=True)
class PulseRecord:
    """Pulses (one entry per pulse, in time order) and the reads after them.

    ``sequence``: the label of each pulse's sequence; ``v_pulse`` (V), ``width`` (s);
    ``v_gate`` (V, the 1T1R circuit) or ``icc`` (A, the compliance circuit) per pulse;
    ``resistance`` (Ω, NaN: no read).  ``v_read`` (V) and ``read_gate`` (V, 1T1R; default
    the record's highest gate) set the reads; ``read``: ``cell`` (V_cell/I) or ``path``
    (V_read/I).  ``transistor``: the 1T1R access transistor's level-1 parameters
    (``kp``, ``wl``, ``vto``).  ``start``: the record's initial state (``lrs``,
    ``hrs``: the start card's programmed states; ``card``: its ``x0``, ``w0``);
    ``chain``: each sequence starts where the one before ended (one cell), else from
    the initial state (a cell per sequence)."""

    sequence: np.ndarray
    v_pulse: np.ndarray
    width: np.ndarray
    resistance: np.ndarray
    v_gate: np.ndarray | None = None
    icc: np.ndarray | None = None
    v_read: float = 0.2
    read_gate: float | None = None
    read: str = "cell"
    transistor: dict[str, float] = field(default_factory=dict)
    start: str = "lrs"
    chain: bool = True
    rise: float = 10e-9
    settle: float = 1e-6
    read_time: float = 1e-6
    source: str = "pulse record"

    def __post_init__(self) -> None:
        n = len(self.v_pulse)
        arrays = {"sequence": self.sequence, "v_pulse": self.v_pulse, "width": self.width,
                  "resistance": self.resistance, "v_gate": self.v_gate, "icc": self.icc}
        for name, a in arrays.items():
            if a is not None and len(a) != n:
                raise InputError(f"{self.source}: {name} has {len(a)} values for {n} pulses")
        if n == 0:
            raise InputError(f"{self.source}: no pulses")
        if (self.v_gate is None) == (self.icc is None):
            raise InputError(f"{self.source}: give each pulse a gate voltage (1T1R) or a "
                             "compliance current (1R), not both and not neither")
        v = np.asarray(self.v_pulse, float)
        if not np.all(np.isfinite(v)) or np.any(np.abs(v) > MAX_AMPLITUDE):
            raise InputError(f"{self.source}: pulse amplitudes must be finite and within "
                             f"±{MAX_AMPLITUDE:g} V")
        w = np.asarray(self.width, float)
        if not np.all((w >= WIDTH_RANGE[0]) & (w <= WIDTH_RANGE[1])):
            raise InputError(f"{self.source}: pulse widths must be within "
                             f"[{WIDTH_RANGE[0]:g}, {WIDTH_RANGE[1]:g}] s")
        r = np.asarray(self.resistance, float)
        if np.any(r[np.isfinite(r)] <= 0) or np.any(np.isinf(r)):
            raise InputError(f"{self.source}: resistances must be finite and > 0 (leave "
                             "the cell empty where the pulse was not read)")
        if not np.isfinite(r).any():
            raise InputError(f"{self.source}: no pulse is followed by a read: nothing to fit")
        if self.icc is not None:
            i = np.asarray(self.icc, float)
            if not np.all((i >= COMPLIANCE_RANGE[0]) & (i <= COMPLIANCE_RANGE[1])):
                raise InputError(f"{self.source}: compliance currents must be within "
                                 f"[{COMPLIANCE_RANGE[0]:g}, {COMPLIANCE_RANGE[1]:g}] A")
        if self.v_gate is not None and not np.all(np.abs(self.gates) <= MAX_AMPLITUDE):
            raise InputError(f"{self.source}: gate voltages must be within "
                             f"±{MAX_AMPLITUDE:g} V")
        if self.read_gate is not None and not (math.isfinite(self.read_gate)
                                               and abs(self.read_gate) <= MAX_AMPLITUDE):
            raise InputError(f"read_gate must be within ±{MAX_AMPLITUDE:g} V, got "
                             f"{self.read_gate!r}")
        if self.v_gate is None and self.transistor:
            raise InputError(f"{self.source}: transistor parameters are given but the "
                             "record has no gate voltages (a 1R cell behind a compliance)")
        labels = np.asarray(self.sequence).astype(str)
        if np.any(np.char.strip(labels) == ""):
            k = int(np.flatnonzero(np.char.strip(labels) == "")[0])
            raise InputError(f"{self.source}: pulse {k + 1} has no sequence label (label "
                             "every pulse, or leave out the sequence column)")
        seen: set[str] = set()
        for k in np.flatnonzero(np.r_[True, labels[1:] != labels[:-1]]):
            if labels[k] in seen:
                raise InputError(f"{self.source}: the pulses of sequence {str(labels[k])!r} "
                                 f"are not consecutive (it starts again at pulse {k + 1}): "
                                 "a sequence is one run of pulses in time order")
            seen.add(str(labels[k]))
        if not (0 < abs(self.v_read) <= 1.0):
            raise InputError(f"{self.source}: v_read must be within [-1, 1] V and not 0, "
                             f"got {self.v_read:g}")
        if self.read not in READS:
            raise InputError(f"read {self.read!r}: valid are {', '.join(READS)}")
        if self.start not in STARTS:
            raise InputError(f"start {self.start!r}: valid are {', '.join(STARTS)}")
        object.__setattr__(self, "transistor", check_transistor(self.transistor))

    @property
    def circuit(self) -> str:
        return "1t1r" if self.v_gate is not None else "compliance"

    @property
    def gates(self) -> np.ndarray:
        return np.asarray(self.v_gate, float)

    @property
    def gate_of_reads(self) -> float:
        return float(self.read_gate) if self.read_gate is not None else float(
            np.max(self.gates))

    @property
    def sequences(self) -> list[np.ndarray]:
        """Pulse indices of each sequence, in the order the sequences first appear."""
        labels = list(dict.fromkeys(self.sequence.tolist()))
        return [np.flatnonzero(self.sequence == s) for s in labels]

    @property
    def reads(self) -> np.ndarray:
        """Pulses followed by a read."""
        return np.isfinite(np.asarray(self.resistance, float))

    @property
    def labels(self) -> list[str]:
        """The sequences' labels, in the order they first appear."""
        return [str(x) for x in dict.fromkeys(self.sequence.tolist())]

    def without_reads(self, held: Sequence[str]) -> PulseRecord:
        """The record with the reads of the sequences ``held`` taken out: their pulses
        stay (the cell went through them: a chained record's later sequences start where
        they left it), so a fit of it predicts the reads it never saw."""
        from dataclasses import replace

        labels = self.labels
        unknown = [h for h in held if h not in labels]
        if unknown:
            raise InputError(f"held-out sequence(s) {', '.join(map(repr, unknown))} not in "
                             f"{self.source} (its sequences: {', '.join(labels)})")
        out = np.isin(self.sequence.astype(str), list(held))
        resistance = np.where(out, np.nan, np.asarray(self.resistance, float))
        if not np.isfinite(resistance).any():
            raise InputError(f"holding out {', '.join(held)} leaves no reads to fit")
        return replace(self, resistance=resistance)

    def circuit_params(self) -> dict[str, float]:
        return dict(self.transistor) if self.circuit == "1t1r" else {}

    def stimulus(self, pulses: np.ndarray) -> tuple[Stimulus, np.ndarray]:
        """The stimulus of the pulses ``pulses`` (one sequence) and, per pulse, the index
        of its first segment (rise, flat top, fall, settle, then the read's edge, plateau,
        edge and a settle; the sample at each read plateau's end)."""
        seg, samples, first = Segments(), [], []
        edge = min(self.rise, self.read_time / 10)
        g_read = self.gate_of_reads if self.circuit == "1t1r" else 0.0
        i_read = float(np.max(self.icc)) if self.icc is not None else COMPLIANCE_RANGE[1]
        for k in pulses:
            a, w = float(self.v_pulse[k]), float(self.width[k])
            g = float(self.gates[k]) if self.circuit == "1t1r" else 0.0
            i = float(self.icc[k]) if self.icc is not None else COMPLIANCE_RANGE[1]
            first.append(len(seg))
            for duration, volts, phase in ((self.rise, a, "pulse"), (w, a, "pulse"),
                                           (self.rise, 0.0, "pulse"),
                                           (self.settle, 0.0, "hold")):
                seg.add(duration, volts, i, phase, gate=g)
            seg.add(edge, self.v_read, i_read, "read", gate=g_read)
            seg.add(self.read_time, self.v_read, i_read, "read", gate=g_read)
            samples.append(seg.times[-1])
            seg.add(edge, 0.0, i_read, "read", gate=g_read)
            seg.add(self.settle, 0.0, i_read, "hold", gate=g_read)
        return seg.stimulus(np.array(samples)), np.array(first)

    def protocol(self) -> dict:
        """The record's stimulus for a fitted card's metadata: circuit, pulse widths,
        amplitudes, gates or compliances, the reads and the transistor."""
        def span(x) -> list[float]:
            return [float(np.min(x)), float(np.max(x))]

        out = {"circuit": self.circuit, "pulses": len(self.v_pulse),
               "sequences": len(self.sequences), "width_s": span(self.width),
               "v_pulse_V": span(self.v_pulse), "v_read_V": self.v_read, "read": self.read,
               "start": self.start, "chain": self.chain, "rise_s": self.rise}
        if self.circuit == "1t1r":
            out.update(v_gate_V=sorted(set(self.gates.tolist())),
                       read_gate_V=self.gate_of_reads, transistor=dict(self.transistor))
        else:
            out["icc_A"] = sorted(set(np.asarray(self.icc, float).tolist()))
        return out

    def as_loop(self, polarity: float):
        """The DC loop equivalent to the record's staircases (what ``rram sweep`` and
        ``rram mc`` run on a card fitted to it): its circuit, its largest SET and RESET
        amplitudes (``polarity``: the SET's sign), the median gate (and RESET gate, and
        the transistor) or compliance of its SET pulses, and a ramp that spends one
        pulse width per staircase step."""
        from ..engine.stimulus import RATE_RANGE
        from ..experiment import DCLoop

        v = np.asarray(self.v_pulse, float)
        is_set = np.sign(v) == polarity
        steps = [np.abs(np.diff(v[idx][is_set[idx]])) for idx in self.sequences]
        steps = np.concatenate(steps) if steps else np.array([])
        step = float(np.median(steps[steps > 0])) if (steps > 0).any() else 0.1
        rate = float(np.clip(step / float(np.median(self.width)), *RATE_RANGE))
        is_reset = np.sign(v) == -polarity  # a 0 V "pulse" is a read
        v_set = polarity * float(np.max(np.abs(v[is_set]))) if is_set.any() else 2 * polarity
        v_reset = (-polarity * float(np.max(np.abs(v[is_reset]))) if is_reset.any()
                   else -2 * polarity)
        if self.circuit == "1t1r":
            gate = float(np.median(self.gates[is_set])) if is_set.any() else 1.28
            reset = float(np.median(self.gates[is_reset])) if is_reset.any() else None
            return DCLoop("1t1r", v_set, v_reset, rate, v_gate=gate,
                          reset_gate=None if reset == gate else reset,
                          transistor=dict(self.transistor), v_read=abs(self.v_read))
        icc = np.asarray(self.icc, float)
        return DCLoop("compliance", v_set, v_reset, rate, float(np.median(
            icc[is_set])) if is_set.any() else 100e-6, v_read=abs(self.v_read))

    def summary(self) -> str:
        seqs = self.sequences
        what = (f"gates {', '.join(f'{g:g}' for g in sorted(set(self.gates.tolist())))} V"
                if self.circuit == "1t1r" else "compliance-limited 1R")
        return (f"{len(self.v_pulse)} pulses in {len(seqs)} sequences, {int(self.reads.sum())} "
                f"reads at {self.v_read:g} V; {what}")


def load_pulses(path: str | Path, columns: Sequence[str] | None = None, *,
                v_read: float = 0.2, read_gate: float | None = None, read: str = "cell",
                transistor: dict[str, float] | None = None, start: str = "lrs",
                chain: bool = True, width: float | None = None) -> PulseRecord:
    """A pulse record from a table file: one row per pulse in time order, columns
    ``v_pulse`` (V), ``width`` (s; or ``width`` given for all), ``v_gate`` (V) or
    ``icc`` (A), ``resistance`` (Ω, empty: not read) and optionally ``sequence``; unit
    suffixes on any column (``width_ns``, ``R (kΩ)``, ``icc_uA``); any separator; a
    headerless file with ``columns`` naming its columns."""
    from ..io import read_table

    frame = read_table(path, "pulse record", names=columns)
    found = numeric_columns(frame, NAMES, {
        "v_pulse_V": "voltage", "v_gate_V": "voltage", "width_s": "time",
        "icc_A": "current", "resistance_ohm": "resistance"}, path)
    have = ", ".join(frame.columns)
    for need, what in (("v_pulse_V", "the pulse amplitude (v_pulse, V)"),
                       ("resistance_ohm", "the resistance read after each pulse")):
        if need not in found:
            raise InputError(f"pulse record {path}: no column for {what}; have {have}")
    if "width_s" not in found and width is None:
        raise InputError(f"pulse record {path}: no pulse width column (width, with a unit "
                         f"suffix such as width_ns): give one, or the width (--width); have "
                         f"{have}")
    n = len(frame)
    for need in ("v_pulse_V", *(k for k in ("width_s", "v_gate_V", "icc_A") if k in found)):
        if found[need].isna().any():
            k = int(np.flatnonzero(found[need].isna().to_numpy())[0])
            line = int(frame.attrs.get("first_line", 2)) + k
            raise InputError(f"{path}, line {line}: {need} is empty (only the resistance may "
                             "be left empty, for a pulse that was not read)")
    seq = found.get("sequence", pd.Series(["1"] * n)).to_numpy()
    return PulseRecord(
        sequence=seq,
        v_pulse=found["v_pulse_V"].to_numpy(float),
        width=(found["width_s"].to_numpy(float) if "width_s" in found
               else np.full(n, float(width))),
        resistance=found["resistance_ohm"].to_numpy(float),
        v_gate=found["v_gate_V"].to_numpy(float) if "v_gate_V" in found else None,
        icc=found["icc_A"].to_numpy(float) if "icc_A" in found else None,
        v_read=v_read, read_gate=read_gate, read=read, transistor=dict(transistor or {}),
        start=start, chain=chain, source=str(path))


def write_pulses(record: PulseRecord, path: str | Path) -> Path:
    """The record as a CSV file :func:`load_pulses` reads back (SI units)."""
    from ..io import write_text_atomic

    frame = pd.DataFrame({"sequence": record.sequence, "v_pulse_V": record.v_pulse,
                          "width_s": record.width})
    if record.v_gate is not None:
        frame["v_gate_V"] = record.v_gate
    else:
        frame["icc_A"] = record.icc
    frame["resistance_ohm"] = record.resistance
    return write_text_atomic(path, frame.to_csv(index=False, float_format="%.8g"))

