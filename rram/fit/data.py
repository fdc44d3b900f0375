"""Measured data: I-V sweeps and resistance distributions, loaded strictly.

Every problem is an :class:`~rram.errors.InputError` that names the file, the line (as
an editor counts them, header = line 1) and the problem; nothing is dropped silently.

I-V files are CSV with one row per point.  Columns are found by common names
(``voltage``/``V``/``V_V``/``AV``, ``current``/``I``/``I_A``/``AI``, ``time``/``t``/
``time_s``, ``cycle``/``run``) or given explicitly; a unit suffix in the name
(``V_mV``, ``I_uA``, ``time_ms``, ...) is converted to SI, an unknown one refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine.stimulus import check_compliance as check_stimulus_compliance
from ..engine.stimulus import check_rate
from ..errors import InputError
from ..io import read_table, read_text
from .tables import name_and_unit

ROLES = ("voltage", "current", "time", "cycle")
ALIASES = {
    "voltage": ("voltage", "v", "av", "vcell", "bias", "volt", "volts"),
    "current": ("current", "i", "ai", "icell", "amps"),
    "time": ("time", "t"),
    "cycle": ("cycle", "cyc", "run", "sweep"),
}
UNITS = {
    "voltage": {"": 1.0, "v": 1.0, "mv": 1e-3},
    "current": {"": 1.0, "a": 1.0, "ma": 1e-3, "ua": 1e-6, "na": 1e-9},
    "time": {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6},
    "cycle": {"": 1.0},
}
#: A point beyond this multiple of the compliance is not a compliance-limited sweep.
COMPLIANCE_MARGIN = 1.5
#: Plausibility limits of a single cell's measurement (SI): a larger value is a unit
#: error (µA read as A, mV as V), refused rather than fitted.
MAX_CURRENT_A = 1.0
MAX_VOLTAGE_V = 100.0
#: A read resistance above 1 PΩ is no cell a meter measured (an open circuit, a unit or
#: a typing error); a cycle number beyond 10^12 no record's.
MAX_RESISTANCE_OHM = 1e15
MAX_CYCLE = 10**12
UNIT_NAMES = {"A": "amperes", "V": "volts", "Ohm": "ohms"}
STATES = ("HRS", "LRS")


@dataclass(frozen=True)
class IVCurve:
    """One measured sweep (one cycle of one file): time (s), voltage (V), current (A)."""

    cycle: int
    time: np.ndarray
    voltage: np.ndarray
    current: np.ndarray
    source: str

    @property
    def v_peak(self) -> float:
        """The sweep's extreme voltage (signed)."""
        return float(self.voltage[np.argmax(np.abs(self.voltage))])


def sha256_of(*paths: str | Path) -> str:
    h = hashlib.sha256()
    for p in sorted(str(p) for p in paths):
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def _split_unit(name: str) -> tuple[str, str]:
    """``"I_uA"`` → (``"i"``, ``"ua"``); ``"current (mA)"`` → (``"current"``, ``"ma"``):
    :func:`rram.fit.tables.name_and_unit` lower-cased (an I-V file's units have no
    mega/milli clash)."""
    base, unit = name_and_unit(name)
    return base.lower(), unit.lower()


def _find_column(columns: list[str], role: str, given: str | None, path: Path) -> str | None:
    if given is not None:
        if given not in columns:
            raise InputError(f"{path}: no column {given!r} for the {role} "
                             f"(columns: {', '.join(columns)})")
        return given
    hits = [c for c in columns if c.strip().lower() in ALIASES[role]
            or _split_unit(c)[0] in ALIASES[role] or c.strip().lower() == f"{role}_s"]
    if len(hits) > 1:
        raise InputError(f"{path}: columns {', '.join(hits)} could all be the {role}; "
                         f"name one with --{role}-column")
    return hits[0] if hits else None


def _scale(column: str, role: str, path: Path) -> float:
    base, unit = _split_unit(column)
    if base not in ALIASES[role] and not column.strip().lower().startswith(role):
        return 1.0  # explicitly named column: SI assumed
    units = UNITS[role]
    if unit not in units:
        raise InputError(f"{path}: column {column!r}: unknown {role} unit {unit!r} "
                         f"(valid: {', '.join(u for u in units if u) or 'none'})")
    return units[unit]


