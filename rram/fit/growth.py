"""Where a card's lateral growth saturates: ``wsat`` and ``rsat`` from its own loop.

Lateral growth stops at w_eq = wsat·(r_l/rsat)^(1/nsat) (``rram.equations.set_kinetics``).
A loop at one compliance shows how wide the CF grew and how fast it was still growing
when it stopped (the hold: the cell voltage fell to where the growth keeps pace with the
sweep), so it bounds the saturation from below only.  The rule: simulate the card's loop
with the saturation out of the way, take the hold of its last SET (the first sample within
:data:`HOLD_NM` of its widest CF) and put w_eq there :data:`MARGIN` above the LRS width,
at the growth rate of that sample.  That is the tightest bound the loop allows: the
loop's LRS moves by less than the last :data:`HOLD_NM` of its growth, and a slower
growth than the hold's (an unlimited stress at a lower voltage) stops near the LRS.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..card import Card
from ..constants import NM
from ..engine.run import Options, simulate
from ..experiment import DCLoop

#: The hold: the first sample of the last SET within this width (nm) of its widest CF.
HOLD_NM = 0.01
#: w_eq at the hold's growth rate, over the LRS width.
MARGIN = 1.1
#: The saturation out of the way: w_eq ≥ 1 µm (the largest ``wcf``) at any rate ≥ 1e-30
#: m/s (a 4 eV barrier at 300 K grows more slowly than that, and then nothing moves).
SATURATION_OFF = {"wsat": 1e-6, "rsat": 1e-30}
#: The last SET must widen the CF by at least this (nm) for a hold to exist.
MIN_GROWTH_NM = 10 * HOLD_NM


def loop_hold(time_s: np.ndarray, width_nm: np.ndarray) -> tuple[float, float]:
    """(growth rate at the hold, m/s; widest CF, nm) of one SET's samples.

    The rate is the secant over the step into the first sample within :data:`HOLD_NM`
    of the widest CF.  A SET that widened the CF by less than :data:`MIN_GROWTH_NM` (a
    card whose RESET barely thins the CF: its SET only closes the gap) shows no hold;
    its fastest growth stands in for one, so the bound sits above everything the loop
    did.  A SET that never widened the CF gives no rate: NaN."""
    widest = float(np.max(width_nm))
    rates = np.diff(width_nm) * NM / np.diff(time_s)
    if widest - float(np.min(width_nm)) < MIN_GROWTH_NM:
        fastest = float(np.max(rates, initial=0.0))
        return (fastest if fastest > 0.0 else float("nan")), widest
    k = int(np.flatnonzero(width_nm >= widest - HOLD_NM)[0])
    return float(rates[k - 1]), widest


def calibrate_saturation(card: Card, protocol: DCLoop | None = None,
                         options: Options | None = None) -> tuple[Card, dict[str, Any]]:
    """``card`` with ``wsat`` and ``rsat`` put at the hold of ``protocol``'s second SET
    (default: the card's fitted protocol, else the default loop), and what was measured.

    The loop is simulated with :data:`SATURATION_OFF`, two cycles (the second starts
    from the state the first RESET leaves)."""
    protocol = protocol or DCLoop.from_meta(card.meta)
    free = card.replace(**SATURATION_OFF)
    st = protocol.stimulus(2)
    res = simulate(protocol.circuit, st, cards=free, circuit_params=protocol.circuit_params,
                   options=options)
    res.raise_on_failure()
    a = res.device_arrays(0)
    last_set = (a["phase"] == "set") & (a["cycle"] == a["cycle"].max())
    rate, widest = loop_hold(a["time_s"][last_set], a["width_nm"][last_set])
    if not np.isfinite(rate):  # the loop never widens the CF: it places no bound
        return free, {"hold_rate_m_per_s": rate, "lrs_width_nm": widest,
                      "note": "the SET never widened the CF: the saturation is left off"}
    calibrated = card.replace(wsat=MARGIN * widest * NM, rsat=rate)
    return calibrated, {"hold_rate_m_per_s": rate, "lrs_width_nm": widest,
                        "wsat_m": MARGIN * widest * NM, "margin": MARGIN}
