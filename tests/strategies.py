"""Hypothesis strategies shared by the property tests: cards drawn over every
parameter's valid range."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from rram.equations.cell import PROGRAMMED_STATES
from rram.model import MODEL

NAMES = [p.name for p in MODEL.parameters]


def _param_strategy(p):
    if p.choices:
        return st.sampled_from(p.choices)
    lo, hi = p.lower, p.upper
    if lo > 0 and hi / lo > 100:
        return st.floats(math.log(lo), math.log(hi)).map(math.exp)
    return st.floats(lo, hi)


@st.composite
def cards(draw):
    values = {p.name: draw(_param_strategy(p)) for p in MODEL.parameters}
    values["wmin"] = min(values["wmin"], 0.5 * values["wcf"])
    picked = PROGRAMMED_STATES.get(values["state"])  # as a card resolves it (rram.card)
    if picked:
        values["x0"], values["w0"] = values[picked[0]], values[picked[1]]
    return np.array([values[n] for n in NAMES])
