"""Switching metrics from simulated (or measured) I-V loops.

Definitions, used for every engine and for measured data alike:

* **V_set**: applied voltage at which |I| first reaches ``set_fraction`` (50 %) of the
  compliance on the SET up-ramp (linear interpolation between samples).
* **V_reset**: applied voltage at the peak |I| of the RESET ramp (the RESET onset).
* **R_LRS / R_HRS**: V/I read at ``v_read`` (+0.1 V) with the state frozen at the end of
  the SET / RESET half of the cycle.
* **i_peak**: the largest |I| in the SET half (overshoot shows up here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .engine.run import SimResult
from .engine.static import read_resistance

METRIC_COLUMNS = ("device", "cycle", "v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm",
                  "i_peak_A", "i_reset_A", "t_max_K")


def first_crossing(x: np.ndarray, y: np.ndarray, level: float) -> float:
    """x where y first reaches ``level`` from below (linear interpolation); NaN if never."""
    above = np.flatnonzero(y >= level)
    if above.size == 0:
        return float("nan")
    k = int(above[0])
    if k == 0:
        return float(x[0])
    y0, y1 = y[k - 1], y[k]
    f = (level - y0) / (y1 - y0) if y1 != y0 else 1.0
    return float(x[k - 1] + f * (x[k] - x[k - 1]))


def set_ramp_voltage(v: np.ndarray, i: np.ndarray, level: float) -> float:
    """Applied voltage where |i| first reaches ``level`` on a ramp (|v| increasing)."""
    return first_crossing(v, np.abs(i), level)


def _phase_slices(res: SimResult, d: int):
    a = res.device_arrays(d)
    st = res.stimuli[d]
    seg = st.segment_of(a["time_s"])
    return a, st, seg


def loop_metrics(
    res: SimResult,
    compliance: float | np.ndarray | None = None,
    v_read: float = 0.1,
    set_fraction: float = 0.5,
) -> pd.DataFrame:
    """One row per device and cycle of a DC-loop simulation (see module docstring).

    ``compliance`` (A) sets the V_set threshold; by default the SET-segment compliance of
    the stimulus (the compliance circuit) is used.
    """
    rows = []
    ends_lrs, ends_hrs, cards = [], [], []
    for d in range(len(res.stimuli)):
        a, st, seg = _phase_slices(res, d)
        t = a["time_s"]
        for c in np.unique(st.cycles):
            segs = np.flatnonzero(st.cycles == c)
            set_segs = [k for k in segs if st.phases[k] == "set"]
            reset_segs = [k for k in segs if st.phases[k] == "reset"]
            if not set_segs or not reset_segs:
                continue
            icc = (st.icc[set_segs[0]] if compliance is None
                   else float(np.broadcast_to(compliance, (len(res.stimuli),))[d]))
            up = seg == set_segs[0]
            v_set = set_ramp_voltage(a["v_applied_V"][up], a["current_A"][up],
                                     set_fraction * icc)
            in_set = np.isin(seg, set_segs)
            i_peak = float(np.max(np.abs(a["current_A"][in_set])))
            down = seg == reset_segs[0]
            ir = np.abs(a["current_A"][down])
            k = int(np.argmax(ir))
            v_reset = float(a["v_applied_V"][down][k])
            in_reset = np.isin(seg, reset_segs)
            t_max = float(np.max(a["temperature_K"][in_reset]))
            # States at the end of the SET half and at the end of the cycle.
            t_lrs = st.times[set_segs[-1] + 1]
            t_hrs = st.times[reset_segs[-1] + 1]
            j_lrs = int(np.argmin(np.abs(t - t_lrs)))
            j_hrs = int(np.argmin(np.abs(t - t_hrs)))
            ends_lrs.append((a["gap_nm"][j_lrs], a["width_nm"][j_lrs]))
            ends_hrs.append((a["gap_nm"][j_hrs], a["width_nm"][j_hrs]))
            cards.append(res.cards[d])
            rows.append([d, int(c), v_set, v_reset, np.nan, np.nan, i_peak, float(ir[k]),
                         t_max])
    df = pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
    if rows:
        lrs = np.array(ends_lrs)
        hrs = np.array(ends_hrs)
        df["r_lrs_ohm"] = read_resistance(cards, lrs[:, 0], lrs[:, 1], v_read)
        df["r_hrs_ohm"] = read_resistance(cards, hrs[:, 0], hrs[:, 1], v_read)
    return df


def log_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log10(y) against log10(x)."""
    return float(np.polyfit(np.log10(x), np.log10(y), 1)[0])
