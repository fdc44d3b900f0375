"""Two modes in a measured distribution: a cell whose record sits in one of two
configurations for many cycles at a time.

The TUD cell's R_LRS is bimodal: ~1.3 kΩ for most cycles and ~3.2 kΩ for ~30 % of them
(cycles ~600–925 in one stretch), with V_reset 0.7 V against 1.15 V in the same cycles.
No unimodal carrier makes that shape, so a spec may have two configurations (its
``mode``, each C2C entry's ``mode_step``: :mod:`rram.variation`).  This module measures
the modes of a sample: a two-component normal mixture of the values (ln R for resistances),
fitted by expectation–maximisation, and Ashman's D = √2·|μ₂ − μ₁|/√(σ₁² + σ₂²), the
separation of the components in their widths: D > :data:`MIN_SEPARATION` is bimodal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..metrics import LOG_METRICS
from .target import resolution, robust_sigma, simulated_rows

#: Ashman's D above which two components are separate modes (a mixture of two equal
#: normals is bimodal for D > 2).
MIN_SEPARATION = 2.0
#: Smallest share of the smaller mode: fewer cycles are outliers, or one excursion of a
#: drifting record (2 devices x 200 cycles of an AR(1) drift over 40 cycles showed a
#: 7 % "mode"), not a configuration.
MIN_MODE_SHARE = 0.1
#: Values further outside the 5-95 % range than this many times its width are left out
#: (failed SETs; the range holds both modes when the smaller has >= 5 % of the values).
TRIM = 3.0
#: EM iterations (converged long before on any record measured here).
ITERATIONS = 200
#: Correlation time (cycles) of configurations of a record that does not drift: none.
MIN_MEMORY = 1e-3


@dataclass(frozen=True)
class Modes:
    """A two-component normal mixture: the upper component's share, the centres and
    widths (metric units; ln for resistances)."""

    share: float
    lower: float
    upper: float
    sigma_lower: float
    sigma_upper: float

    @property
    def separation(self) -> float:
        """Distance of the centres (metric units; ln for resistances)."""
        return self.upper - self.lower

    @property
    def ashman_d(self) -> float:
        return math.sqrt(2.0) * self.separation / math.hypot(self.sigma_lower,
                                                             self.sigma_upper)

    def components(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The lower and the upper component's weighted densities at ``x`` (times
        √(2π): their sum is the mixture's density up to that constant)."""
        return (_weighted(x, 1 - self.share, self.lower, self.sigma_lower),
                _weighted(x, self.share, self.upper, self.sigma_upper))

    @property
    def bimodal(self) -> bool:
        """Two modes: components apart (Ashman's D > :data:`MIN_SEPARATION`), each with
        at least :data:`MIN_MODE_SHARE` of the cycles, and a density with a dip between them
        (a wide component under a narrow one is a skewed tail, not a mode)."""
        if not (self.ashman_d > MIN_SEPARATION
                and MIN_MODE_SHARE <= self.share <= 1.0 - MIN_MODE_SHARE):
            return False
        f = sum(self.components(np.linspace(self.lower, self.upper, 201)))
        return bool(f.min() < min(f[0], f[-1]))


def _weighted(x: np.ndarray, weight: float, mu: float, sd: float) -> np.ndarray:
    """A normal component's weighted density at ``x``, times √(2π)."""
    return np.exp(_log_weighted(x, weight, mu, sd))


def _log_weighted(x: np.ndarray, weight: float, mu: float, sd: float) -> np.ndarray:
    """ln of :func:`_weighted`."""
    return math.log(weight) - 0.5 * ((np.asarray(x, float) - mu) / sd) ** 2 - math.log(sd)


