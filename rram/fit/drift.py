"""Is a cycling record a sample of independent cycles?  Its serial correlation and drift.

A variation spec draws every cycle independently (C2C) around each device's values
(D2D), so its distributions are those of a stationary device.  A measured record need not
be one: the TUD device's R_LRS wanders between ~1.2 kΩ and ~3.4 kΩ over hundreds of
cycles (lag-1 rank correlation 0.82), and the first and second halves of its 1000 cycles
differ by a KS distance of 0.68.  No one distribution is within half that distance
of both halves (the KS distance is a metric), so a stationary model that matches the
pooled record still misses a run of cycles like either half by a quarter to a third of
the range; and an interleaved hold-out (every 10th cycle) tests interpolation along the
same slow path, not prediction, which a block of cycles (``--holdout A:B``) does.

Per metric, on each device's cycles in order (pooled over devices):

* ``lag1``: Spearman correlation of each value with the next cycle's (consecutive cycle
  numbers only; each device's values less their median); 0 for independent cycles;
* ``n_effective``: the number of independent cycles that pin a mean as well,
  n·(1 − ρ)/(1 + ρ) for an AR(1) record with ρ = lag1 ≥ 0;
* ``ks_halves``: the KS distance between the first and the second half of each device's
  cycles, beside ``ks_bound``, the distance independent cycles stay below 95 % of the
  time (1.358·√((n₁ + n₂)/(n₁·n₂))); ``drifts`` when it is exceeded.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, spearmanr

from ..metrics import LOG_METRICS
from ..variation import MAX_MEMORY, VariationSpec
from .target import metric_rows, simulated_rows

#: Two-sample KS coefficient of the 95 % level (asymptotic).
KS_95 = 1.358
#: Cycles of the running median in :func:`drift_plot`.
WINDOW = 25


def _device_series(rows: pd.DataFrame, value) -> list[pd.Series]:
    """Each device's finite values as ``value(x)`` of them (an array of the same length),
    indexed by cycle."""
    out = []
    for _, dev in rows.groupby("device", sort=False):
        dev = dev[np.isfinite(dev["value"])]
        if len(dev):
            out.append(pd.Series(value(dev["value"].to_numpy(float)),
                                 index=dev["cycle"].to_numpy(int)).sort_index())
    return out


def _lagged(series: list[pd.Series], lag: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of values ``lag`` cycles apart on the same device, pooled."""
    now, later = [], []
    for s in series:
        after = s.reindex(s.index + lag).to_numpy()
        ok = np.isfinite(after)
        now.append(s.to_numpy()[ok])
        later.append(after[ok])
    return np.concatenate([[], *now]), np.concatenate([[], *later])


def _lag1(rows: pd.DataFrame, log: bool) -> float:
    """Spearman correlation of consecutive cycles' values (``log``: of their logs)
    within each device."""
    # less each device's median: D2D offsets are no serial correlation
    series = _device_series(rows, lambda x: (y := np.log(x) if log else x) - np.median(y))
    a, b = _lagged(series, 1)
    return float(spearmanr(a, b).statistic) if a.size >= 10 else math.nan


