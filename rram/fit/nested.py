"""Statistics of nested data (many devices, many cycles each): the cycle-to-cycle (C2C)
spread within devices and the device-to-device (D2D) spread between them.

Per metric (ln R for resistances, V for voltages):

* ``within``: the C2C σ, from the deviations of each value from its own device's median,
  pooled over devices (interquartile range / 1.349: robust to stray cycles), divided by
  what that gives for standard normal samples of the same size (the median sits closer
  to its own device's values than the true centre: −13 % at 5 cycles, −1 % at 50);
* ``between``: the standard deviation of the per-device medians, winsorized at 3 robust
  σ (:func:`winsorized_sigma`).  A median is already robust within its device, and the
  SD is as efficient as a scale gets on normal data: the interquartile range of 64
  medians would carry ~15 % noise instead of ~9 %.  A stray device is pulled in to 3 σ;
* ``d2d``: the D2D σ, ``between`` without the C2C noise a median of n cycles still
  carries: √(between² − k(n)·within²), k(n) the variance of the median of n standard
  normal samples (≈ π/(2n) for large n).  With it a model can be compared with data of
  another design (the nested fit simulates more devices with fewer cycles);
* ``d2d_given`` (:func:`conditional_d2d`, for the pairs of :data:`CONDITIONAL`): the D2D
  σ of one metric that the devices' medians of another leave, from the D2D covariance
  (the medians' covariance less what their C2C noise gives, from the covariance
  within devices, the two metrics paired by cycle).  A carrier of the second that
  moves the first too (the CF's heating ``kth`` sets R_LRS and, through the RESET,
  R_HRS) is then taken out with its sample of devices, instead of leaving the first's
  own D2D carrier a small, noisy remainder of its total.

The factors of n are measured once per n on standard normal samples drawn from a fixed
seed (:func:`median_factors`, :func:`median_covariance`).

Pure functions of arrays; the design check of a table is :func:`check_design`.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from ..errors import InputError

#: Winsorizing bound of :func:`winsorized_sigma` (robust σ).
WINSOR = 3.0
#: Seed and size of the standard normal samples of :func:`median_factors`.
FACTOR_SEED, FACTOR_VALUES = 20261201, 4_000_000


def _robust_sigma(x: np.ndarray) -> float:
    q1, q3 = np.percentile(x, [25, 75])
    return float((q3 - q1) / 1.349)


def _winsorized(x: np.ndarray) -> np.ndarray:
    """``x`` clipped to median ± :data:`WINSOR` robust σ (interquartile range / 1.349)."""
    centre, s = float(np.median(x)), _robust_sigma(x)
    return np.clip(x, centre - WINSOR * s, centre + WINSOR * s) if s > 0 else x


def winsorized_sigma(x: np.ndarray) -> float:
    """Standard deviation (ddof 1) of ``x`` clipped to median ± :data:`WINSOR` robust σ
    (interquartile range / 1.349); NaN with fewer than 2 values."""
    x = np.asarray(x, float)
    if x.size < 2:
        return math.nan
    return float(np.std(_winsorized(x), ddof=1))


@lru_cache(maxsize=256)
def median_factors(n: int) -> tuple[float, float]:
    """(within, k) of samples of ``n`` standard normal values: the pooled robust σ of
    the deviations from each sample's median, and the variance of the median."""
    z, med = _normal_samples(n)
    return _robust_sigma((z - med[:, None]).ravel()), float(np.var(med))


@lru_cache(maxsize=1024)
def median_covariance(n: int, rho: float) -> float:
    """The covariance of the medians of ``n`` pairs of standard normal values with
    correlation ``rho`` (≥ 0; (2/π)·arcsin(ρ)·k(n) for large n)."""
    z, med = _normal_samples(n)
    w = rho * z + math.sqrt(max(1.0 - rho * rho, 0.0)) * _other_samples(n)
    return float(np.cov(med, np.median(w, axis=1))[0, 1])


@lru_cache(maxsize=2)
def _other_samples(n: int) -> np.ndarray:
    """Independent of :func:`_normal_samples`' (the partner of each pair)."""
    return np.random.default_rng(FACTOR_SEED + 1).standard_normal(_normal_samples(n)[0].shape)


