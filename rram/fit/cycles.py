"""Cycle-to-cycle scatter of the kinetic parameters, from fitting every measured loop.

Each loop is refitted from the median-cycle card with one short stage: the barriers that
set V_set (``ea``) and the RESET (``eh``), the CF's thermal coupling that sets the LRS
(``kth``) and the initial gap of that cycle (``x0``, the HRS the previous RESET left: a
single cycle is no steady state, :attr:`rram.fit.loop.MeasuredLoop.steady`).
The spread of the fitted values across cycles is a direct estimate of the C2C spreads
that ``rram fit-variation`` then tunes against the distributions (``--scatter``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..card import Card
from ..errors import InputError
from ..io import read_table
from .data import integer_column, numeric_column
from .iv import fit_loop
from .loop import MeasuredLoop
from .recipe import Recipe, Stage

#: The per-cycle stage: few parameters, so a loop takes a few seconds.
SCATTER_PARAMETERS = ("ea", "eh", "kth", "x0")
#: Carrier of each scatter column in the variation spec (and whether it is lognormal).
CARRIER_OF = {"ea": ("dea", False), "eh": ("deh", False), "kth": ("kth", True)}
#: Columns of a per-cycle table that :func:`scatter_sigmas` reads.
SCATTER_COLUMNS = ("cycle", *CARRIER_OF, "error")
#: Successful per-cycle fits needed for a spread (it is only fit-variation's start).
MIN_SCATTER_FITS = 2


def scatter_recipe(base: Recipe) -> Recipe:
    """``base`` with one short stage of the scatter parameters, started from the card
    (every other setting of ``base`` kept: its bounds, log parameters and penalties)."""
    return replace(base, stages=(Stage("cycle", SCATTER_PARAMETERS, "all", 1.0, 15,
                                       base.model),), start={})


def fit_cycles(loops: Sequence[MeasuredLoop], card: Card, base: Recipe,
               progress: bool = True, log: Callable[[str], None] | None = None
               ) -> pd.DataFrame:
    """One row per loop: cycle, fitted values, RMS error; failures (an exception, or an
    RMS error beyond :data:`rram.fit.iv.MAX_RMS_DEC`) keep NaN and say why."""
    recipe = scatter_recipe(base)
    rows = []
    iterator = loops
    if progress:
        from tqdm import tqdm

        iterator = tqdm(loops, unit="loop", desc="fit cycles", disable=None)
    for loop in iterator:
        row: dict[str, object] = {"cycle": loop.cycle}
        try:
            # the C2C scatter of a few kinetic parameters: no identification per cycle
            fit = fit_loop(replace(loop, steady=False), card, recipe, progress=False,
                           identify=False)
            reason = fit.failed_reason()
            if reason:
                raise InputError(reason)
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


def load_scatter(path: str | Path) -> pd.DataFrame:
    """A per-cycle table of ``rram fit-cycles`` (``--scatter``), read strictly: the
    columns :data:`SCATTER_COLUMNS` must be there; ``cycle`` is an integer; a row
    without an ``error`` must hold finite numbers (``kth`` > 0), a failed row may hold
    empty cells."""
    path = Path(path)
    frame = read_table(path, "per-cycle fits (rram fit-cycles)", required=SCATTER_COLUMNS)
    out = pd.DataFrame({"cycle": integer_column(frame, "cycle", path)})
    out["error"] = frame["error"].fillna("").astype(str).str.strip()
    failed = out["error"] != ""
    for column in CARRIER_OF:
        x = numeric_column(frame, column, path, allow_missing=True)
        missing = np.isnan(x) & ~failed.to_numpy()
        if missing.any():
            k = int(np.argmax(missing))
            raise InputError(f"{path}, line {k + 2}: column {column!r} is empty on a row "
                             "without an error")
        out[column] = x
    bad = out["kth"].to_numpy() <= 0
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"{path}, line {k + 2}: column 'kth': {out['kth'].iloc[k]:g} must "
                         "be > 0")
    out.attrs["source"] = str(path)
    return out


def scatter_sigmas(table: pd.DataFrame) -> dict[str, float]:
    """Robust C2C spread of each carrier from the per-cycle fits (IQR/1.349; of ln kth),
    over the rows without an error (at least :data:`MIN_SCATTER_FITS` of them)."""
    source = table.attrs.get("source", "the per-cycle fits")
    missing = [c for c in SCATTER_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {', '.join(missing)} (need "
                         f"{', '.join(SCATTER_COLUMNS)}: a table of rram fit-cycles)")
    ok = table[table["error"].fillna("") == ""]
    if len(ok) < MIN_SCATTER_FITS:
        raise InputError(f"{source}: {len(ok)} successful per-cycle fit(s) of {len(table)}; "
                         f"a spread needs at least {MIN_SCATTER_FITS}")
    out = {}
    for column, (carrier, lognormal) in CARRIER_OF.items():
        x = ok[column].to_numpy(float)
        if not np.all(np.isfinite(x)) or (lognormal and np.any(x <= 0)):
            raise InputError(f"{source}: column {column!r} holds values that are not "
                             f"finite{' and > 0' if lognormal else ''} on rows without an "
                             "error")
        x = np.log(x) if lognormal else x
        q1, q3 = np.percentile(x, [25, 75])
        out[carrier] = float((q3 - q1) / 1.349)
    return out