def where(frame: pd.DataFrame, row: int) -> str:
    """Where row ``row`` of a table read by :func:`rram.io.read_table` is in its file
    (``line 12``; a reshaped table's own ``_where``: ``line 3, value 17``)."""
    if "_where" in frame.columns:
        return str(frame["_where"].iloc[row])
    return f"line {int(frame.attrs.get('first_line', 2)) + row}"


def numeric_column(frame: pd.DataFrame, column: str, path: Path,
                   allow_missing: bool = False) -> np.ndarray:
    """The column as floats; a cell that is not a finite number is an error naming the
    line, except, with ``allow_missing``, an empty (or NA) cell, which gives NaN."""
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values)
    if allow_missing:
        bad &= ~frame[column].isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{path}, {where(frame, i)}: column {column!r}: "
                         f"{frame[column].iloc[i]!r} is not a finite number")
    return values


def integer_column(frame: pd.DataFrame, column: str, path: Path) -> np.ndarray:
    """The column as ints; a fraction (``0.5``) is an error, not truncated."""
    values = numeric_column(frame, column, path)
    bad = values != np.round(values)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{path}, {where(frame, i)}: column {column!r}: "
                         f"{frame[column].iloc[i]!r} is not an integer")
    return values.astype(int)


def check_magnitude(values: np.ndarray, column: str, path: Path, quantity: str,
                    unit: str, limit: float, frame: pd.DataFrame | None = None) -> None:
    """Refuse a column whose largest magnitude (SI) exceeds ``limit``: the sign of a
    unit error, which a fit would happily reproduce."""
    big = np.abs(values) > limit  # NaN (not measured) is not big
    if not big.any():
        return
    k = int(np.argmax(np.where(big, np.abs(values), 0.0)))
    at = where(frame, k) if frame is not None else f"line {k + 2}"
    raise InputError(f"{path}, {at}: {quantity} column {column!r} peaks at "
                     f"{abs(values[k]):.3g} {unit}; expected {UNIT_NAMES[unit]} below "
                     f"{limit:g} {unit} "
                     "— is it in another unit? (a unit suffix converts it, e.g. "
                     f"{ {'A': 'I_uA, I_mA', 'V': 'V_mV'}.get(unit, 'R_kohm')})")


def check_compliance(value: float, what: str = "compliance") -> float:
    """A compliance current (A): the engine's one check (:data:`rram.engine.stimulus.
    COMPLIANCE_RANGE`), for measured data as for simulations."""
    return check_stimulus_compliance(value, what)


def _times_of_sweep(v: np.ndarray, rate: float) -> np.ndarray:
    """Times (s) of a sweep's points at ``rate`` (V/s): each point its voltage step
    over the rate, one that repeats the last voltage the median step's time."""
    steps = np.abs(np.diff(v))
    moving = steps[steps > 0]
    hold = float(np.median(moving)) if moving.size else 1.0
    return np.r_[0.0, np.cumsum(np.where(steps > 0, steps, hold))] / rate


