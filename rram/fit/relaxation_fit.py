"""Calibrate the relaxation after programming (``lrel``) on a relaxation record.

A relaxation record is a read record (:mod:`rram.fit.reads`, every shape it loads): per
cell, its resistance read again and again after it was programmed, each read's time
counted from the programming.

**The law.**  In the log-linear regime of the relaxation block
(:mod:`rram.equations.relaxation`) the disorder u falls by ``lrel``·ln 10 per decade of
time, and the hopping length x + u with it.  A cell's resistance then falls by

    d ln R / d log₁₀ t = −lrel·ln 10·h/xt,   h = xt·∂ln R/∂x_hop,

where h is the share of the cell's resistance in the gap's hopping (1 for a cell whose
resistance is all gap; the CF body and the contacts in series take the rest).  h is the
model's own at the cell's state: :func:`rram.fit.noise_fit.states_on_path` places the
cell on the card's programming path by its first read, and the derivative is taken by
static reads of that state.

**The fit.**  Each cell's slope of ln R against log₁₀ t (least squares over its reads)
gives its own ``lrel``; the card takes their median, and the spread of ln ``lrel`` over
the cells is reported (the per-cell variation of the drift).  A record at one
temperature does not separate the barrier ``erel`` from the quench ``urel``: both set
when the log-linear drift starts, not its slope.  The card keeps them (``urel`` set to
:data:`UREL_DEFAULT` where the card has it off, so the fitted card relaxes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..card import Card, CardBatch
from ..engine.static import read_resistance
from ..errors import InputError
from .noise_fit import states_on_path
from .reads import ReadRecord

#: The quenched disorder's scale (m) a fitted card gets where its card has relaxation off.
UREL_DEFAULT = 0.5e-9
#: Step (nm) of the hopping-length derivative of a read.
STEP_NM = 0.01
#: Fewest decades of read time a cell's slope is measured over.
MIN_DECADES = 1.0


@dataclass(frozen=True)
class RelaxationFit:
    """The fitted ``lrel`` (m, the cells' median), the ln-σ of the cells' ``lrel``, the
    median drift of ln R per decade, the per-cell table and the fitted card."""

    lrel: float
    lrel_sigma: float
    drift_per_decade: float
    cells: pd.DataFrame
    card: Card

    def report(self) -> str:
        return (f"relaxation of {len(self.cells)} cells: ln R falls by "
                f"{-self.drift_per_decade:.4f} per decade of time (median); lrel = "
                f"{self.lrel * 1e9:.4g} nm, its ln-spread over the cells "
                f"{self.lrel_sigma:.3f}; erel {self.card['erel']:.3g} eV and urel "
                f"{self.card['urel'] * 1e9:.3g} nm kept (one temperature sets the drift's "
                "slope, not its onset)")


def hopping_share(card: Card, gap_nm: np.ndarray, width_nm: np.ndarray,
                  v_read: float) -> np.ndarray:
    """h = xt·∂ln R/∂x (the share of the resistance in the gap's hopping) at each state,
    by central differences of static reads (one-sided at a closed gap)."""
    gap = np.asarray(gap_nm, float)
    width = np.asarray(width_nm, float)
    batch = CardBatch.of(card, gap.size)
    lo = np.maximum(gap - STEP_NM, 0.0)
    hi = lo + 2.0 * STEP_NM
    r_lo = read_resistance(batch, lo, width, v_read)
    r_hi = read_resistance(batch, hi, width, v_read)
    return card["xt"] * 1e9 * np.log(r_hi / r_lo) / (hi - lo)


def fit_relaxation(record: ReadRecord, card: Card) -> RelaxationFit:
    """``lrel`` from the drift of each cell of ``record`` (module docstring); ``card``
    must be of a model with the relaxation block (``rram.equations.RELAXATION_BLOCKS``)."""
    if "lrel" not in card.model.parameter_names:
        raise InputError("the card's model has no relaxation block: fit a card of "
                         "rram.model.relaxing_model() (rram.card.in_model)")
    rows = []
    for label in record.cells:
        t, r = record.of(label)
        later = t > 0
        if later.sum() < 3 or math.log10(t[later].max() / t[later].min()) < MIN_DECADES:
            raise InputError(f"cell {label!r}: its reads after programming (time > 0) span "
                             f"less than {MIN_DECADES:g} decade of time; a drift per "
                             "decade needs at least three reads over one")
        slope = float(np.polyfit(np.log10(t[later]), np.log(r[later]), 1)[0])
        rows.append((label, float(r[later][0]), slope))
    cells = pd.DataFrame(rows, columns=["cell", "r_first_ohm", "drift_per_decade"])
    gap, width = states_on_path(card, cells["r_first_ohm"].to_numpy(), record.v_read)
    share = hopping_share(card, gap, width, record.v_read)
    cells["hopping_share"] = share
    cells["lrel_m"] = -cells["drift_per_decade"] * card["xt"] / (share * math.log(10.0))
    bad = cells[~(cells["lrel_m"] > 0)]
    if len(bad):
        row = bad.iloc[0]
        raise InputError(f"cell {row['cell']!r}: its resistance rises with time "
                         f"({row['drift_per_decade']:+.4f} in ln R per decade); the "
                         "relaxation block relaxes the gap, so R falls")
    lrel = float(np.median(cells["lrel_m"]))
    # each cell's drift at the card's lrel: what the fitted card predicts for it
    cells["model_drift_per_decade"] = -lrel * math.log(10.0) * share / card["xt"]
    lo, hi = card.model.parameter("lrel").lower, card.model.parameter("lrel").upper
    if not lo <= lrel <= hi:
        raise InputError(f"the record's drift gives lrel = {lrel:.3g} m, outside its range "
                         f"[{lo:g}, {hi:g}] m")
    sigma = float(np.std(np.log(cells["lrel_m"]), ddof=1)) if len(cells) > 1 else 0.0
    urel = card["urel"] if card["urel"] > 0 else UREL_DEFAULT
    fitted = card.replace(lrel=lrel, urel=urel)
    return RelaxationFit(lrel, sigma, float(np.median(cells["drift_per_decade"])), cells,
                         fitted)


__all__ = ["RelaxationFit", "fit_relaxation", "hopping_share"]
