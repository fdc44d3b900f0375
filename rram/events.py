"""Switching events and the switching rule, defined once for every engine and the data.

Plain numpy (no numba): the Python engine's integrator records the same events at its
own steps with these constants, the ngspice runner computes them with
:func:`segment_events` from ngspice's time points, and :func:`switching_rule` decides,
for every engine and for ``rram mc``, whether a SET or RESET happened at all.

Per stimulus segment:

* ``imax``/``timax``: the peak |I| and its time; ``dtmax``: the peak temperature rise;
* ``tcross``: the first time |I| reaches the segment's threshold (half its compliance:
  :data:`SET_FRACTION`), interpolated between points;
* ``tdrop``: the first time |I| falls below :data:`DROP` times its peak so far, once that
  peak exceeds :data:`DROP_FLOOR` (the onset of a RESET), interpolated;
* ``tclose``: the first time the gap closes below :data:`GAP_CLOSED_NM` (interpolated):
  the SET itself, which marks V_set when the compliance is never reached (the current
  alone is a poor marker then: capacitive currents at the stimulus' breakpoints rise as
  steeply as the SET);
* the state, cell voltage and current at the segment's end.
"""

from __future__ import annotations

import numpy as np

#: V_set is where |I| first reaches this fraction of the SET compliance.
SET_FRACTION = 0.5
#: V_reset is where |I| first falls below this fraction of its peak so far ...
DROP = 0.9
#: ... counted once that peak exceeds this current (A; far above numerical noise at 0 V).
DROP_FLOOR = 1e-9
#: The gap has closed (the SET) below this width (nm): a few hopping decay lengths
#: short of an HRS gap, a few of the states' bound widths above contact.
GAP_CLOSED_NM = 0.1
#: A SET (RESET) happened only if the resistance fell (rose) at least this much across
#: it; otherwise its switching voltage is not reported.
SWITCH_RATIO = 2.0

#: Reasons of :func:`switching_rule` (the ``reason`` column of the metrics).
NO_SET = "no_set"
NO_RESET = "no_reset"

#: Per-segment events, as every engine records them.
EVENT_KEYS = ("imax", "timax", "tcross", "tdrop", "tclose", "dtmax", "gap_end",
              "width_end", "vcell_end", "iend")


def segment_events(t: np.ndarray, current: np.ndarray, vcell: np.ndarray,
                   states: np.ndarray, breakpoints: np.ndarray,
                   thresholds: np.ndarray) -> dict[str, np.ndarray]:
    """Per-segment events from waveforms sampled at a simulator's time points.

    ``states`` columns are gap (nm), width (nm) and temperature rise (K);
    ``breakpoints`` are the stimulus' segment boundaries, which every simulator hits, so
    end values are exact samples.
    """
    nseg = breakpoints.size - 1
    ev = {k: np.full(nseg, np.nan) for k in EVENT_KEYS}
    a = np.abs(current)
    for k in range(nseg):
        lo = np.searchsorted(t, breakpoints[k], side="left")
        hi = np.searchsorted(t, breakpoints[k + 1], side="right")
        if hi <= lo:
            continue
        seg = slice(lo, hi)
        j = lo + int(np.argmax(a[seg]))
        ev["imax"][k], ev["timax"][k] = a[j], t[j]
        ev["dtmax"][k] = float(np.max(states[seg, 2]))
        above = np.flatnonzero(a[seg] >= thresholds[k])
        if above.size:
            m = lo + int(above[0])
            if m == lo:
                ev["tcross"][k] = t[m]
            else:
                f = (thresholds[k] - a[m - 1]) / (a[m] - a[m - 1])
                ev["tcross"][k] = t[m - 1] + f * (t[m] - t[m - 1])
        # first fall below DROP x the peak so far (the boundary point belongs to the
        # previous segment)
        inner = slice(lo + 1, hi)
        level = DROP * np.maximum.accumulate(a[inner])
        ok = np.maximum.accumulate(a[inner]) >= DROP_FLOOR
        fell = np.flatnonzero(ok[1:] & (a[inner][1:] < level[1:]) & (a[inner][:-1] >= level[1:]))
        if fell.size:
            m = lo + 2 + int(fell[0])
            lv = level[fell[0] + 1]
            ev["tdrop"][k] = t[m - 1] + (a[m - 1] - lv) / (a[m - 1] - a[m]) * (t[m] - t[m - 1])
        gap = states[seg, 0]
        below = np.flatnonzero((gap[1:] < GAP_CLOSED_NM) & (gap[:-1] >= GAP_CLOSED_NM))
        if below.size:
            m = lo + int(below[0])
            f = (gap[m - lo] - GAP_CLOSED_NM) / (gap[m - lo] - gap[m - lo + 1])
            ev["tclose"][k] = t[m] + f * (t[m + 1] - t[m])
        end = hi - 1
        ev["gap_end"][k], ev["width_end"][k] = states[end, 0], states[end, 1]
        ev["vcell_end"][k], ev["iend"][k] = vcell[end], current[end]
    return ev


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
    """
    v_set, v_reset = np.asarray(v_set, float), np.asarray(v_reset, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        did_set = np.asarray(r_before, float) >= SWITCH_RATIO * np.asarray(r_lrs, float)
        did_reset = np.asarray(r_hrs, float) >= SWITCH_RATIO * np.asarray(r_lrs, float)
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