def _halves(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The finite values of the first and of the second half of each device's cycles."""
    early, late = [], []
    for _, dev in rows.groupby("device", sort=False):
        dev = dev[np.isfinite(dev["value"])].sort_values("cycle")
        half = len(dev) // 2
        early.append(dev["value"].to_numpy(float)[:half])
        late.append(dev["value"].to_numpy(float)[half:])
    return np.concatenate([[], *early]), np.concatenate([[], *late])


def drift_stats(frame: pd.DataFrame | dict[str, pd.DataFrame]) -> dict[str, dict[str, float]]:
    """Per metric of a distribution table (or of :func:`metric_rows`-like rows):
    ``lag1``, ``n``, ``n_effective``, ``ks_halves``, ``ks_bound`` and ``drifts`` (see the
    module's docstring); NaN where a metric has fewer than 10 consecutive pairs or 10
    values in a half."""
    out = {}
    rows_of = frame if isinstance(frame, dict) else metric_rows(frame)
    for m, rows in rows_of.items():
        if not len(rows):
            continue
        n = int(np.isfinite(rows["value"]).sum())
        rho = _lag1(rows, m in LOG_METRICS)
        early, late = _halves(rows)
        if min(early.size, late.size) >= 10:
            ks = float(ks_2samp(early, late).statistic)
            bound = KS_95 * math.sqrt((early.size + late.size) / (early.size * late.size))
        else:
            ks = bound = math.nan
        r = max(rho, 0.0) if math.isfinite(rho) else math.nan
        out[m] = {"n": n, "lag1": rho, "n_effective": n * (1 - r) / (1 + r),
                  "ks_halves": ks, "ks_bound": bound, "drifts": bool(ks > bound)}
    return out


def autocorrelation(rows: pd.DataFrame, log: bool, lags: int) -> np.ndarray:
    """Correlation of the values' normal scores (ranks within each device, centred)
    ``1..lags`` cycles apart on the same device, pooled over devices."""
    from scipy.stats import norm, rankdata

    series = [s for s in _device_series(
        rows, lambda x: norm.ppf((rankdata(np.log(x) if log else x) - 0.5) / len(x)))
        if len(s) >= 3]
    out = np.full(lags, np.nan)
    for lag in range(1, lags + 1):
        a, b = _lagged(series, lag)
        if a.size >= 10:
            out[lag - 1] = float(np.corrcoef(a, b)[0, 1])
    return out


def slow_part(rows: pd.DataFrame, log: bool) -> tuple[float, float]:
    """(slow share, memory in cycles) of a metric's record: the serial correlation of a
    fast part plus a stationary AR(1) slow part, ρ(ℓ) = slow·φ^ℓ with φ = e^(−1/memory),
    fitted to its :func:`autocorrelation` at lags spaced evenly in log over 1..L (L a
    fifth of the median device record of N cycles, at most 100).  Each device's median is
    taken out first, and with it part of the slow variance: the fit is to the expected
    estimate (ρ(ℓ) − B)/(1 − B), B = slow/N·(1 + 2·Σₖ(1 − k/N)·φᵏ) (the variance of a
    record's mean).  (0, 0) when lag 1 is below 0.1 or a record is under 10 cycles."""
    from scipy.optimize import least_squares

    finite = rows[np.isfinite(rows["value"])]
    n = float(finite.groupby("device")["cycle"].count().median()) if len(finite) else 0.0
    if n < 10:
        return 0.0, 0.0
    rho = autocorrelation(rows, log, int(min(100, max(n // 5, 3))))
    if not rho[0] >= 0.1:
        return 0.0, 0.0
    lag = np.unique(np.geomspace(1, rho.size, 12).round().astype(int))
    lag = lag[np.isfinite(rho[lag - 1])]

    k = np.arange(1, int(n))

    def expected(p: np.ndarray) -> np.ndarray:
        share, phi = p[0], math.exp(-1.0 / p[1])
        # the variance of a record's mean, exact for N values (at most the slow variance)
        bias = share / n * (1 + 2 * np.sum((1 - k / n) * phi ** k))
        return (share * phi ** lag - bias) / max(1 - bias, 1e-6)

    fit = least_squares(lambda p: expected(p) - rho[lag - 1], x0=[min(rho[0], 0.99), 20.0],
                        bounds=([0.0, 1.0], [1.0, MAX_MEMORY]), x_scale=[0.1, 10.0])
    return float(fit.x[0]), float(fit.x[1])


#: Slow shares a fit gives: below the smallest, none; at most the largest, so the fast
#: part can still redraw a value its range truncates (``rram.mc.draws``).
MIN_SHARE, MAX_SHARE = 0.01, 0.95


def slow_parts(carriers: dict[str, str], frame: pd.DataFrame
               ) -> dict[str, tuple[float, float]]:
    """(slow share, memory) of each carrier (``carriers``: metric -> parameter) from the
    record of the metric it carries (:func:`slow_part`), the share at most
    :data:`MAX_SHARE`; a carrier whose share is below :data:`MIN_SHARE` has none."""
    rows = metric_rows(frame)
    out = {}
    for m, p in carriers.items():
        if m in rows:
            share, memory = slow_part(rows[m], m in LOG_METRICS)
            if share >= MIN_SHARE:
                out[p] = (round(min(share, MAX_SHARE), 4), round(memory, 1))
    return out


def with_slow(spec: VariationSpec, parts: dict[str, tuple[float, float]]) -> VariationSpec:
    """``spec`` with the C2C entries of the parameters in ``parts`` given those (slow
    share, memory); a share below :data:`MIN_SHARE` takes the slow part away.  Only the
    split of each C2C variance changes, not its size."""
    out = []
    for v in spec.variations:
        if v.kind == "c2c" and v.parameter in parts:
            share, memory = parts[v.parameter]
            share = min(max(share, 0.0), MAX_SHARE)
            v = dataclasses.replace(v, slow=round(share, 4), memory=memory) \
                if share >= MIN_SHARE else dataclasses.replace(v, slow=0.0, memory=0.0)
        out.append(v)
    return dataclasses.replace(spec, variations=tuple(out))


def drift_lines(stats: dict[str, dict[str, float]]) -> list[str]:
    """The table of :func:`drift_stats`, and a warning when a metric drifts."""
    lines = [f"{'data':10s} {'n':>5s} {'lag-1 ρ':>8s} {'n_eff':>6s} {'KS halves':>10s} "
             f"{'i.i.d. 95 %':>11s}"]
    for m, s in stats.items():
        lines.append(f"{m:10s} {s['n']:5d} {s['lag1']:+8.2f} {s['n_effective']:6.0f} "
                     f"{s['ks_halves']:10.2f} {s['ks_bound']:11.2f}"
                     + ("  drifts" if s["drifts"] else ""))
    drifting = [m for m, s in stats.items() if s["drifts"]]
    if drifting:
        lines.append(f"warning: {', '.join(drifting)} drift: the first and second halves of "
                     "the devices' cycles differ beyond what independent cycles give. A "
                     "spec draws independent cycles: matched to all the data, it misses "
                     "one of the halves by at least half their KS distance; an "
                     "interleaved --holdout shares the drift, a block A:B tests "
                     "prediction.")
    return lines


def drift_plot(frame: pd.DataFrame, folder: str | Path, devices: int = 8,
               model: pd.DataFrame | None = None) -> Path:
    """Each metric against cycle for the first ``devices`` devices: the values and
    their running median over :data:`WINDOW` cycles; with ``model`` (a Monte Carlo
    frame), its first device's record beside them."""
    from ..io import output_folder
    from ..plots import _save, plt

    rows = metric_rows(frame)
    simulated = simulated_rows(model) if model is not None else {}
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 2.2 * len(rows)), sharex=True,
                             squeeze=False)
    for ax, (m, r) in zip(axes[:, 0], rows.items(), strict=True):
        groups = list(r.groupby("device", sort=False))[:devices]
        if m in simulated:
            first = simulated[m][simulated[m]["device"] == simulated[m]["device"].iloc[0]]
            groups.append(("model", first))
        for name, dev in groups:
            dev = dev.sort_values("cycle")
            style = {"color": "0.45"} if name == "model" else {}
            line = ax.plot(dev["cycle"], dev["value"], ".", ms=2, alpha=0.4, **style)[0]
            med = dev["value"].rolling(WINDOW, center=True, min_periods=WINDOW // 2).median()
            ax.plot(dev["cycle"], med, "-", color=line.get_color(), lw=1.2, label=str(name))
        if m in LOG_METRICS:
            ax.set_yscale("log")
        ax.set_ylabel(m)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=7, title=f"device (running median of {WINDOW})",
                      title_fontsize=7)
    axes[-1, 0].set_xlabel("cycle")
    return _save(fig, output_folder(folder) / "variation_drift.png")
