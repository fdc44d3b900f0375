"""What a variation fit matches: the measured per-cycle metrics of a distribution file
and their statistics (medians, robust spreads; nested, the spreads within and between
devices of :mod:`rram.fit.nested`).

Measured spreads divide every mismatch, so they must not be zero.  Instruments round
(V_reset to 0.1 V, a resistance to three digits), and a column where most values tie
has an interquartile range of zero although it varies: a measured spread is floored at
the spread the rounding alone gives, the data's resolution / √12 (the resolution is the
median step between its distinct values, :func:`resolution`).  A metric with a single
value has no resolution and no spread: :func:`target_of` refuses it and names the
``--skip`` that leaves it out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..checks import is_number
from ..errors import InputError
from ..metrics import LOG_METRICS, METRICS, did_not_switch, failed_reset_share, scaled
from .nested import CONDITIONAL, check_design, conditional_d2d, nested_stats

#: Quantiles matched beside the median (of ln R for resistances): the shape, tails included.
QUANTILES = (0.05, 0.25, 0.75, 0.95)
#: Rank correlations matched: (resistance, voltage, cycles from the resistance's read to
#: the voltage's operation in a simulated cycle, SET then RESET).  A measured cycle reads
#: the HRS before its SET and the LRS before its RESET, so both pair on one data row.
#: The HRS is the gap the next SET must close; the LRS is the CF the RESET must dissolve.
RANK_PAIRS = (("r_hrs_ohm", "v_set_V", 1), ("r_lrs_ohm", "v_reset_V", 0))


def resolution(x: np.ndarray) -> float:
    """The median step between the distinct finite values of ``x`` (the rounding of a
    tie-heavy column); 0 when there is a single value."""
    u = np.unique(np.asarray(x, float)[np.isfinite(x)])
    return float(np.median(np.diff(u))) if u.size > 1 else 0.0


def robust_sigma(x: np.ndarray) -> float:
    q1, q3 = np.nanpercentile(x, [25, 75])
    return float((q3 - q1) / 1.349)


def pair_name(resistance: str, voltage: str) -> str:
    return f"{resistance}~|{voltage}|"


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman correlation of the finite pairs of ``a`` and ``b``; NaN with fewer than
    10 pairs or a constant side (no ranks to correlate)."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 10 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return math.nan
    return float(spearmanr(a[ok], b[ok]).statistic)


def rank_correlations(frame: pd.DataFrame) -> dict[str, float]:
    """Spearman correlation of each :data:`RANK_PAIRS` resistance with the magnitude of
    its voltage ``lag`` cycles later on the same device, in a simulated frame (one row
    per cycle: ``device, cycle`` and the metrics)."""
    ordered = frame.sort_values(["device", "cycle"])
    out = {}
    for r, v, lag in RANK_PAIRS:
        if r in ordered and v in ordered:
            later = ordered.groupby("device")[v].shift(-lag) if lag else ordered[v]
            out[pair_name(r, v)] = _spearman(ordered[r], np.abs(later))
    return out


def conditional_stats(paired: Mapping[str, np.ndarray], devices: np.ndarray,
                      metrics: tuple[str, ...]) -> dict[str, float]:
    """:func:`rram.fit.nested.conditional_d2d` of each :data:`CONDITIONAL` pair whose
    two metrics are in ``metrics``, from ``paired`` values (one row per cycle of
    ``devices``)."""
    return {m: conditional_d2d(scaled(m, paired[m]), scaled(given, paired[given]), devices)
            for m, given in CONDITIONAL if m in metrics and given in metrics}


def stats_of(values: dict[str, np.ndarray], devices: dict[str, np.ndarray] | None = None
             ) -> dict[str, dict[str, float]]:
    """Median, robust spread (ln-σ for resistances, σ for voltages) and the plain
    standard deviation of each metric; with ``devices`` (the device of each value) also
    the nested spreads of :func:`rram.fit.nested.nested_stats`."""
    out = {}
    for m, x in values.items():
        x = np.asarray(x, float)
        ok = np.isfinite(x)
        y = scaled(m, x[ok])
        out[m] = {"median": float(np.median(x[ok])), "spread": robust_sigma(y),
                  "std": float(np.std(y, ddof=1)), "n": int(ok.sum()),
                  "quantiles": [float(v) for v in np.quantile(y, QUANTILES)]}
        if devices is not None:
            out[m].update(nested_stats(y, np.asarray(devices[m])[ok]))
    return out


@dataclass(frozen=True)
class Target:
    """Measured per-cycle values of each metric (arrays, NaN where not measured) and
    the device of each value."""

    values: dict[str, np.ndarray]
    devices: dict[str, np.ndarray]
    skip: tuple[str, ...] = ()
    #: (metric, weight) pairs; a metric not listed weighs 1
    weights: tuple[tuple[str, float], ...] = ()
    #: (devices, cycles per device) of a nested fit (:func:`check_design`), else None
    design: tuple[int, int] | None = None
    #: (pair name, measured Spearman correlation) of the :data:`RANK_PAIRS` measured
    ranks: tuple[tuple[str, float], ...] = ()
    #: share of the measured SETs that did not switch (``no_set``), NaN if unknown
    failed_sets: float = math.nan
    #: share of the measured RESETs after a switched SET that did not switch
    #: (:func:`rram.metrics.failed_reset_share`), NaN if unknown
    failed_resets: float = math.nan
    #: nested: (metric, its measured ``d2d_given``) of the :data:`CONDITIONAL` pairs
    conditional: tuple[tuple[str, float], ...] = ()

    @property
    def spreads(self) -> tuple[tuple[str, str], ...]:
        """(spread statistic, variation kind it is fitted by): the total spread by one σ
        per carrier, or, nested, the spread within devices by the C2C σ and the spread
        of the device medians by the D2D σ."""
        return (("within", "c2c"), ("d2d", "d2d")) if self.design else (("spread", ""),)

    def weight(self, metric: str) -> float:
        return dict(self.weights).get(metric, 1.0)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics fitted: measured at least 20 times and not skipped."""
        return tuple(m for m in METRICS if m not in self.skip
                     and np.isfinite(self.values.get(m, [np.nan])).sum() >= 20)

    def spread_floor(self, metric: str) -> float:
        """The spread rounding alone gives (resolution/√12, of ln R for resistances)."""
        x = np.asarray(self.values[metric], float)
        x = x[np.isfinite(x)]
        return resolution(np.log(x) if metric in LOG_METRICS else x) / math.sqrt(12)

    def stats(self) -> dict[str, dict[str, float]]:
        """:func:`stats_of` of the data, each spread floored at :meth:`spread_floor`
        (every mismatch is divided by it)."""
        out = stats_of({m: self.values[m] for m in self.metrics},
                       self.devices if self.design else None)
        for m, s in out.items():
            for name in {"spread", *(k for k, _ in self.spreads)}:
                s[name] = max(s[name], self.spread_floor(m))
            if self.design:  # below a tenth of the medians' spread, D2D is unresolved
                s["d2d"] = max(s["d2d"], 0.1 * s["between"])
        for m, value in self.conditional:
            if m in out:
                out[m]["d2d_given"] = max(value, self.spread_floor(m),
                                          0.1 * out[m]["between"])
        return out

    def c2c_fraction(self, metric: str) -> float:
        """Share of the variance within devices (1 with a single device)."""
        x, dev = np.asarray(self.values[metric], float), self.devices[metric]
        ok = np.isfinite(x)
        x, dev = (np.log(x[ok]) if metric in LOG_METRICS else x[ok]), dev[ok]
        if len(set(dev)) < 2:
            return 1.0
        frame = pd.DataFrame({"x": x, "d": dev})
        within = frame.groupby("d")["x"].var(ddof=1).mean()
        total = frame["x"].var(ddof=1)
        return float(min(1.0, within / total)) if total > 0 else 1.0


