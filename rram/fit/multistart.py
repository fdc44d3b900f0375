"""Starts for a loop fit that should not depend on where it starts.

A staged least-squares fit finds the minimum of the basin it starts in.  With
``starts = n`` the fit screens n starts spread over the recipe's bounds (a Latin
hypercube from a fixed seed: the same for every run) and the documented card, by one
batched simulation each, and runs the staged fit from the ``keep`` best of them; the
lowest RMS wins.  The user's start is not among them (a good start would otherwise win
the screen and lead to its own minimum): the screened set, and so the result, is the
same whatever the start.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..card import Card, default_card
from ..errors import CardError
from .recipe import Recipe

#: Seed of the Latin hypercube of starts (fixed: a fit repeats exactly).
STARTS_SEED = 20261201


def fitted_names(recipe: Recipe) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for st in recipe.stages for n in st.parameters))


def candidate_cards(card: Card, recipe: Recipe, n: int) -> list[Card]:
    """The documented card and ``n`` Latin-hypercube starts within the recipe's bounds
    (log-uniform for parameters fitted as log₁₀), each with ``card``'s polarity and
    non-fitted values; draws that break a card constraint are skipped."""
    from scipy.stats import qmc

    names = fitted_names(recipe)
    documented = default_card()
    out = []
    with contextlib.suppress(CardError):  # the card's constraints may exclude it
        out.append(card.replace(**{k: documented[k] for k in names}))
    lo, hi = [], []
    for name in names:
        a, b = recipe.bounds_of(name)
        if name in recipe.log_parameters:
            a, b = math.log10(max(a, 1e-300)), math.log10(b)
        lo.append(a)
        hi.append(b)
    unit = qmc.LatinHypercube(d=len(names), seed=STARTS_SEED).random(n)
    for row in qmc.scale(unit, lo, hi):
        values = {k: (10.0 ** v if k in recipe.log_parameters else float(v))
                  for k, v in zip(names, row, strict=True)}
        values["x0"] = min(values.get("x0", card["x0"]), values.get("l0", card["l0"]))
        try:
            out.append(card.replace(**values))
        except CardError:
            continue
    return out


def best_indices(scores: np.ndarray, keep: int) -> list[int]:
    """Indices of the ``keep`` lowest finite scores (ties: the earlier candidate)."""
    order = np.argsort(np.where(np.isfinite(scores), scores, np.inf), kind="stable")
    return [int(i) for i in order[:keep]]
