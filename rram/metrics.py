"""The figures of a switching cycle, defined once: their names, how each engine's events
give them, and the rule that decides whether a SET or RESET happened.

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
* The switching rule (:func:`switching_rule`): V_set only where the
  resistance fell at least 2× across the SET (from the previous cycle's R_HRS, or the
  initial state's resistance), V_reset only where it rose 2× across the RESET;
  otherwise NaN, with ``no_set``/``no_reset`` in the ``reason`` column.

Every engine, the Monte Carlo, the fit and the reports name the figures by
:data:`METRICS` (and a table of cycles has the columns :data:`CYCLE_COLUMNS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .constants import NM
from .engine.static import read_resistance
from .engine.stimulus import Stimulus
from .status import succeeded
from .validity import OUT_OF_RANGE, cycle_excursion

#: The four figures of a cycle; the resistances spread in ln (:data:`LOG_METRICS`), the
#: switching voltages linearly (:data:`LINEAR_METRICS`).
METRICS = ("r_lrs_ohm", "r_hrs_ohm", "v_set_V", "v_reset_V")
LOG_METRICS = METRICS[:2]
LINEAR_METRICS = METRICS[2:]
#: A table of cycles, one row per device and cycle: the figures, the peak currents of
#: the SET and the RESET, the peak CF temperature of the RESET (K), the switching
#: rule's ``reason`` and what left the range of validity (:mod:`rram.validity`).
CYCLE_COLUMNS = ("device", "cycle", "v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm",
                 "i_peak_A", "i_reset_A", "t_max_K", "reason", OUT_OF_RANGE)
#: A SET (RESET) happened only if the resistance fell (rose) at least this much across
#: it; otherwise its switching voltage is not reported.
SWITCH_RATIO = 2.0
#: Reasons of :func:`switching_rule` (the ``reason`` column of the metrics).
NO_SET = "no_set"
NO_RESET = "no_reset"


def scaled(metric: str, x: np.ndarray) -> np.ndarray:
    """A metric's values on the scale its spread is measured in: ln of a resistance."""
    x = np.asarray(x, float)
    return np.log(x) if metric in LOG_METRICS else x


def phase_event_times(ev: dict[str, np.ndarray], segments: np.ndarray, kind: str) -> float:
    """The time of one phase's switching event from its segments' events (in order).

    ``kind`` ``set``: the first threshold crossing; if the threshold (the compliance) was
    never reached, the first closure of the gap.  ``reset``: the first fall below
    :data:`DROP` of the running peak, in whichever segment of the phase it happens (a
    RESET through a series resistance may start only on the way back)."""
    if kind == "set":
        t = ev["tcross"][segments]
        hit = t[np.isfinite(t)]
        if hit.size:
            return float(hit[0])
        closed = ev["tclose"][segments]
        hit = closed[np.isfinite(closed)]
        return float(hit[0]) if hit.size else np.nan
    t = ev["tdrop"][segments]
    hit = t[np.isfinite(t)]
    return float(hit[0]) if hit.size else np.nan


