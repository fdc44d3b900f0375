"""Resistance records in the shapes users keep them, as one long table.

:func:`rram.fit.data.load_distribution` reads any of these into rows of ``device,
cycle, state, resistance_ohm[, v_set_V, v_reset_V]``, each with the place in the file
it came from (``_where``, for messages):

- **state rows** (long): ``device, cycle, state, resistance`` — one row per read;
- **cycle rows**: ``device, cycle, r_lrs, r_hrs[, v_set, v_reset]`` — one row per
  cycle: the read after its SET and the read after its RESET (the shape ``rram mc``
  writes);
- **wide** (``layout="wide:LRS,HRS"``): one row per device, its label in a first column
  named ``device`` (else the devices are numbered by row), then one value per cycle and
  state, the states in the order given (``wide:LRS,HRS``: cycle 1's LRS, cycle 1's HRS,
  cycle 2's LRS, ...; ``wide:HRS,LRS`` when each cycle's HRS is read before its SET;
  ``wide:HRS`` a file of HRS reads alone), with ``:UNIT`` for values not in ohms
  (``wide:LRS,HRS:kohm``).

In the long table a cycle's HRS row is the state that cycle's SET starts from
(:func:`rram.fit.data.switching_of`): an HRS read after a cycle's LRS (cycle rows,
``wide:LRS,HRS``) is moved to the next cycle.

Every column may carry a unit suffix: ``resistance_kohm``, ``R (MΩ)``, ``r_lrs_ohm``,
``v_set_mV``.  Files may be comma, semicolon, tab or blank separated, and headerless
with the column names given (:func:`rram.io.read_table`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from ..errors import InputError

#: Resistance units.  An ``M`` is mega and an ``m`` milli: the case of that one letter
#: counts; a milliohm is refused (no RRAM cell reads it: a megohm typed in lower case).
RESISTANCE_UNITS = {"": 1.0, "ohm": 1.0, "ohms": 1.0, "Ω": 1.0, "kohm": 1e3, "kΩ": 1e3,
                    "Mohm": 1e6, "MΩ": 1e6, "megohm": 1e6, "Gohm": 1e9, "GΩ": 1e9}
VOLTAGE_UNITS = {"": 1.0, "v": 1.0, "mv": 1e-3}
TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6,
              "ns": 1e-9, "ps": 1e-12}
CURRENT_UNITS = {"": 1.0, "a": 1.0, "ma": 1e-3, "ua": 1e-6, "µa": 1e-6, "μa": 1e-6,
                 "na": 1e-9}
#: The unit table of each quantity but resistance (whose m/M case counts), and the
#: units a message lists.
_UNITS = {"voltage": (VOLTAGE_UNITS, "V, mV"), "time": (TIME_UNITS, "s, ms, us, ns, ps"),
          "current": (CURRENT_UNITS, "A, mA, uA, nA"), "count": ({"": 1.0}, "none")}
#: What each column of the long table is called in a file (before any unit suffix).
NAMES = {
    "resistance_ohm": ("resistance", "r", "res"),
    "r_lrs_ohm": ("r_lrs", "lrs", "rlrs", "r_on", "ron"),
    "r_hrs_ohm": ("r_hrs", "hrs", "rhrs", "r_off", "roff"),
    "v_set_V": ("v_set", "vset"),
    "v_reset_V": ("v_reset", "vreset"),
}
STATES = ("LRS", "HRS")


def name_and_unit(name: str, aliases: Collection[str] = ()) -> tuple[str, str]:
    """(base, unit) of a column name, the case kept (mega against milli): ``"r_lrs_kohm"``
    → (``"r_lrs"``, ``"kohm"``), ``"R (MΩ)"`` → (``"R"``, ``"MΩ"``), ``"I_uA"`` → (``"I"``,
    ``"uA"``); a name that is one of ``aliases`` as a whole has no unit (``"r_lrs"``)."""
    s = name.strip()
    m = re.fullmatch(r"(.+?)\s*[\[(]\s*(\S+?)\s*[\])]", s)
    if m:
        return m.group(1).strip(), m.group(2)
    if s.lower() in aliases or "_" not in s:
        return s, ""
    base, unit = s.rsplit("_", 1)
    return base, unit


def split_unit(name: str, aliases: Collection[str]) -> str | None:
    """The unit of a column ``name`` that is one of ``aliases`` with an optional unit
    suffix (``"r_lrs_kohm"`` → ``"kohm"``, ``"R (MΩ)"`` → ``"MΩ"``, ``"r_lrs"`` → ``""``),
    else None."""
    base, unit = name_and_unit(name, aliases)
    return unit if base.lower() in aliases else None


def unit_scale(unit: str, column: str, quantity: str, path) -> float:
    """SI factor of ``unit`` for a resistance, voltage, time or current ``column``."""
    if quantity == "resistance":
        table = RESISTANCE_UNITS
        key = unit if unit in table else {u.lower(): u for u in table
                                          if u[:1] not in "mM"}.get(unit.lower())
        if key is None:
            hint = " (a milliohm? write Mohm for megohms)" if unit.lower() in (
                "mohm", "mω") else ""
            raise InputError(f"{path}: column {column!r}: unknown resistance unit "
                             f"{unit!r}{hint}; valid: ohm, kohm, Mohm, Gohm (or Ω, kΩ, MΩ)")
        return table[key]
    table, valid = _UNITS[quantity]
    key = unit if unit in table else unit.lower()
    if key not in table:
        raise InputError(f"{path}: column {column!r}: unknown {quantity} unit {unit!r}; "
                         f"valid: {valid}")
    return table[key]


def numeric_columns(frame: pd.DataFrame, names: Mapping[str, Collection[str]],
                    quantities: Mapping[str, str], path) -> dict[str, pd.Series]:
    """Each target of ``names`` (target -> aliases) found among ``frame``'s columns, an
    alias with an optional unit suffix: its values in SI units (``quantities``: target
    -> resistance, voltage, time, current or count), or, for a target without a quantity, its
    text stripped.  Refuses two columns for one target and a cell that is not a number
    (naming its line)."""
    found: dict[str, pd.Series] = {}
    taken: set[str] = set()
    for target, aliases in names.items():
        hits = [(c, u) for c in frame.columns
                if c not in taken and (u := split_unit(c, aliases)) is not None]
        if len(hits) > 1:
            raise InputError(f"{path}: columns {', '.join(c for c, _ in hits)} could all be "
                             f"{target}; keep one")
        if not hits:
            continue
        c, u = hits[0]
        taken.add(c)
        if target not in quantities:
            found[target] = frame[c].fillna("").astype(str).str.strip()
            continue
        numbers = pd.to_numeric(frame[c], errors="coerce")
        bad = numbers.isna() & frame[c].notna()
        if bad.any():
            k = int(np.flatnonzero(bad.to_numpy())[0])
            line = int(frame.attrs.get("first_line", 2)) + k
            raise InputError(f"{path}, line {line}: column {c!r}: {frame[c].iloc[k]!r} is "
                             "not a number")
        found[target] = numbers * unit_scale(u, c, quantities[target], path)
    return found


def find_columns(frame: pd.DataFrame, path) -> dict[str, tuple[str, float]]:
    """Long-table column -> (the file's column, its SI factor), for those present."""
    found: dict[str, tuple[str, float]] = {}
    taken: set[str] = set()
    # the specific names first: ``r_lrs_kohm`` is R_LRS, not a resistance in "lrs" units
    for target in ("r_lrs_ohm", "r_hrs_ohm", "v_set_V", "v_reset_V", "resistance_ohm"):
        hits = [(c, u) for c in frame.columns
                if c not in taken and (u := split_unit(c, NAMES[target])) is not None]
        if len(hits) > 1:
            raise InputError(f"{path}: columns {', '.join(c for c, _ in hits)} could all be "
                             f"{target}; keep one")
        if hits:
            c, u = hits[0]
            quantity = "voltage" if target.startswith("v_") else "resistance"
            found[target] = (c, unit_scale(u, c, quantity, path))
            taken.add(c)
    return found


def _located(frame: pd.DataFrame) -> pd.Series:
    first = int(frame.attrs.get("first_line", 2))
    return pd.Series([f"line {first + k}" for k in range(len(frame))], index=frame.index)


def long_table(frame: pd.DataFrame, path, layout: str = "long") -> pd.DataFrame:
    """``frame`` (strings, as read) as rows of device, cycle, state and the value
    columns, in the file's units converted to SI (still strings where a cell is not a
    number: the loader's checks name it), with ``_where``."""
    if layout.startswith("wide"):
        return _from_wide(frame, path, layout)
    if layout != "long":
        raise InputError(f"layout {layout!r}: valid are long and wide:STATES[:UNIT] "
                         "(e.g. wide:LRS,HRS or wide:LRS,HRS:kohm)")
    for need in ("device", "cycle"):
        if need not in frame.columns:
            raise InputError(f"distribution data {path}: missing column {need!r} (have "
                             f"{', '.join(frame.columns)}); a table of one row per device "
                             "needs --layout wide:STATES")
    found = find_columns(frame, path)
    where = _located(frame)
    keep = {"device": frame["device"], "cycle": frame["cycle"], "_where": where}
    volts = {t: _scaled(frame[c], f) for t, (c, f) in found.items() if t.startswith("v_")}
    if "state" in frame.columns:
        if "resistance_ohm" not in found:
            raise InputError(f"distribution data {path}: no resistance column (looked for "
                             "resistance, r or res with an optional unit suffix such as "
                             f"resistance_kohm; have {', '.join(frame.columns)})")
        c, f = found["resistance_ohm"]
        return pd.DataFrame({**keep, "state": frame["state"],
                             "resistance_ohm": _scaled(frame[c], f), **volts})
    per_state = [t for t in ("r_lrs_ohm", "r_hrs_ohm") if t in found]
    if not per_state:
        what = ("missing column 'state' (LRS or HRS: the state each resistance was read "
                "in)" if "resistance_ohm" in found else "no resistance column")
        raise InputError(f"distribution data {path}: {what}; expected state rows (device, "
                         "cycle, state, resistance_ohm) or cycle rows (device, cycle, "
                         f"r_lrs, r_hrs); have {', '.join(frame.columns)}")
    parts = []
    for t in per_state:
        c, f = found[t]
        parts.append(pd.DataFrame({**keep, "state": t[2:5].upper(),
                                   "resistance_ohm": _scaled(frame[c], f), **volts}))
    out = pd.concat(parts, ignore_index=True)
    # an empty cell of a cycle row is a read not taken, not a row to check
    out = out[out["resistance_ohm"].notna()].reset_index(drop=True)
    return _after_reset(out, path, next_cycle="r_lrs_ohm" in found)


def _after_reset(rows: pd.DataFrame, path, next_cycle: bool) -> pd.DataFrame:
    """With ``next_cycle``, move each HRS read to the next cycle's rows: a cycle's
    reads in time order are its SET's LRS, then its RESET's HRS, which is the state the
    next cycle's SET starts from (the long table's HRS row of a cycle, as
    :func:`rram.fit.data.switching_of` judges it).  The voltages stay on their cycle."""
    if not next_cycle:
        return rows
    hrs = rows["state"] == "HRS"
    cycle = pd.to_numeric(rows.loc[hrs, "cycle"], errors="coerce")
    bad = ~(cycle.notna() & (cycle == cycle.round()))
    if bad.any():
        k = bad.idxmax()
        raise InputError(f"{path}, {rows.at[k, '_where']}: cycle {rows.at[k, 'cycle']!r} "
                         "is not a whole number")
    rows = rows.copy()
    rows.loc[hrs, "cycle"] = (cycle.astype("int64") + 1).astype(str)
    for v in ("v_set_V", "v_reset_V"):
        if v in rows.columns:
            rows.loc[hrs, v] = np.nan
    return rows


def _scaled(column: pd.Series, factor: float) -> pd.Series:
    if factor == 1.0:
        return column
    numbers = pd.to_numeric(column, errors="coerce")
    # a cell that is not a number stays as written, for the loader to name
    return column.where(numbers.isna(), numbers * factor)


def _from_wide(frame: pd.DataFrame, path, layout: str) -> pd.DataFrame:
    parts = layout.split(":")
    if len(parts) not in (2, 3) or parts[0] != "wide":
        raise InputError(f"layout {layout!r}: expected wide:STATES[:UNIT], e.g. "
                         "wide:LRS,HRS or wide:LRS,HRS:kohm")
    states = [s.strip().upper() for s in parts[1].split(",")]
    if not states or any(s not in STATES for s in states) or len(set(states)) != len(states):
        raise InputError(f"layout {layout!r}: the states are LRS and/or HRS, each once, in "
                         "the order a cycle's values come")
    factor = unit_scale(parts[2] if len(parts) == 3 else "", "wide values", "resistance",
                        path)
    columns = list(frame.columns)
    labelled = columns[0].strip().lower() == "device"
    values = columns[1:] if labelled else columns
    if not values or len(values) % len(states):
        raise InputError(f"distribution data {path}: {len(values)} value columns are not a "
                         f"whole number of cycles of {len(states)} state(s) "
                         f"({', '.join(states)})")
    devices = (frame[columns[0]] if labelled
               else pd.Series([str(k + 1) for k in range(len(frame))], index=frame.index))
    first = int(frame.attrs.get("first_line", 2))
    rows = []
    for j, col in enumerate(values):
        cycle, state = j // len(states) + 1, states[j % len(states)]
        rows.append(pd.DataFrame({
            "device": devices.to_numpy(), "cycle": str(cycle), "state": state,
            "resistance_ohm": _scaled(frame[col], factor).to_numpy(),
            "_where": [f"line {first + k}, value {j + 1}" for k in range(len(frame))],
            "_order": np.arange(len(frame)) * len(values) + j}))
    out = pd.concat(rows, ignore_index=True).sort_values("_order")
    # an empty cell is a read not taken (a ragged record), not an error
    out = out[out["resistance_ohm"].notna()]
    return _after_reset(out.drop(columns="_order").reset_index(drop=True), path,
                        next_cycle=states == ["LRS", "HRS"])