def mixture(values: np.ndarray, share: float | None = None) -> Modes | None:
    """The two-component mixture of ``values`` (finite ones, within :data:`TRIM` widths
    of their 5-95 % range): expectation–maximisation from splits at several quantiles (and at
    ``1 − share``, if given), the most likely result; None for fewer than 10 values or a
    constant sample."""
    x = np.asarray(values, float)
    x = x[np.isfinite(x)]
    if x.size < 10:
        return None
    q5, q95 = np.quantile(x, [0.05, 0.95])
    width = q95 - q5
    if not width > 0:
        return None
    x = x[(x >= q5 - TRIM * width) & (x <= q95 + TRIM * width)]
    starts = (*STARTS, share) if share is not None else STARTS
    # a component no wider than the values' rounding has collapsed onto repeated values
    floor = max(1e-3 * width, resolution(x))
    fits = [f for f in (_em(x, s, floor) for s in starts) if f is not None]
    if not fits:
        return None
    return max(fits, key=lambda f: f[0])[1]


#: Upper shares the EM starts from.
STARTS = (0.5, 0.2, 0.35, 0.65, 0.8)


def _em(x: np.ndarray, share: float, floor: float) -> tuple[float, Modes] | None:
    """EM of a two-normal mixture from a split of ``x`` at its ``1 − share`` quantile:
    (log-likelihood, mixture), None when a side is empty.  ``floor``: the smallest
    width (keeps a component from collapsing onto one value)."""
    split = np.quantile(x, 1.0 - share)
    lo, hi = x[x <= split], x[x > split]
    if lo.size < 2 or hi.size < 2:
        return None
    w = hi.size / x.size
    mu = np.array([lo.mean(), hi.mean()])
    sd = np.maximum(np.array([lo.std(), hi.std()]), floor)
    for _ in range(ITERATIONS):
        dens = np.stack([_weighted(x, 1 - w, mu[0], sd[0]), _weighted(x, w, mu[1], sd[1])])
        resp = dens / np.maximum(dens.sum(axis=0), 1e-300)
        n = resp.sum(axis=1)
        if np.any(n < 1.0):
            break
        w_new = float(n[1] / x.size)
        mu = (resp @ x) / n
        sd = np.maximum(np.sqrt((resp * (x - mu[:, None]) ** 2).sum(axis=1) / n), floor)
        converged = abs(w_new - w) < 1e-9
        w = w_new
        if converged:
            break
    dens = _weighted(x, 1 - w, mu[0], sd[0]) + _weighted(x, w, mu[1], sd[1])
    loglik = float(np.sum(np.log(np.maximum(dens, 1e-300))))
    if np.any(sd <= 1.01 * floor):
        return None
    if mu[0] > mu[1]:
        mu, sd, w = mu[::-1], sd[::-1], 1.0 - w
    return loglik, Modes(float(w), float(mu[0]), float(mu[1]), float(sd[0]), float(sd[1]))


def metric_values(values: np.ndarray, metric: str) -> np.ndarray:
    """A metric's values as the fit reads them: ln R for resistances."""
    v = np.asarray(values, float)
    return np.log(np.where(v > 0, v, np.nan)) if metric in LOG_METRICS else v


def boundary(modes: Modes) -> float:
    """The value between the centres where both components are equally likely (the
    density's dip): values above it are of the upper configuration."""
    x = np.linspace(modes.lower, modes.upper, 1001)
    # in logs: components many widths apart underflow to 0 between them
    gap = (_log_weighted(x, modes.share, modes.upper, modes.sigma_upper)
           - _log_weighted(x, 1 - modes.share, modes.lower, modes.sigma_lower))
    return float(x[np.argmin(np.abs(gap))])


def upper_of(values: np.ndarray, modes: Modes) -> np.ndarray:
    """Whether each value (metric units, ln R) is above the :func:`boundary` (NaN:
    False)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(values, float) > boundary(modes)


@dataclass(frozen=True)
class Configurations:
    """Two configurations of a cell, seen in a bimodal resistance (``metric``): its
    mixture (``modes``), the correlation time of the configuration (``memory``, cycles)
    and, for every metric, :func:`by_configuration` statistics (``stats``)."""

    metric: str
    modes: Modes
    memory: float
    stats: dict[str, dict[str, float]]

    @property
    def contrast(self) -> dict[str, float]:
        """Each metric's median in the upper configuration less that in the lower."""
        return {m: st["upper"] - st["lower"] for m, st in self.stats.items()}


