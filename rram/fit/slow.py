"""The slow parts of a spec matched to a record by simulation: the serial correlation a
simulated record of the spec shows (:func:`record_drift`, the statistics of
:mod:`rram.fit.drift`), and the slow shares that make it the measured one
(:func:`match_slow_shares`)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ..variation import VariationSpec
from .carriers import simulate_metrics
from .drift import MAX_SHARE, drift_stats, with_slow
from .target import simulated_rows

#: Devices of the simulated record :func:`model_drift_stats` measures.  The slow shares
#: are matched to its lag-1 correlations: with 4 devices they matched the fit's seed
#: (V_set 0.53) and other seeds gave 0.40-0.42 against the measured 0.52.
MODEL_DEVICES = 16


def simulated_record(card, spec: VariationSpec, protocol, cycles: int, seed: int
                     ) -> pd.DataFrame:
    """:data:`MODEL_DEVICES` simulated devices of ``cycles`` cycles each (the measured
    record's length) under ``protocol``: the Monte Carlo frame."""
    return simulate_metrics(card, spec, protocol, devices=MODEL_DEVICES,
                            cycles=max(int(cycles), 4), seed=seed)


def record_drift(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """:func:`drift_stats` of a simulated record: the lag-1 correlation pooled over
    devices, the halves' KS distance the median over devices."""
    # The lag-1 correlation pooled over devices, as a measured table's; the halves one
    # device at a time, as a measured record is: pooled, devices that drift apart would
    # hide each other's drift
    pooled = drift_stats(simulated_rows(frame))
    per_device = [drift_stats(simulated_rows(dev)) for _, dev in frame.groupby("device")]
    with warnings.catch_warnings():  # a record too short for halves: NaN, said so
        warnings.simplefilter("ignore", RuntimeWarning)
        return {m: {**pooled[m],
                    **{k: float(np.nanmedian([d[m][k] for d in per_device]))
                       for k in ("ks_halves", "ks_bound")},
                    "drifts": bool(np.median([d[m]["drifts"] for d in per_device]) >= 0.5)}
                for m in pooled}


def model_drift_stats(card, spec: VariationSpec, protocol, cycles: int, seed: int
                      ) -> dict[str, dict[str, float]]:
    return record_drift(simulated_record(card, spec, protocol, cycles, seed))


#: Regula falsi steps of :func:`match_slow_shares`, and the smallest lag-1 correlation
#: (data or model) it matches: below, a carrier gets no slow part.
SHARE_STEPS, RHO_MIN = 5, 0.05


def _with_shares(spec: VariationSpec, shares: dict[str, float]) -> VariationSpec:
    """``spec`` with new slow shares, each entry keeping its memory."""
    memory = {v.parameter: v.memory for v in spec.of_kind("c2c")}
    return with_slow(spec, {p: (s, memory[p]) for p, s in shares.items() if p in memory})


def match_slow_shares(card, spec: VariationSpec, carriers: dict[str, str], data: dict,
                      protocol, cycles: int, seed: int) -> VariationSpec:
    """``spec`` with each slow share set so that the simulated record's lag-1
    correlation of the metric its carrier serves is the data's.  A carrier makes only
    part of its metric's variance, and the metric's correlation is not linear in the
    share, so each share is found by regula falsi (Illinois) on [0, :data:`MAX_SHARE`]
    (lag-1 0 at share 0, or with the spec's configurations what they alone give; a
    carrier whose metric they make as persistent as measured gets no slow part), all
    carriers at once, :data:`SHARE_STEPS` simulated records of
    ``cycles`` cycles, the measured record's length (a slow part's share of a record's
    variance grows with its length).  A carrier whose metric (measured, or simulated at
    the largest share) correlates below :data:`RHO_MIN` gets no slow part."""
    served = {p: m for m, p in carriers.items() if m in data and any(
        v.parameter == p and v.slow for v in spec.variations)
        and data[m]["lag1"] > RHO_MIN}
    spec = _with_shares(spec, {p: 0.0 for m, p in carriers.items() if p not in served})
    if not served:
        return spec
    target = {p: data[m]["lag1"] for p, m in served.items()}
    top = _with_shares(spec, {p: MAX_SHARE for p in served})
    rho = model_drift_stats(card, top, protocol, cycles, seed)
    served = {p: m for p, m in served.items() if rho[m]["lag1"] > RHO_MIN}
    # brackets (share, lag-1 minus the target): below at share 0 (lag-1 0, or what the
    # spec's configurations alone give it), above at the largest
    floor = dict.fromkeys(served, 0.0)
    if spec.mode is not None and served:
        bare = model_drift_stats(card, _with_shares(spec, dict.fromkeys(served, 0.0)),
                                 protocol, cycles, seed)
        floor = {p: bare[m]["lag1"] for p, m in served.items()}
        spec = _with_shares(spec, {p: 0.0 for p in served if floor[p] >= target[p]})
        served = {p: m for p, m in served.items() if floor[p] < target[p]}
    if not served:
        return spec
    lo = {p: [0.0, floor[p] - target[p]] for p in served}
    hi = {p: [MAX_SHARE, rho[m]["lag1"] - target[p]] for p, m in served.items()}
    last = dict.fromkeys(served, "")
    shares = {p: MAX_SHARE for p in served}
    for _ in range(SHARE_STEPS):
        for p in served:
            (s0, f0), (s1, f1) = lo[p], hi[p]
            shares[p] = MAX_SHARE if f1 <= 0 else s0 - f0 * (s1 - s0) / (f1 - f0)
        rho = model_drift_stats(card, _with_shares(spec, shares), protocol, cycles, seed)
        for p, m in served.items():
            if shares[p] >= MAX_SHARE or not math.isfinite(rho[m]["lag1"]):
                continue
            side = "lo" if rho[m]["lag1"] < target[p] else "hi"
            kept = hi if side == "lo" else lo
            if last[p] == side:  # Illinois: the end kept twice weighs half
                kept[p][1] /= 2
            (lo if side == "lo" else hi)[p] = [shares[p], rho[m]["lag1"] - target[p]]
            last[p] = side
    return _with_shares(spec, shares)


def memory_lines(parts: dict[str, tuple[float, float]], data: dict, model: dict
                 ) -> list[str]:
    """The slow parts given to the carriers, and the drift of data and model."""
    lines = ["slow C2C parts: " + (", ".join(f"{p} {100 * s:.0f} % over {m:.0f} cycles"
                                             for p, (s, m) in parts.items() if s > 0)
                                   or "none (no serial correlation)")]
    lines.append(f"drift, data | model (median of {MODEL_DEVICES} devices of "
                 f"{next(iter(model.values()))['n'] // MODEL_DEVICES} cycles): "
                 "lag-1 ρ, KS halves")
    for m, d in data.items():
        if m in model:
            lines.append(f"  {m:10s} {d['lag1']:+.2f} {d['ks_halves']:.2f} | "
                         f"{model[m]['lag1']:+.2f} {model[m]['ks_halves']:.2f}")
    return lines