def switching_rule(v_set: np.ndarray, v_reset: np.ndarray, r_before: np.ndarray,
                   r_lrs: np.ndarray, r_hrs: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(V_set, V_reset, reason): a switching voltage only where the state switched.

    V_set is kept where the resistance fell at least :data:`SWITCH_RATIO` times across
    the SET (``r_before`` → ``r_lrs``), V_reset where it rose that much across the RESET
    (``r_lrs`` → ``r_hrs``); elsewhere NaN, and ``reason`` names the operation that did
    not switch (``no_set``, ``no_reset``, both joined by ``+``; empty when both did).
    An infinite ``r_before`` or ``r_hrs`` (an open cell, or a read not made) can be left;
    an infinite ``r_lrs`` is a SET that left a cell conducting nothing: neither it nor
    the RESET from it switched (infinity is not twice itself).
    """
    v_set, v_reset = np.asarray(v_set, float), np.asarray(v_reset, float)
    r_lrs = np.asarray(r_lrs, float)
    conducts = np.isfinite(r_lrs)
    with np.errstate(invalid="ignore", divide="ignore"):
        did_set = conducts & (np.asarray(r_before, float) >= SWITCH_RATIO * r_lrs)
        did_reset = conducts & (np.asarray(r_hrs, float) >= SWITCH_RATIO * r_lrs)
    reason = np.array(["+".join(r for r, bad in ((NO_SET, not s), (NO_RESET, not r_))
                                if bad) for s, r_ in zip(did_set, did_reset, strict=True)],
                      dtype=object)
    return (np.where(did_set, v_set, np.nan), np.where(did_reset, v_reset, np.nan), reason)


def did_not_switch(reason, operation: str = NO_SET) -> np.ndarray:
    """Where a ``reason`` column (:func:`switching_rule`) names ``operation`` (``no_set``
    or ``no_reset``): the operations that did not switch."""
    reason = list(reason)
    return np.fromiter((isinstance(r, str) and operation in r for r in reason), bool,
                       len(reason))


def failed_resets(reason) -> np.ndarray:
    """Where a ``reason`` column names a RESET that did not switch after a SET that did:
    a failed RESET.  A RESET from a SET that failed has nothing to reset (a run of
    failed SETs reads ``no_set+no_reset``) and counts among the failed SETs only."""
    return did_not_switch(reason, NO_RESET) & ~did_not_switch(reason, NO_SET)


def failed_reset_share(reason) -> float:
    """Share of the RESETs after a SET that switched that did not switch (NaN if no SET
    switched): :func:`failed_resets` over the cycles whose SET switched."""
    reason = list(reason)
    after = ~did_not_switch(reason, NO_SET)
    failed = did_not_switch(reason, NO_RESET) & after  # :func:`failed_resets`, once
    return float(failed[after].mean()) if after.any() else float("nan")


def switching_voltage(ev: Mapping[str, np.ndarray], segments: np.ndarray, kind: str,
                      stimulus: Stimulus) -> float:
    """The switching voltage (V) of one phase (``kind``: ``set`` or ``reset``) of one
    device, from its segments' events (:func:`phase_event_times`); NaN when the
    phase's event did not happen."""
    t = phase_event_times(ev, segments, kind)
    return float(stimulus.voltage(t)) if np.isfinite(t) else np.nan


def peak_current(ev: Mapping[str, np.ndarray], segments: np.ndarray) -> float:
    """The peak |I| (A) of one device's ``segments``: over the SET's, ``i_peak_A``
    (overshoot included); over the RESET's ramp out, ``i_reset_A``."""
    return float(ev["imax"][segments].max())


def reset_temperature(ev: Mapping[str, np.ndarray], reset_segments: np.ndarray,
                      tamb: float) -> float:
    """The peak CF temperature (K) of the RESET's segments: ``t_max_K``."""
    return tamb + float(ev["dtmax"][reset_segments].max())


def read_of(ev: Mapping[str, np.ndarray], segment: int) -> float:
    """The resistance (Ω) a read pulse measures: V_cell/I at the end of its plateau
    ``segment``, as an instrument reads it."""
    return float(ev["vcell_end"][segment] / ev["iend"][segment])


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


def loop_metrics(res, v_read: float = 0.1) -> pd.DataFrame:
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
            v_set, v_reset = (switching_voltage(ev_d, s, kind, st) for s, kind in
                              ((set_segs, "set"), (reset_segs, "reset")))
            reads = segs[phases[segs] == "read"]
            r_meas = [read_of(ev_d, k) for k in reads[1::3]]
            states.append((ev["gap_end"][d, set_segs[-1]], ev["width_end"][d, set_segs[-1]],
                           ev["gap_end"][d, reset_segs[-1]], ev["width_end"][d, reset_segs[-1]]))
            devices.append(d)
            rows.append([d, int(c), v_set, v_reset,
                         r_meas[0] if len(r_meas) == 2 else np.nan,
                         r_meas[1] if len(r_meas) == 2 else np.nan,
                         peak_current(ev_d, set_segs), peak_current(ev_d, reset_segs[:1]),
                         reset_temperature(ev_d, reset_segs, tamb), "",
                         cycle_excursion(ev_d, segs, tamb, res.cards.card(d).values)])
    df = pd.DataFrame(rows, columns=list(CYCLE_COLUMNS))
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
