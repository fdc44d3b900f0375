"""The model's range of validity, checked on every simulated device-cycle.

A compact model describes a regime.  Beyond it the equations still give numbers — a CF
at 18 000 K, a width below its floor — that no device shows: the oxide melts, a thermal
rupture or a breakdown the model does not describe takes over.  The limits are card
parameters with documented values (``tvalid``), the states' own bounds (the gap in
[0, l0], the width in [wmin, wcf], to :data:`STATE_TOLERANCE_NM`), and a CF that fills
its cell (width above :data:`CELL_FILL` of ``wcf``).  Every engine's cycle
table carries the column :data:`OUT_OF_RANGE`: empty for a device-cycle inside the range,
else what left it; the Monte Carlo and the CLI count them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .constants import NM

#: The column of a cycle table that names what left the range ("" inside it).
OUT_OF_RANGE = "out_of_range"
#: How far (nm) a state may sit beyond its bound before the cycle is reported: every
#: kinetic rate holds its state on the bound as a stable fixed point
#: (:func:`rram.equations.ions.restoring`), so a SET ends with the gap at 0 to 2e-5 nm.
STATE_TOLERANCE_NM = 1e-3
#: A CF wider than this share of its cell fills it: the pristine oxide around it, whose
#: leakage the model carries, is gone, and the cell wall, not the physics, sets the width
#: (an over-SET into a hard breakdown; issue 36: 10 mA from the LRS at 1-1.5 V filled the
#: cell below tvalid, unreported).
CELL_FILL = 0.8


def excursion(t_peak_K: float, states_nm: list[tuple[float, float]],
              card: Mapping[str, float]) -> str:
    """What of one device-cycle left the range of validity of ``card`` ("" if nothing):
    its peak CF temperature (K) and the (gap, width) states (nm) it ended its phases in."""
    found = []
    if np.isfinite(t_peak_K) and t_peak_K > card["tvalid"]:
        found.append(f"T {t_peak_K:.0f} K > tvalid {card['tvalid']:.0f} K")
    l0, wmin, wcf = card["l0"] / NM, card["wmin"] / NM, card["wcf"] / NM
    tol = STATE_TOLERANCE_NM
    for gap, width in states_nm:
        if np.isfinite(gap) and not -tol <= gap <= l0 + tol:
            found.append(f"gap {gap:.4g} nm outside [0, {l0:.4g}]")
        if np.isfinite(width) and not wmin - tol <= width <= wcf + tol:
            found.append(f"width {width:.4g} nm outside [{wmin:.4g}, {wcf:.4g}]")
    widths = [w for _, w in states_nm if np.isfinite(w) and w <= wcf + tol]
    if widths and max(widths) > CELL_FILL * wcf:  # said once, at the widest
        found.append(f"width {max(widths):.4g} nm > {CELL_FILL:g} wcf: the CF fills its cell")
    return "; ".join(dict.fromkeys(found))


def cycle_extremes(ev: Mapping[str, np.ndarray], segments: np.ndarray, tamb: float
                   ) -> tuple[float, list[tuple[float, float]]]:
    """What :func:`excursion` judges of one device's ``segments`` (a cycle, or one phase
    of it), from its per-segment events (:mod:`rram.events`: ``dtmax``, ``gap_end``,
    ``width_end``): the peak CF temperature (K) and the (gap, width) states (nm)."""
    t_peak = tamb + float(np.nanmax(ev["dtmax"][segments])) if segments.size else np.nan
    return t_peak, [(float(ev["gap_end"][k]), float(ev["width_end"][k])) for k in segments]


def cycle_excursion(ev: Mapping[str, np.ndarray], segments: np.ndarray, tamb: float,
                    card: Mapping[str, float]) -> str:
    """:func:`excursion` of one device's ``segments`` (see :func:`cycle_extremes`)."""
    return excursion(*cycle_extremes(ev, segments, tamb), card)


def count_out_of_range(frame: pd.DataFrame) -> int:
    """Device-cycles of a cycle table that left the range of validity."""
    if OUT_OF_RANGE not in frame:
        return 0
    column = frame[OUT_OF_RANGE]  # all empty reads back from a CSV as NaN floats
    return int((column.notna() & (column.astype(str) != "")).sum())


def summary_line(frame: pd.DataFrame) -> str | None:
    """The line a command prints when device-cycles left the range, else None."""
    n = count_out_of_range(frame)
    if not n:
        return None
    first = frame.loc[frame[OUT_OF_RANGE].fillna("").astype(str) != "", OUT_OF_RANGE]
    return (f"warning: {n} of {len(frame)} device-cycles left the model's range of validity "
            f"(column {OUT_OF_RANGE}; first: {first.iloc[0]})")


__all__ = ["CELL_FILL", "OUT_OF_RANGE", "STATE_TOLERANCE_NM", "count_out_of_range",
           "cycle_excursion", "cycle_extremes", "excursion", "summary_line"]
