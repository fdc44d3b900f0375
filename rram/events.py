"""Switching events, defined once for every engine and the data.

Plain numpy (no numba): the Python engine's integrator records the same events at its
own steps with these constants, and the ngspice runner computes them with
:func:`segment_events` from ngspice's time points; :mod:`rram.metrics` turns them into
the figures of a cycle and decides whether a SET or RESET happened at all.

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

from collections.abc import Sequence

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

#: The end-of-segment column of each optional block's state (rram.model.OPTIONAL_STATES):
#: what the next run of a cell starts from (its u0, wear0); 0 in a model without it.
OPTIONAL_END_COLUMNS = {"dsettle": "disorder_end", "dwear": "wear_end"}

#: Per-segment events, as every engine records them.
EVENT_KEYS = ("imax", "timax", "tcross", "tdrop", "tclose", "dtmax", "gap_end",
              "width_end", *OPTIONAL_END_COLUMNS.values(), "vcell_end", "iend")


def segment_events(t: np.ndarray, current: np.ndarray, vcell: np.ndarray,
                   states: np.ndarray, breakpoints: np.ndarray,
                   thresholds: np.ndarray, optional: Sequence[str] = ()
                   ) -> dict[str, np.ndarray]:
    """Per-segment events from waveforms sampled at a simulator's time points.

    ``states`` columns are gap (nm), width (nm), temperature rise (K) and then the
    optional blocks' states ``optional`` names (nodes of :data:`OPTIONAL_END_COLUMNS`,
    from their anchors: the relaxing disorder in nm, the wear; the others' are 0);
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
        for node, column in OPTIONAL_END_COLUMNS.items():
            ev[column][k] = states[end, 3 + optional.index(node)] if node in optional else 0.0
        ev["vcell_end"][k], ev["iend"][k] = vcell[end], current[end]
    return ev