def by_configuration(rows: Mapping[str, pd.DataFrame], metric: str, modes: Modes
                     ) -> dict[str, dict[str, float]]:
    """Each metric's median (ln R for resistances) in the cycles of the lower and of the
    upper configuration (``lower``, ``upper``) and its robust spread in each (``spread``,
    ``upper_spread``); a cycle's configuration is that of its ``metric`` value (``rows``:
    metric -> ``device, cycle, value`` rows; the configuration lasts for many cycles, so
    a metric measured on the other row of the cycle takes that row's label)."""
    label = rows[metric].assign(upper=upper_of(metric_values(rows[metric]["value"], metric),
                                               modes))[["device", "cycle", "upper"]]
    label = label.drop_duplicates(["device", "cycle"])
    out = {}
    for m, r in rows.items():
        joined = r.merge(label, on=["device", "cycle"], how="inner")
        x = metric_values(joined["value"], m)
        up, ok = joined["upper"].to_numpy(bool), np.isfinite(x)
        if (up & ok).sum() >= 5 and (~up & ok).sum() >= 5:
            out[m] = {"lower": float(np.median(x[~up & ok])),
                      "upper": float(np.median(x[up & ok])),
                      "spread": robust_sigma(x[~up & ok]),
                      "upper_spread": robust_sigma(x[up & ok])}
    return out


def measured_configurations(rows: Mapping[str, pd.DataFrame],
                            carriers: Mapping[str, str],
                            slow: Mapping[str, tuple[float, float]]
                            ) -> Configurations | None:
    """The two configurations of a measured record (``rows``: metric -> ``device, cycle,
    value``), or None: the first resistance whose distribution is bimodal labels them
    (two configurations of the CF are two resistances; the voltages follow), its
    carrier's slow memory is theirs (none: independent from cycle to cycle)."""
    for metric in (m for m in LOG_METRICS if m in rows and m in carriers):
        modes = mixture(metric_values(rows[metric]["value"], metric))
        if modes is not None and modes.bimodal:
            memory = slow.get(carriers[metric], (0.0, MIN_MEMORY))[1]
            stats = by_configuration(rows, metric, modes)
            if metric in stats and len(stats) > 1:  # both configurations seen enough
                return Configurations(metric, modes, max(memory, MIN_MEMORY), stats)
    return None


def simulated_configurations(frame: pd.DataFrame, config: Configurations
                             ) -> dict[str, dict[str, float]]:
    """:func:`by_configuration` of a simulated frame, its configurations labelled by a
    mixture of its own ``config.metric`` values (started at the measured share); a
    metric whose simulated configurations cannot be told apart has its overall median
    and spread in both."""
    rows = simulated_rows(frame)
    modes = mixture(metric_values(rows[config.metric]["value"], config.metric),
                    config.modes.share)
    got = by_configuration(rows, config.metric, modes) if modes is not None else {}
    for m in config.stats.keys() - got.keys():
        x = metric_values(rows[m]["value"], m)
        x = x[np.isfinite(x)]
        median = float(np.median(x)) if x.size else math.nan
        spread = robust_sigma(x) if x.size else math.nan
        got[m] = {"lower": median, "upper": median, "spread": spread, "upper_spread": spread}
    return {m: got[m] for m in config.stats}


def configuration_lines(config: Configurations) -> list[str]:
    """The measured configurations, for the log."""
    m = config.modes
    return [f"two configurations, seen in {config.metric} (Ashman's D {m.ashman_d:.2f}): "
            f"upper {100 * m.share:.0f} % of cycles, correlation time {config.memory:.3g} "
            "cycles; upper - lower median: " + ", ".join(
                f"{k} {v:+.3g}" for k, v in config.contrast.items())]


__all__ = [
    "MIN_MODE_SHARE",
    "MIN_SEPARATION",
    "Configurations",
    "Modes",
    "boundary",
    "by_configuration",
    "configuration_lines",
    "measured_configurations",
    "metric_values",
    "mixture",
    "simulated_configurations",
    "upper_of",
]
