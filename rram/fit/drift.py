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

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, spearmanr

from .target import LOG_METRICS, metric_rows

#: Two-sample KS coefficient of the 95 % level (asymptotic).
KS_95 = 1.358
#: Cycles of the running median in :func:`drift_plot`.
WINDOW = 25


def _lag1(rows: pd.DataFrame, log: bool) -> float:
    """Spearman correlation of consecutive cycles' values (``log``: of their logs)
    within each device."""
    now, later = [], []
    for _, dev in rows.groupby("device", sort=False):
        dev = dev.sort_values("cycle")
        x, c = dev["value"].to_numpy(float), dev["cycle"].to_numpy(int)
        x = np.log(x) if log else x
        x = x - np.nanmedian(x)  # within the device: D2D offsets are no serial correlation
        pair = (np.diff(c) == 1) & np.isfinite(x[:-1]) & np.isfinite(x[1:])
        now.append(x[:-1][pair])
        later.append(x[1:][pair])
    a, b = np.concatenate(now), np.concatenate(later)
    return float(spearmanr(a, b).statistic) if a.size >= 10 else math.nan


def _halves(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The finite values of the first and of the second half of each device's cycles."""
    early, late = [], []
    for _, dev in rows.groupby("device", sort=False):
        dev = dev[np.isfinite(dev["value"])].sort_values("cycle")
        half = len(dev) // 2
        early.append(dev["value"].to_numpy(float)[:half])
        late.append(dev["value"].to_numpy(float)[half:])
    return np.concatenate(early), np.concatenate(late)


def drift_stats(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per metric of a distribution table: ``lag1``, ``n``, ``n_effective``,
    ``ks_halves``, ``ks_bound`` and ``drifts`` (see the module's docstring); NaN where a
    metric has fewer than 10 consecutive pairs or 10 values in a half."""
    out = {}
    for m, rows in metric_rows(frame).items():
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


def drift_plot(frame: pd.DataFrame, folder: str | Path, devices: int = 8) -> Path:
    """Each metric against cycle for the first ``devices`` devices: the values and
    their running median over :data:`WINDOW` cycles."""
    from ..io import output_folder
    from ..plots import _save, plt

    rows = metric_rows(frame)
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 2.2 * len(rows)), sharex=True,
                             squeeze=False)
    for ax, (m, r) in zip(axes[:, 0], rows.items(), strict=True):
        for k, (name, dev) in enumerate(r.groupby("device", sort=False)):
            if k >= devices:
                break
            dev = dev.sort_values("cycle")
            line = ax.plot(dev["cycle"], dev["value"], ".", ms=2, alpha=0.4)[0]
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
