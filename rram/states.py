"""The programmed states an instance can start in: the ``state`` parameter.

``state`` = 1 starts a cell in its LRS (gap ``xlrs``, width ``wlrs``), 2 in its HRS
(``xhrs``, ``whrs``); 0 at the instance's own ``x0``, ``w0`` (by default the pristine
cell, which needs forming).  The four values are card parameters, derived here from the
card itself: the states the second cycle of the standard loop (the phenomena's
±2 V DC loop under a 100 µA compliance, :func:`standard_loops`) ends its SET
and its RESET in.  The default card carries its own (``tests/test_states.py`` derives
them again); ``rram fit`` and ``rram card --states`` derive them for a fitted card.
"""

from __future__ import annotations

import numpy as np

from .card import Card
from .constants import NM
from .engine.run import Options, SimResult, simulate
from .engine.stimulus import dc_loops
from .metrics import loop_metrics

#: The gap and width parameters of each programmed state.
STATE_PARAMETERS = {"lrs": ("xlrs", "wlrs"), "hrs": ("xhrs", "whrs")}


def programmed(card: Card, which: str) -> tuple[float, float]:
    """The gap and width (nm) of ``card``'s programmed state ``which`` (``lrs`` or
    ``hrs``): what an instance with ``state`` = 1 or 2 starts in."""
    try:
        gap, width = STATE_PARAMETERS[which]
    except KeyError:
        raise ValueError(f"programmed state {which!r}: valid are lrs, hrs") from None
    return card[gap] / NM, card[width] / NM


def set_sign(card: Card) -> float:
    """+1 for a card that SETs at positive applied voltage, −1 otherwise."""
    return float(card["polarity"])


def standard_loops(card: Card, options: Options | None, **kw) -> SimResult:
    """DC loops of one card in the compliance circuit, in the card's own polarity
    (``v_set``/``v_reset`` given as magnitudes; the rest as :func:`dc_loops` takes them)."""
    s = set_sign(card)
    kw["v_set"] = s * abs(kw.get("v_set", 2.0))
    kw["v_reset"] = -s * abs(kw.get("v_reset", 2.0))
    res = simulate("compliance", dc_loops(**kw), cards=card, options=options)
    res.raise_on_failure()
    return res


def standard_states(card: Card, options: Options | None = None
                    ) -> tuple[dict[str, float], dict[str, float], object]:
    """(LRS, HRS) of the standard loop's steady (second) cycle: gap and width (nm), and
    the cycle's metrics (a row of :func:`rram.metrics.loop_metrics`)."""
    res = standard_loops(card, options, cycles=2)
    metrics = loop_metrics(res).iloc[1]
    ev, st = res.events, res.stimuli[0]
    phases = np.array(st.phases)
    ends = {ph: np.flatnonzero((phases == ph) & (st.cycles == 1))[-1]
            for ph in ("set", "reset")}
    lrs, hrs = ({"gap_nm": max(float(ev["gap_end"][0, k]), 0.0),
                 "width_nm": float(ev["width_end"][0, k])} for k in ends.values())
    return lrs, hrs, metrics


def programmed_states(card: Card, options: Options | None = None) -> dict[str, float]:
    """``xlrs``, ``wlrs``, ``xhrs``, ``whrs`` (m) of ``card``, derived from its standard
    loop (the module docstring), to four significant figures (as the defaults)."""
    lrs, hrs, _ = standard_states(card, options)
    out = {}
    for (gap, width), state in zip(STATE_PARAMETERS.values(), (lrs, hrs), strict=True):
        out[gap] = float(f"{state['gap_nm'] * NM:.4g}")
        out[width] = float(f"{state['width_nm'] * NM:.4g}")
    return out


def with_programmed_states(card: Card, options: Options | None = None) -> Card:
    """``card`` with its own programmed states (:func:`programmed_states`)."""
    return card.replace(**programmed_states(card, options))
