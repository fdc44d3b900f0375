"""Switching metrics from simulated (or measured) I-V loops.

Definitions, used for every engine and for measured data alike (:mod:`rram.events`):

* **V_set**: applied voltage at which |I| first reaches half the compliance on the SET
  half (interpolated between the integrator's steps); when the compliance is never
  reached, the voltage of the steepest rise of ln|I|.
* **V_reset**: applied voltage where |I| on the RESET half first falls below 90 % of its
  peak so far: the onset of RESET, interpolated between steps (the peak itself is a
  cusp that each engine resolves only to its step, and a later, higher bump of a
  multi-step RESET must not move it).
* **R_LRS / R_HRS**: V/I read at ``v_read`` (+0.1 V) with the state frozen at the end of
  the SET / RESET half of the cycle.
* **i_peak**: the largest |I| in the SET half (overshoot shows up here); **i_reset**: the
  largest |I| of the RESET ramp.
* The switching rule (:func:`rram.events.switching_rule`): V_set only where the
  resistance fell at least 2× across the SET (from the previous cycle's R_HRS, or the
  initial state's resistance), V_reset only where it rose 2× across the RESET;
  otherwise NaN, with ``no_set``/``no_reset`` in the ``reason`` column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .constants import NM
from .engine.static import read_resistance
from .events import phase_event_times, switching_rule
from .status import succeeded

METRIC_COLUMNS = ("device", "cycle", "v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm",
                  "i_peak_A", "i_reset_A", "t_max_K", "reason")


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


def loop_metrics(
    res,
    v_read: float = 0.1,
) -> pd.DataFrame:
    """One row per device and cycle of a DC-loop simulation (see module docstring).

    ``res`` is a result of any engine (:class:`~rram.engine.run.SimResult` or the ngspice
    runner's): per-segment events with the stimulus, cards and status.  When the
    stimulus has read pulses, R = V_cell/I at the end of their plateaus (measured by the
    engine itself); otherwise the end states are read by the static solver at ``v_read``.
    """
    ev = res.events
    rows, states, devices = [], [], []
    tambs = res.cards["tamb"]
    for d, st in enumerate(res.stimuli):
        if not succeeded(res.status[d]):
            continue
        tamb = tambs[d]
        phases = np.array(st.phases)
        ev_d = {k: v[d] for k, v in ev.items()}
        for c in np.unique(st.cycles):
            segs = np.flatnonzero(st.cycles == c)
            set_segs = segs[phases[segs] == "set"]
            reset_segs = segs[phases[segs] == "reset"]
            if set_segs.size == 0 or reset_segs.size == 0:
                continue
            times = [phase_event_times(ev_d, s, kind) for s, kind in
                     ((set_segs, "set"), (reset_segs, "reset"))]
            v_set, v_reset = (float(st.voltage(t)) if np.isfinite(t) else np.nan
                              for t in times)
            reads = segs[phases[segs] == "read"]
            r_meas = [float(ev["vcell_end"][d, k] / ev["iend"][d, k]) for k in reads[1::3]]
            states.append((ev["gap_end"][d, set_segs[-1]], ev["width_end"][d, set_segs[-1]],
                           ev["gap_end"][d, reset_segs[-1]], ev["width_end"][d, reset_segs[-1]]))
            devices.append(d)
            rows.append([d, int(c), v_set, v_reset,
                         r_meas[0] if len(r_meas) == 2 else np.nan,
                         r_meas[1] if len(r_meas) == 2 else np.nan,
                         float(ev["imax"][d, set_segs].max()),
                         float(ev["imax"][d, reset_segs[0]]),
                         tamb + float(ev["dtmax"][d, reset_segs].max()), ""])
    df = pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
    if not rows:
        return df
    missing = df["r_lrs_ohm"].isna().to_numpy()
    if missing.any():
        s = np.array(states)[missing]
        sel = res.cards.take(np.asarray(devices)[missing])
        df.loc[missing, "r_lrs_ohm"] = read_resistance(sel, s[:, 0], s[:, 1], v_read)
        df.loc[missing, "r_hrs_ohm"] = read_resistance(sel, s[:, 2], s[:, 3], v_read)
    # resistance before each SET: the previous cycle's HRS, or the initial state's
    first = (df["cycle"] != df["cycle"].shift(1) + 1) | (df["device"] != df["device"].shift(1))
    r_before = df["r_hrs_ohm"].shift(1).to_numpy(copy=True)
    if first.any():
        init = res.cards.take(np.asarray(devices)[np.flatnonzero(first)])
        r_before[first.to_numpy()] = read_resistance(init, init["x0"] / NM, init["w0"] / NM,
                                                     v_read)
    v_set, v_reset, reason = switching_rule(df["v_set_V"], df["v_reset_V"], r_before,
                                            df["r_lrs_ohm"], df["r_hrs_ohm"])
    df["v_set_V"], df["v_reset_V"], df["reason"] = v_set, v_reset, reason
    return df


def log_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log10(y) against log10(x)."""
    return float(np.polyfit(np.log10(x), np.log10(y), 1)[0])