def load_iv(path: str | Path, *, voltage: str | None = None, current: str | None = None,
            time: str | None = None, cycle: str | None = None,
            compliance: float | None = None, cycles: set[int] | None = None,
            columns: Sequence[str] | None = None,
            sweep_rate: float | None = None) -> list[IVCurve]:
    """The sweeps of an I-V CSV, one :class:`IVCurve` per cycle and polarity (in file
    order: a cycle that holds a whole loop gives its two sweeps).

    Each sweep must leave zero and come back (both branches, ≥ 3 points each); with
    ``compliance`` (A) no point may exceed it by more than :data:`COMPLIANCE_MARGIN`.
    ``cycles`` keeps only those cycle numbers (an error if one is missing).  A headerless
    file needs ``columns``, its column names (e.g. ``time_s, voltage_V, current_uA``).

    A file without a time column needs ``sweep_rate`` (V/s): the rate sets the switching
    kinetics (a SET barrier fitted at 1 s a point instead of 1 kV/s comes out ~0.7 eV
    high), so it is never assumed.  Each point then lasts its voltage step over the rate,
    a point that repeats the last voltage one median step."""
    path = Path(path)
    if compliance is not None:
        check_compliance(compliance)
    if sweep_rate is not None:
        check_rate(sweep_rate, "sweep rate")
    frame = read_table(path, "I-V data", names=columns)
    offset = int(frame.attrs.get("first_line", 2)) - 2  # line of row k: k + 2 + offset
    columns = [str(c) for c in frame.columns]
    found = {role: _find_column(columns, role, given, path)
             for role, given in zip(ROLES, (voltage, current, time, cycle), strict=True)}
    for role in ("voltage", "current"):
        if found[role] is None:
            raise InputError(f"{path}: no {role} column (looked for "
                             f"{', '.join(ALIASES[role])}, with an optional unit suffix; "
                             f"columns: {', '.join(columns)})")
    v = numeric_column(frame, found["voltage"], path) \
        * _scale(found["voltage"], "voltage", path)
    i = numeric_column(frame, found["current"], path) \
        * _scale(found["current"], "current", path)
    check_magnitude(v, found["voltage"], path, "voltage", "V", MAX_VOLTAGE_V, frame)
    check_magnitude(i, found["current"], path, "current", "A", MAX_CURRENT_A, frame)
    if found["time"]:
        if sweep_rate is not None:
            raise InputError(f"{path}: has a time column ({found['time']}), so the sweep "
                             "rate comes from it: drop --sweep-rate")
        t = numeric_column(frame, found["time"], path) * _scale(found["time"], "time", path)
    elif sweep_rate is None:
        raise InputError(f"{path}: no time column (looked for {', '.join(ALIASES['time'])}, "
                         f"with an optional unit suffix; columns: {', '.join(columns)}): "
                         "the sweep rate sets the switching kinetics, so give it "
                         "(--sweep-rate V/s) or a time column")
    else:
        t = _times_of_sweep(v, sweep_rate)
    c = integer_column(frame, found["cycle"], path) if found["cycle"] \
        else np.ones(len(frame), int)
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    ends = np.r_[starts[1:], len(c)]
    seen: set[int] = set()
    curves = []
    for a, b in zip(starts, ends, strict=True):
        n = int(c[a])
        if n in seen:
            raise InputError(f"{path}, {where(frame, a)}: cycle {n} appears in two separate "
                             "blocks")
        seen.add(n)
        if cycles is not None and n not in cycles:
            continue
        for lo, hi in _sweeps(v[a:b]):
            curves.append(_curve(path, n, a + lo + offset, t[a + lo:a + hi], v[a + lo:a + hi],
                                 i[a + lo:a + hi], compliance))
    if cycles is not None and (missing := sorted(cycles - seen)):
        raise InputError(f"{path}: cycle(s) {', '.join(map(str, missing))} not in the file "
                         f"(it has {min(seen)}..{max(seen)}, {len(seen)} cycles)")
    return curves


def _sweeps(v: np.ndarray) -> list[tuple[int, int]]:
    """Index ranges of the single-polarity sweeps of one cycle (a full loop
    0 → −V → 0 → +V → 0 in one cycle is two sweeps; a point at 0 V joins both)."""
    sign = np.sign(v)
    nz = np.flatnonzero(sign)
    if nz.size == 0:
        return [(0, len(v))]
    changes = [k for k in range(1, nz.size) if sign[nz[k]] != sign[nz[k - 1]]]
    bounds, start = [], 0
    for k in changes:
        end = nz[k - 1] + 1  # past the last point of the old polarity
        while end < nz[k] and v[end] == 0:
            end += 1
        bounds.append((start, end))
        start = nz[k - 1] + 1
    bounds.append((start, len(v)))
    return bounds


def _curve(path: Path, n: int, a: int, t, v, i, compliance) -> IVCurve:
    line = a + 2
    if np.any(np.diff(t) <= 0):
        k = int(np.argmax(np.diff(t) <= 0)) + 1
        raise InputError(f"{path}, line {line + k}: time does not increase (cycle {n})")
    top = int(np.argmax(np.abs(v)))
    if top < 2 or len(v) - 1 - top < 2 or abs(v[top]) <= 0:
        raise InputError(f"{path}, line {line}: cycle {n} is not a sweep with both branches "
                         f"(0 → {v[top]:g} V → 0 needs ≥ 3 points on each side of the peak)")
    if compliance is not None:
        over = np.abs(i) > COMPLIANCE_MARGIN * compliance
        if over.any():
            k = int(np.argmax(over))
            raise InputError(f"{path}, line {line + k}: |I| = {abs(i[k]):.4g} A exceeds the "
                             f"compliance {compliance:g} A by more than "
                             f"{COMPLIANCE_MARGIN:g}x (cycle {n}): wrong units or compliance?")
    return IVCurve(n, t - t[0], v, i, f"{path}:{line}")


