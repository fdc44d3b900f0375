"""Half-select disturb: the resistance change of every cell after a write, as a table with
its provenance and as a heat map.

The table has one row per cell: ``row, col, role`` (``selected``, ``half-selected``: on
the selected row or column, ``unselected``), ``v_cell_V`` (the RRAM's te − be voltage on
the first pulse's plateau), ``r0_ohm`` and ``r_ohm`` (the cell's resistance read on its
own at :data:`rram.array.write.V_READ` before and after the train) and ``change``
(R/R0 − 1).  Its provenance (package version, the array, card digest and variation, the write and
its figures) goes to a JSON sidecar ``<table>.json`` (:mod:`rram.array.tables`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from .spec import ArraySpec
from .write import V_READ, WriteResult

COLUMNS = ("row", "col", "role", "v_cell_V", "r0_ohm", "r_ohm", "change")


def roles(result: WriteResult) -> np.ndarray:
    """(rows, cols) labels: ``selected``, ``half-selected`` or ``unselected``."""
    out = np.where(result.half_selected, "half-selected", "unselected").astype(object)
    out[result.cell] = "selected"
    return out


def disturb_table(result: WriteResult) -> pd.DataFrame:
    """One row per cell (columns :data:`COLUMNS`)."""
    m, n = result.r.shape
    ii, jj = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(),
                         "role": roles(result).ravel(), "v_cell_V": result.v_first.ravel(),
                         "r0_ohm": result.r0.ravel(), "r_ohm": result.r.ravel(),
                         "change": result.change.ravel()})[list(COLUMNS)]


def history_table(result: WriteResult) -> pd.DataFrame:
    """After each pulse (0: before the first): the selected cell's resistance (Ω) and the
    smallest, median and largest |R/R0 − 1| of the half-selected cells."""
    h = result.half_selected
    d = np.abs(result.r_history[:, h] / result.r0[h] - 1) if h.any() \
        else np.zeros((len(result.r_history), 1))
    return pd.DataFrame({"pulse": np.arange(len(result.r_history)),
                         "r_selected_ohm": result.r_history[:, result.cell[0], result.cell[1]],
                         "half_selected_min": d.min(axis=1),
                         "half_selected_median": np.median(d, axis=1),
                         "half_selected_max": d.max(axis=1)})


def summary(result: WriteResult) -> dict[str, float]:
    """The write's figures: the selected cell's R before and after (Ω), the largest and
    median |R/R0 − 1| of the half-selected cells and of the unselected ones."""
    h = result.half_selected
    rest = ~h
    rest[result.cell] = False
    d = np.abs(result.change)

    def stat(mask: np.ndarray, f) -> float:
        return float(f(d[mask])) if mask.any() else 0.0

    return {"r_selected_before_ohm": float(result.r0[result.cell]),
            "r_selected_after_ohm": float(result.r[result.cell]),
            "half_selected_max": stat(h, np.max), "half_selected_median": stat(h, np.median),
            "unselected_max": stat(rest, np.max)}


def provenance(spec: ArraySpec, result: WriteResult, pattern: str | None = None,
               command: str = "array disturb") -> dict:
    """What the table came from (:func:`rram.array.tables.provenance`): the version,
    the array, the card's digest and the variation, and the write and its figures."""
    from .tables import provenance as array_provenance

    return array_provenance(
        spec, command=command, pattern=pattern,
        write={"cell": list(result.cell), "scheme": result.scheme,
               **dataclasses.asdict(result.pulse), "v_read_V": V_READ,
               "engine": "native quasi-static (rram.array.write)"},
        wire_elmore_delay_s=result.tau, cell_rc_s=result.tau_cells,
        array_solves=result.array_solves, relaxation_sweeps=result.relaxations,
        seconds=result.seconds, summary=summary(result))


def write_disturb(path: str | Path, table: pd.DataFrame, meta: dict) -> Path:
    """The table (CSV) and its provenance sidecar (:mod:`rram.array.tables`)."""
    from .tables import write_table

    return write_table(path, table, meta)


__all__ = ["COLUMNS", "disturb_table", "history_table", "provenance", "roles", "summary",
           "write_disturb"]
