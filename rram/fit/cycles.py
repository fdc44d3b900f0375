"""Cycle-to-cycle scatter of the kinetic parameters, from fitting every measured loop.

Each loop is refitted from the median-cycle card with one short stage: the barriers that
set V_set (``ea``) and the RESET (``eh``), the CF's thermal coupling that sets the LRS
(``kth``) and the initial gap of that cycle (``x0``, the HRS the previous RESET left).
The spread of the fitted values across cycles is a direct estimate of the C2C spreads
that ``rram fit-variation`` then tunes against the distributions (``--scatter``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..params import Card
from .iv import fit_loop
from .loop import MeasuredLoop
from .recipe import Recipe, Stage

#: The per-cycle stage: few parameters, so a loop takes a few seconds.
SCATTER_PARAMETERS = ("ea", "eh", "kth", "x0")
#: Carrier of each scatter column in the variation spec (and whether it is lognormal).
CARRIER_OF = {"ea": ("dea", False), "eh": ("deh", False), "kth": ("kth", True)}


def scatter_recipe(base: Recipe) -> Recipe:
    return Recipe(stages=(Stage("cycle", SCATTER_PARAMETERS, "all", 1.0, 15),),
                  log_parameters=base.log_parameters, bounds=base.bounds,
                  voltage_scale=base.voltage_scale, icc_reset=base.icc_reset)


def fit_cycles(loops: Sequence[MeasuredLoop], card: Card, base: Recipe,
               progress: bool = True, log: Callable[[str], None] | None = None
               ) -> pd.DataFrame:
    """One row per loop: cycle, fitted values, RMS error; failures keep NaN and say why."""
    recipe = scatter_recipe(base)
    rows = []
    iterator = loops
    if progress:
        from tqdm import tqdm

        iterator = tqdm(loops, unit="loop", desc="fit cycles")
    for loop in iterator:
        row: dict[str, object] = {"cycle": loop.cycle}
        try:
            fit = fit_loop(loop, card, recipe, progress=False)
            row.update({p: fit.card[p] for p in SCATTER_PARAMETERS})
            row.update(rms_dec=fit.rms_dec, v_set_V=fit.v_set[0], v_reset_V=fit.v_reset[0],
                       error="")
        except Exception as exc:  # one bad loop must not stop the others
            row.update({p: np.nan for p in SCATTER_PARAMETERS})
            row.update(rms_dec=np.nan, v_set_V=np.nan, v_reset_V=np.nan,
                       error=f"{type(exc).__name__}: {exc}")
            if log:
                log(f"  cycle {loop.cycle}: {row['error']}")
        rows.append(row)
    return pd.DataFrame(rows)


def scatter_sigmas(table: pd.DataFrame) -> dict[str, float]:
    """Robust C2C spread of each carrier from the per-cycle fits (IQR/1.349; of ln kth)."""
    out = {}
    ok = table[table["error"].fillna("") == ""]
    for column, (carrier, lognormal) in CARRIER_OF.items():
        x = ok[column].to_numpy(float)
        x = np.log(x) if lognormal else x
        q1, q3 = np.nanpercentile(x, [25, 75])
        out[carrier] = float((q3 - q1) / 1.349)
    return out
