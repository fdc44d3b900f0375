"""Read records: cells held at a state and read again and again (read noise, RTN).

A read record is what a tester gives for read noise: per cell, its resistance at each of
many reads at one read voltage, with the read times (or the read index and the interval
between reads).  Loaders take the shapes users keep it in (:func:`load_reads`):

- **long**: a row per read, columns ``cell`` (or ``device``), ``time`` or ``read`` (the
  index), and ``resistance`` or ``current`` (with the read voltage), each with an
  optional unit suffix (``time_ms``, ``R (kΩ)``, ``i_read_uA``);
- **wide** (``layout="wide"``, ``wide:kohm`` for values not in ohms): a row per cell, its
  label in a first column named ``cell`` or ``device`` (else the cells are numbered),
  then one resistance per read, the reads ``interval`` apart.

Any separator; a headerless long file with ``columns`` naming its columns.
:func:`rram.fit.noise_fit.synthetic_reads` draws a record from a card's own traps, for
round trips and examples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .tables import numeric_columns, unit_scale

#: What each column of a long read record is called in a file (before a unit suffix).
NAMES = {
    "cell": ("cell", "device", "id"),
    "time_s": ("time", "t", "t_read"),
    "read": ("read", "read_index", "index", "n"),
    "resistance_ohm": ("resistance", "r", "res", "r_read"),
    "current_A": ("current", "i", "i_read"),
}
#: Fewest reads of a cell whose spread is measured.
MIN_READS = 3


@dataclass(frozen=True)
class ReadRecord:
    """Reads of cells held at their states: ``cell`` labels, read ``time_s`` (s) and
    ``resistance_ohm`` (Ω) per read, all at ``v_read`` (V)."""

    cell: np.ndarray
    time_s: np.ndarray
    resistance_ohm: np.ndarray
    v_read: float
    source: str = ""

    def __post_init__(self) -> None:
        cell = np.asarray(self.cell).astype(str)
        t = np.asarray(self.time_s, float)
        r = np.asarray(self.resistance_ohm, float)
        if not (cell.shape == t.shape == r.shape) or cell.ndim != 1:
            raise InputError("a read record's cell, time and resistance columns must be "
                             "1-D and of one length")
        if not (math.isfinite(self.v_read) and 0 < abs(self.v_read) <= 2):
            raise InputError(f"read voltage {self.v_read!r} V: valid is 0 < |v| <= 2 V")
        bad = ~(np.isfinite(r) & (r > 0))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(f"row {k + 1} of the record (cell {str(cell[k])!r}): "
                             f"resistance {r[k]:g} Ω "
                             "must be finite and positive")
        if not np.all(np.isfinite(t)):
            raise InputError("every read needs a finite time (s)")
        for label in map(str, dict.fromkeys(cell)):
            mine = cell == label
            if mine.sum() < MIN_READS:
                raise InputError(f"cell {label!r} has {int(mine.sum())} reads: a spread "
                                 f"needs at least {MIN_READS}")
            if np.any(np.diff(t[mine]) <= 0):
                raise InputError(f"cell {label!r}: read times must increase, in file order")
        for name, v in (("cell", cell), ("time_s", t), ("resistance_ohm", r)):
            v.setflags(write=False)
            object.__setattr__(self, name, v)

    @property
    def cells(self) -> list[str]:
        """Cell labels in the order of the record."""
        return [str(c) for c in dict.fromkeys(self.cell)]

    def of(self, label: str) -> tuple[np.ndarray, np.ndarray]:
        """(read times, resistances) of one cell."""
        mine = self.cell == label
        return self.time_s[mine], self.resistance_ohm[mine]

    def summary(self) -> str:
        n = np.array([np.sum(self.cell == c) for c in self.cells])
        return (f"{len(self.cells)} cells, {n.min()}-{n.max()} reads each at "
                f"{self.v_read:g} V, R {self.resistance_ohm.min():.3g}-"
                f"{self.resistance_ohm.max():.3g} Ω")

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"cell": self.cell, "time_s": self.time_s,
                             "resistance_ohm": self.resistance_ohm})


def _interval(interval: float | None, path) -> float:
    if interval is None:
        raise InputError(f"read record {path}: no read times (a time column): give the "
                         "interval between reads (--interval, s)")
    if not (math.isfinite(interval) and interval > 0):
        raise InputError(f"interval {interval!r} s between reads must be positive")
    return float(interval)


def load_reads(path: str | Path, columns: Sequence[str] | None = None, *,
               v_read: float = 0.1, interval: float | None = None,
               layout: str = "long") -> ReadRecord:
    """A read record from a table file (see the module docstring)."""
    from ..io import read_table

    frame = read_table(path, "read record", names=columns)
    if layout.split(":")[0] == "wide":
        return _wide(frame, path, layout, v_read, interval)
    if layout != "long":
        raise InputError(f"layout {layout!r}: valid are long, wide, wide:UNIT")
    found = numeric_columns(frame, NAMES, {"time_s": "time", "read": "count",
                                           "resistance_ohm": "resistance",
                                           "current_A": "current"}, path)
    have = ", ".join(frame.columns)
    if "resistance_ohm" in found:
        r = found["resistance_ohm"].to_numpy(float)
    elif "current_A" in found:
        r = v_read / found["current_A"].to_numpy(float)
    else:
        raise InputError(f"read record {path}: no column for the resistance (or current) "
                         f"of each read; have {have}")
    n = len(frame)
    cell = found["cell"].to_numpy() if "cell" in found else np.full(n, "1")
    if "time_s" in found:
        t = found["time_s"].to_numpy(float)
    elif "read" in found:
        t = found["read"].to_numpy(float) * _interval(interval, path)
    else:
        per_cell = pd.Series(cell).groupby(cell).cumcount().to_numpy()
        t = per_cell * _interval(interval, path)
    return ReadRecord(cell, t, r, v_read, str(path))


def _wide(frame: pd.DataFrame, path, layout: str, v_read: float,
          interval: float | None) -> ReadRecord:
    unit = layout.split(":", 1)[1] if ":" in layout else ""
    scale = unit_scale(unit, layout, "resistance", path)
    first = frame.columns[0]
    labelled = first.strip().lower() in NAMES["cell"]
    labels = (frame[first].fillna("").astype(str).str.strip().to_numpy() if labelled
              else np.array([str(k + 1) for k in range(len(frame))]))
    values = frame.iloc[:, 1:] if labelled else frame
    numbers = values.apply(pd.to_numeric, errors="coerce")
    bad = numbers.isna() & values.notna()
    if bad.to_numpy().any():
        i, j = (int(k[0]) for k in np.nonzero(bad.to_numpy()))
        line = int(frame.attrs.get("first_line", 2)) + i
        raise InputError(f"{path}, line {line}: {values.iloc[i, j]!r} is not a resistance")
    dt = _interval(interval, path)
    cells, times, rs = [], [], []
    for label, row in zip(labels, numbers.to_numpy(float), strict=True):
        keep = np.isfinite(row)
        cells += [label] * int(keep.sum())
        times += list(np.flatnonzero(keep) * dt)
        rs += list(row[keep] * scale)
    return ReadRecord(np.array(cells), np.array(times), np.array(rs), v_read, str(path))


def write_reads(record: ReadRecord, path: str | Path) -> Path:
    """The record as a long CSV file :func:`load_reads` reads back (SI units)."""
    from ..io import write_text_atomic

    return write_text_atomic(path, record.frame().to_csv(index=False, float_format="%.9g"))


__all__ = ["MIN_READS", "NAMES", "ReadRecord", "load_reads", "write_reads"]