@lru_cache(maxsize=2)  # 32 MB each
def _normal_samples(n: int) -> tuple[np.ndarray, np.ndarray]:
    rows = max(FACTOR_VALUES // max(n, 1), 2000)
    z = np.random.default_rng(FACTOR_SEED).standard_normal((rows, n))
    return z, np.median(z, axis=1)


def _groups(y: np.ndarray, devices: np.ndarray) -> list[np.ndarray]:
    """The finite values of each device that has at least 2 of them."""
    ok = np.isfinite(y)
    frame = pd.DataFrame({"y": y[ok], "d": np.asarray(devices)[ok]})
    return [g.to_numpy(float) for _, g in frame.groupby("d", sort=True)["y"] if g.size >= 2]


def nested_stats(y: np.ndarray, devices: np.ndarray) -> dict[str, float]:
    """``within``, ``between`` and ``d2d`` spreads of values ``y`` (already ln R or V;
    NaN = not measured) labelled by ``devices``, with the number of ``devices`` used
    (those with ≥ 2 values) and their median number of ``cycles``.  Spreads are NaN
    with fewer than 2 such devices."""
    groups = _groups(np.asarray(y, float), np.asarray(devices))
    if len(groups) < 2:
        return {"within": math.nan, "between": math.nan, "d2d": math.nan,
                "devices": len(groups), "cycles": 0}
    medians = np.array([np.median(g) for g in groups])
    n = int(np.median([g.size for g in groups]))
    w_n, k_n = median_factors(n)
    within = _robust_sigma(np.concatenate([g - m for g, m in zip(groups, medians,
                                                                 strict=True)])) / w_n
    between = winsorized_sigma(medians)
    d2d = math.sqrt(max(between ** 2 - k_n * within ** 2, 0.0))
    return {"within": within, "between": between, "d2d": d2d,
            "devices": len(groups), "cycles": int(n)}


#: (metric, the metric it is conditioned on) of :func:`conditional_d2d`.
CONDITIONAL = (("r_hrs_ohm", "r_lrs_ohm"),)


def conditional_d2d(y: np.ndarray, x: np.ndarray, devices: np.ndarray) -> float:
    """The D2D σ of ``y`` that the devices' medians of ``x`` leave (both already ln R
    or V, paired by cycle: one row per cycle of ``devices``; NaN = not measured).

    The D2D covariance is Σ = cov(medians) − N (the medians winsorized as in
    :func:`winsorized_sigma`), N the covariance that the C2C noise of medians of n pairs
    gives: k(n) times the within-device variances, and :func:`median_covariance` of
    their correlation ρ times their geometric mean (medians of pairs covary less than
    k(n)·ρ).  The within-device covariance is pooled from the deviations from each
    device's mean (unbiased; deviations from the median understate ρ: 0.75 for 0.8 at
    n = 5).  Then √(Σyy − Σxy²/Σxx), 0 where that is negative, and √Σyy where x has
    no D2D part to speak of (Σxx below a hundredth of its medians' variance).  NaN with
    fewer than 3 devices with ≥ 2 paired values."""
    y, x = np.asarray(y, float), np.asarray(x, float)
    ok = np.isfinite(y) & np.isfinite(x)
    frame = pd.DataFrame({"x": x[ok], "y": y[ok], "d": np.asarray(devices)[ok]})
    groups = [g[["x", "y"]].to_numpy() for _, g in frame.groupby("d", sort=True)
              if len(g) >= 2]
    if len(groups) < 3:
        return math.nan
    medians = np.array([np.median(g, axis=0) for g in groups])
    n = int(np.median([len(g) for g in groups]))
    deviations = np.concatenate([g - g.mean(axis=0) for g in groups])
    within = deviations.T @ deviations / (len(deviations) - len(groups))
    between = np.cov(np.column_stack([_winsorized(medians[:, 0]),
                                      _winsorized(medians[:, 1])]).T)
    s = np.sqrt(np.diag(within))
    rho = float(np.clip(within[0, 1] / max(s[0] * s[1], 1e-300), -1.0, 1.0))
    k = median_factors(n)[1]
    c = math.copysign(median_covariance(n, round(abs(rho), 2)), rho)
    sigma = between - np.outer(s, s) * np.array([[k, c], [c, k]])
    if sigma[0, 0] <= 0.01 * between[0, 0]:  # nothing of x's to explain y with
        return math.sqrt(max(sigma[1, 1], 0.0))
    return math.sqrt(max(sigma[1, 1] - sigma[0, 1] ** 2 / sigma[0, 0], 0.0))


def check_design(frame: pd.DataFrame) -> tuple[int, int]:
    """(devices, median cycles per device) of :func:`rram.fit.data.load_distribution`
    rows; a nested fit needs ≥ 2 devices with ≥ 2 cycles each, otherwise an InputError
    names the file."""
    source = frame.attrs.get("source", "the distribution data")
    per_device = frame.groupby("device")["cycle"].nunique()
    few = per_device[per_device < 2]
    if per_device.size < 2:
        raise InputError(f"{source}: a nested (D2D/C2C) fit needs >= 2 devices, got "
                         f"{per_device.size}")
    if few.size:
        raise InputError(f"{source}: a nested (D2D/C2C) fit needs >= 2 cycles per device; "
                         f"device {few.index[0]!r} has {int(few.iloc[0])}")
    return int(per_device.size), int(np.median(per_device.to_numpy()))