def load_distribution(path: str | Path, columns: Sequence[str] | None = None,
                      layout: str = "long") -> pd.DataFrame:
    """A resistance record as rows of ``device, cycle, state (HRS|LRS),
    resistance_ohm`` (plus ``v_set_V``/``v_reset_V`` where the file has them; an empty
    cell there is "not measured", NaN).  The file may hold state rows, cycle rows
    (``r_lrs``, ``r_hrs``) or, with ``layout="wide:STATES[:UNIT]"``, one row per device
    (:mod:`rram.fit.tables`), with unit suffixes on any column, and be headerless with
    ``columns`` naming its columns.  ``device`` is a label (any non-empty text),
    ``cycle`` an integer.  The frame's ``attrs["source"]`` is the path."""
    from .tables import long_table

    path = Path(path)
    frame = long_table(read_table(path, "distribution data", names=columns), path, layout)
    device = frame["device"].fillna("").astype(str).str.strip()
    if (device == "").any():
        k = int(np.argmax((device == "").to_numpy()))
        raise InputError(f"{path}, {where(frame, k)}: column 'device' is empty (a device "
                         "label is needed on every row)")
    out = pd.DataFrame({"device": device})
    cycle = numeric_column(frame, "cycle", path)
    bad = ~((cycle >= 0) & (cycle <= MAX_CYCLE))
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{path}, {where(frame, k)}: cycle {frame['cycle'].iloc[k]!r} must "
                         f"be a whole number within [0, {MAX_CYCLE:g}]")
    out["cycle"] = integer_column(frame, "cycle", path)
    state = frame["state"].astype(str).str.strip().str.upper()
    bad = ~state.isin(STATES)
    if bad.any():
        k = int(np.argmax(bad.to_numpy()))
        raise InputError(f"{path}, {where(frame, k)}: state {frame['state'].iloc[k]!r} "
                         f"(valid: {', '.join(STATES)})")
    out["state"] = state
    r = numeric_column(frame, "resistance_ohm", path)
    if np.any(r <= 0):
        k = int(np.argmax(r <= 0))
        raise InputError(f"{path}, {where(frame, k)}: resistance {r[k]:g} Ohm must be > 0")
    check_magnitude(r, "resistance_ohm", path, "resistance", "Ohm", MAX_RESISTANCE_OHM,
                    frame)
    out["resistance_ohm"] = r
    for col in ("v_set_V", "v_reset_V"):
        if col in frame.columns:
            x = numeric_column(frame, col, path, allow_missing=True)
            check_magnitude(x, col, path, "voltage", "V", MAX_VOLTAGE_V, frame)
            out[col] = x
    twice = out.duplicated(["device", "cycle", "state"]).to_numpy()
    if twice.any():
        k = int(np.argmax(twice))
        raise InputError(f"{path}, {where(frame, k)}: device {out['device'].iloc[k]!r}, "
                         f"cycle {out['cycle'].iloc[k]}, {out['state'].iloc[k]} is given "
                         "twice (one row per device, cycle and state)")
    out = switching_of(out)
    out.attrs["source"] = str(path)
    return out