#: The rows of a distribution table that carry each metric: a resistance on the rows of
#: its state; V_set beside the LRS it made, V_reset beside the HRS row (see
#: :data:`RANK_PAIRS`).
METRIC_STATES = {"r_lrs_ohm": ("LRS", "resistance_ohm"), "r_hrs_ohm": ("HRS", "resistance_ohm"),
                 "v_set_V": ("LRS", "v_set_V"), "v_reset_V": ("HRS", "v_reset_V")}


def metric_rows(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each metric of a distribution table (:func:`rram.fit.data.load_distribution`) as
    ``device, cycle, value`` rows, in the table's order; a voltage column the table
    does not have is left out."""
    out = {}
    for m, (state, col) in METRIC_STATES.items():
        if col in frame.columns:
            rows = frame[frame["state"] == state]
            out[m] = pd.DataFrame({"device": rows["device"].to_numpy(),
                                   "cycle": rows["cycle"].to_numpy(int),
                                   "value": rows[col].to_numpy(float)})
    return out


def simulated_rows(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The metrics of a Monte Carlo frame (one row per device and cycle) as
    :func:`rram.fit.target.metric_rows` gives a measured table's."""
    return {m: pd.DataFrame({"device": frame["device"].to_numpy(),
                             "cycle": frame["cycle"].to_numpy(int),
                             "value": frame[m].to_numpy(float)})
            for m in METRICS if m in frame.columns}


def _data_ranks(lrs: pd.DataFrame, hrs: pd.DataFrame, skip: tuple[str, ...]
                ) -> tuple[tuple[str, float], ...]:
    """The measured rank correlations, each pair on one row (see :data:`RANK_PAIRS`)."""
    out = []
    for rows, (r, v, _) in zip((hrs, lrs), RANK_PAIRS, strict=True):
        if v in rows.columns and r not in skip and v not in skip:
            rho = _spearman(rows["resistance_ohm"], np.abs(rows[v]))
            if math.isfinite(rho):
                out.append((pair_name(r, v), rho))
    return tuple(out)


#: The range of a metric's weight: beyond it one metric alone decides the fit (a weight
#: of 1e308 overflowed the least-squares solver).
MIN_WEIGHT, MAX_WEIGHT = 1e-3, 1e3


def target_of(frame: pd.DataFrame, skip: tuple[str, ...] = (),
              weights: Mapping[str, float] | None = None, nested: bool = False) -> Target:
    """From :func:`rram.fit.data.load_distribution` rows; ``skip`` leaves metrics out,
    ``weights`` (metric -> weight > 0, default 1) weighs their mismatches.  A metric
    whose values are all equal has no spread to fit and is refused (name it in
    ``skip``).  ``nested``: fit D2D and C2C apart (≥ 2 devices with ≥ 2 cycles each)."""
    source = frame.attrs.get("source", "the distribution data")
    weights = dict(weights or {})
    unknown = [m for m in (*skip, *weights) if m not in METRICS]
    if unknown:
        raise InputError(f"unknown metric(s) {', '.join(unknown)} (valid: {', '.join(METRICS)})")
    bad = [f"{m}={w!r}" for m, w in weights.items()
           if not (is_number(w) and MIN_WEIGHT <= w <= MAX_WEIGHT)]
    if bad:
        raise InputError(f"weight {', '.join(bad)}: a weight must be a number within "
                         f"[{MIN_WEIGHT:g}, {MAX_WEIGHT:g}] (relative to 1)")
    skipped = [m for m in weights if m in skip]
    if skipped:
        raise InputError(f"weight of {', '.join(skipped)}: that metric is skipped (--skip); "
                         "weigh only the metrics that are fitted")
    lrs, hrs = frame[frame["state"] == "LRS"], frame[frame["state"] == "HRS"]
    rows = metric_rows(frame)
    values = {m: r["value"].to_numpy(float) for m, r in rows.items()}
    devices = {m: r["device"].to_numpy() for m, r in rows.items()}
    design = check_design(frame) if nested else None
    judged = "reason" in lrs.columns and len(lrs) > 0
    failed = did_not_switch(lrs["reason"]).mean() if judged else math.nan
    failed_reset = failed_reset_share(lrs["reason"]) if judged else math.nan
    target = Target(values, devices, tuple(skip), tuple(sorted(weights.items())), design,
                    _data_ranks(lrs, hrs, skip), float(failed), failed_resets=failed_reset)
    if design:  # the conditional D2D spreads, their metrics paired by cycle
        conditional = []
        for m, given in CONDITIONAL:
            if m in target.metrics and given in target.metrics:
                both = rows[m].merge(rows[given], on=["device", "cycle"])
                conditional.append((m, conditional_d2d(
                    scaled(m, both["value_x"]), scaled(given, both["value_y"]),
                    both["device"].to_numpy())))
        target = replace(target, conditional=tuple(
            (m, v) for m, v in conditional if math.isfinite(v)))
    if not target.metrics:
        raise InputError("nothing to fit: every metric is skipped or has fewer than 20 values")
    for m in target.metrics:
        if target.spread_floor(m) == 0:  # a single value: no resolution, no spread
            x = np.asarray(target.values[m], float)
            raise InputError(f"{m} has zero spread in {source}: all "
                             f"{int(np.isfinite(x).sum())} values are "
                             f"{x[np.isfinite(x)][0]:g}; use --skip {m}")
        if design and stats_of({m: target.values[m]}, target.devices)[m]["devices"] < 2:
            raise InputError(f"{m} in {source}: fewer than 2 devices have >= 2 values of "
                             f"it, no D2D/C2C split; use --skip {m}")
    return target


