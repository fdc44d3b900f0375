"""Half-select disturb: the resistance change of every cell after a write, as a table with
its provenance and as a heat map.

The table has one row per cell: ``row, col, role`` (``selected``, ``half-selected``: on
the selected row or column, ``unselected``), ``v_cell_V`` (the RRAM's te − be voltage on
the first pulse's plateau), ``r0_ohm`` and ``r_ohm`` (the cell's resistance read on its
own at :data:`rram.array.write.V_READ` before and after the train) and ``change``
(R/R0 − 1).  Its provenance (package version, the array, card digest and variation, the write and
its figures) goes to a JSON sidecar ``<table>.json`` (:mod:`rram.array.tables`).

:func:`disturb_budget` finds the largest array whose cells stay within a disturb budget
when the whole array is written once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from .cells import States
from .spec import ArraySpec
from .write import V_READ, PulseTrain, WriteResult, write

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


@dataclass(frozen=True)
class BudgetRow:
    """One array size of :func:`disturb_budget`: the largest half-selected |R/R0 − 1|
    after the simulated train (``per_write``), how close that train's growth is to
    proportional in the pulse count (``linearity``: the change after the last pulse over
    ``count`` times the change after the first; 1 is proportional), the exposure of a
    cell when every other cell of its row and column is written once with the train
    (``exposure`` = (rows − 1 + cols − 1)·per_write) and whether it is within the budget."""

    rows: int
    cols: int
    per_write: float
    linearity: float
    exposure: float
    within: bool
    seconds: float


def check_budget(budget: float, sizes: Sequence[int]) -> list[int]:
    """The sizes of a disturb-budget search, ascending, or an error naming the bad input."""
    if not 0 < budget < 10:
        raise InputError(f"disturb budget {budget!r}: valid is (0, 10) (a relative change)")
    out = sorted({int(n) for n in sizes})
    if not out or out[0] < 2 or out[-1] > 256:
        raise InputError(f"sizes {list(sizes)}: valid array sizes are 2 .. 256")
    return out


def disturb_budget(spec: ArraySpec, sizes: Sequence[int], pulse: PulseTrain, budget: float,
                   scheme: str = "v/2", states_of: Callable[[int], States] | None = None,
                   progress: Callable[[int], None] | None = None
                   ) -> tuple[list[BudgetRow], int | None]:
    """The largest square array of ``sizes`` (``spec`` resized, its middle cell written
    with ``pulse`` under ``scheme``, every cell at ``states_of(n)``) whose cells stay
    within ``budget`` (a relative resistance change) after the whole array is written
    once: a cell is then half-selected by the (rows − 1) + (cols − 1) writes of its row
    and column.  Disturbs add in proportion while they are small (``linearity`` near 1
    says the train's own growth was proportional); the worst half-selected cell of one
    write stands for every write.  Returns the rows (one per size, ascending) and the
    largest size within the budget (None: none)."""
    sizes = check_budget(budget, sizes)
    rows = []
    for n in sizes:
        sized = dataclasses.replace(spec, rows=n, cols=n)
        result = write(sized, (n // 2, n // 2), pulse, scheme,
                       None if states_of is None else states_of(n))
        h = result.half_selected
        d = np.abs(result.r_history[:, h] / result.r0[h] - 1).max(axis=1)
        per_write = float(d[-1])
        linearity = float(d[-1] / (pulse.count * d[1])) if d[1] > 0 else float("nan")
        exposure = (2 * n - 2) * per_write
        rows.append(BudgetRow(n, n, per_write, linearity, exposure, exposure <= budget,
                              result.seconds))
        if progress is not None:
            progress(n)
    within = [r.rows for r in rows if r.within]
    return rows, (max(within) if within else None)


__all__ = ["COLUMNS", "BudgetRow", "check_budget", "disturb_budget", "disturb_table",
           "history_table", "provenance", "roles", "summary", "write_disturb"]