def switching_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The measured cycles judged by the Monte Carlo's rule (:func:`rram.events.
    switching_rule`): a SET switched if the HRS on its cycle's row is at least
    :data:`rram.metrics.SWITCH_RATIO` times the LRS it left, a RESET if the next cycle's
    HRS is that much above the LRS.  A voltage of an operation that did not switch is
    the sweep's end, no switching voltage: it becomes NaN, and ``reason`` names the
    operation as the Monte Carlo does (``no_set``, ``no_reset``, joined by ``+``).  Where
    a read is missing the operation counts as switched."""
    from ..metrics import switching_rule

    out = frame.copy()
    # one row per device, cycle and state (load_distribution refuses repeats)
    cycles = out.set_index(["device", "cycle", "state"])["resistance_ohm"].unstack()
    lrs = cycles.get("LRS", pd.Series(np.nan, index=cycles.index))
    hrs = cycles.get("HRS", pd.Series(np.nan, index=cycles.index))
    key = pd.MultiIndex.from_arrays([out["device"], out["cycle"]])
    after = pd.MultiIndex.from_arrays([out["device"], out["cycle"] + 1])
    r_lrs = lrs.reindex(key).to_numpy(float)
    r_before = hrs.reindex(key).to_numpy(float)
    r_after = hrs.reindex(after).to_numpy(float)
    unknown_set, unknown_reset = ~np.isfinite(r_before), ~np.isfinite(r_after)
    nan = np.full(len(out), np.nan)
    v_set, v_reset, reason = switching_rule(
        out.get("v_set_V", nan), out.get("v_reset_V", nan),
        np.where(unknown_set, np.inf, r_before), np.where(np.isfinite(r_lrs), r_lrs, 0.0),
        np.where(unknown_reset, np.inf, r_after))
    for col, v in (("v_set_V", v_set), ("v_reset_V", v_reset)):
        if col in out.columns:
            out[col] = v
    out["reason"] = reason
    return out


#: Where the TUD summary's R_HRS of a cycle comes from (:func:`load_tud_summary`).
HRS_READS = ("after-reset", "before-set")


def load_tud_summary(path: str | Path, v_read: float = 0.2, hrs_read: str = "after-reset"
                     ) -> pd.DataFrame:
    """The Keithley per-cycle extraction of the TUD device (see the data README):
    one row per cycle with ``cycle, v_set_V, v_reset_V, r_lrs_ohm, r_hrs_ohm`` (read at
    ±``v_read``; V_set negative as measured, V_reset positive).

    The HRS a cycle's SET starts from is read twice: at +``v_read`` right after the
    previous cycle's RESET (``hrs_read="after-reset"``, the default: the read the
    Monte Carlo makes, in the RESET polarity right after the RESET) and at −``v_read``
    at the start of the SET (``"before-set"``).  The second is 1.38x the first (median
    over the 1000 cycles; interquartile 1.18–1.64; Spearman 0.93, so the same state),
    while the two reads of the LRS agree to 1 %: HRS relaxation between the reads or a
    rectifying HRS, which the model has neither of.  Cycle 1 has no RESET before it:
    its R_HRS is NaN with ``"after-reset"``."""
    if hrs_read not in HRS_READS:
        raise InputError(f"hrs_read {hrs_read!r}: valid are {', '.join(HRS_READS)}")
    path = Path(path)
    rows = []
    for k, raw in enumerate(read_text(path, "TUD summary").splitlines()[2:], start=3):
        f = raw.split("\t")
        if not raw.strip():
            continue
        try:
            cyc, ilrs, ihrs, vset = int(f[0]), float(f[1]), float(f[2]), float(f[3])
            ihrs_after_reset, vreset = float(f[15]), float(f[17])
        except (ValueError, IndexError):
            raise InputError(f"{path}, line {k}: not a summary row (cycle, SET_negative "
                             "ILRS/IHRS/VSET ... RESET_positive IHRS ... VRESET)") from None
        if min(ilrs, ihrs, ihrs_after_reset) <= 0:
            raise InputError(f"{path}, line {k}: read currents must be > 0")
        rows.append((cyc, -abs(vset), vreset, v_read / ilrs, v_read / ihrs,
                     v_read / ihrs_after_reset))
    if not rows:
        raise InputError(f"{path}: no data rows")
    frame = pd.DataFrame(rows, columns=["cycle", "v_set_V", "v_reset_V", "r_lrs_ohm",
                                        "r_hrs_before_set", "r_hrs_after_reset"])
    if hrs_read == "before-set":
        frame["r_hrs_ohm"] = frame["r_hrs_before_set"]
    else:  # the read after the RESET that left the HRS this cycle's SET starts from
        previous = frame.set_index("cycle")["r_hrs_after_reset"]
        frame["r_hrs_ohm"] = frame["cycle"].sub(1).map(previous)
    return frame[["cycle", "v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm"]]


def summary_to_distribution(summary: pd.DataFrame, device: str = "1") -> pd.DataFrame:
    """Per-cycle metrics as the distribution format (two rows per cycle; a resistance
    not measured, NaN, leaves its row out)."""
    parts = []
    for state, col in (("LRS", "r_lrs_ohm"), ("HRS", "r_hrs_ohm")):
        parts.append(pd.DataFrame({"device": device, "cycle": summary["cycle"],
                                   "state": state, "resistance_ohm": summary[col],
                                   "v_set_V": summary["v_set_V"],
                                   "v_reset_V": summary["v_reset_V"]}))
    out = pd.concat(parts, ignore_index=True).dropna(subset=["resistance_ohm"])
    return out.sort_values(["cycle", "state"], kind="stable").reset_index(drop=True)
