"""Fit the Monte Carlo variation spec to measured distributions (lmfit).

The carriers are the physical causes of ``docs/model.md`` § Variation, one per measured
metric:

=========  ==========  ==========================================================
carrier    metric      distribution, cause
=========  ==========  ==========================================================
``rtop``   R_LRS       lognormal: the constriction of the CF a SET forms at the top
                       electrode, drawn at each SET and held through its RESET.  The
                       compliance sets the CF's own resistance; the contact adds to it,
                       so R_LRS = R_CF + rtop has a floor and a long upper tail (the
                       TUD cell's upper LRS mode, cycles ~600-900, is persistent and
                       comes with a higher V_reset: an oxidising electrode interface),
                       and the series drop raises V_reset with it.
``kth``    R_LRS       lognormal, the alternative: the thermal coupling of that CF.  A
                       CF that heats more stops wider (R_LRS ∝ kth^(−0.5)) and resets
                       earlier; its lever saturates (ln-σ of R_LRS ≤ ~0.3 on TUD).
``deh``    R_HRS       normal: the hopping barrier of the RESET, which sets the gap it
                       opens (R_HRS ∝ e^(x/xt)) and with it the next V_set.
``dea``    V_set       normal: the generation barrier.
``dei``    V_reset     normal: the release barrier of the RESET onset.
=========  ==========  ==========================================================

Which candidate carries a metric is measured on the card (:func:`choose_carriers`): a
card whose contacts are a small part of R_LRS has it carried by ``kth``, one whose LRS
follows the lateral-growth field by ``fw``.  The HRS is
the gap, so it is carried by ``deh`` only.
A carrier moves more than its own metric (``deh`` also moves V_reset when the hopping
step limits the RESET), so all centres (``shift``) and spreads (``sigma``) are fitted
together against all metrics: the simulated median and spread of each metric must match
the data; the spread of a resistance is its ln-σ, of a voltage its σ, both estimated
robustly (interquartile range / 1.349, so heavy tails do not dominate).  The simulation
replays the measurement protocol with common random numbers (one seed for every
evaluation), which keeps the objective smooth.  With several devices the fitted σ² is
split between D2D and C2C entries in the proportion of the between- and within-device
variance of the carrier's metric; one device gives C2C entries only.  The nested fit
(``Target.design``, many devices × many cycles) fits the two apart instead: each carrier
gets a D2D σ matched to the spread of the metric's per-device medians (less the C2C
noise a median of n cycles carries) and a C2C σ matched to the spread within devices
(:mod:`rram.fit.nested`).  Both are corrected for the number of cycles, so the
simulation need not replay the data's design: by default it runs 256 devices × 5
cycles, whose D2D spread is known better than that of 64 measured devices.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import lmfit
import numpy as np
import pandas as pd
from lmfit.minimizer import AbortFitException

from .. import __version__
from ..errors import InputError
from ..events import did_not_switch
from ..io import write_text_atomic
from ..mc import MonteCarlo, run_devices
from ..mc.run import Protocol
from ..params import Card
from ..variation import Mode, Variation, VariationSpec
from .drift import with_slow
from .modes import Configurations, simulated_configurations
from .target import (
    LOG_METRICS,
    METRICS,
    QUANTILES,
    Target,
    rank_correlations,
    resolution,
    robust_sigma,
    stats_of,
    target_of,
)

#: The physical causes each metric may be carried by, in order of preference.
CANDIDATES = {"r_lrs_ohm": ("rtop", "kth", "fw"), "r_hrs_ohm": ("deh",),
              "v_set_V": ("dea",), "v_reset_V": ("dei", "deh")}
DISTRIBUTION = {"fw": "lognormal", "kwr": "lognormal", "kth": "lognormal", "rtop": "lognormal",
                "deh": "normal", "dea": "normal", "dei": "normal"}
#: Starting spreads, largest spreads and probe steps of each carrier (its units; ln for
#: the lognormal ones).
START_SIGMA = {"fw": 0.3, "kwr": 0.3, "kth": 0.3, "rtop": 0.5, "deh": 0.05, "dea": 0.05,
               "dei": 0.1}
MAX_SIGMA = {"fw": 2.0, "kwr": 2.0, "kth": 1.5, "rtop": 2.0, "deh": 0.4, "dea": 0.4,
             "dei": 0.4}
PROBE = {"fw": 0.15, "kwr": 0.3, "kth": 0.15, "rtop": 0.3, "deh": 0.05, "dea": 0.05,
         "dei": 0.05}
#: A carrier must move its metric's median by this many of the data's spreads per probe.
MIN_SENSITIVITY = 0.05
#: Mismatch units: a quantile in fifths of the metric's measured spread, a rank
#: correlation in steps of 0.05 (medians and spreads: 5 %, see ``_Evaluator.residual``).
QUANTILE_UNIT = 0.2
RANK_UNIT = 0.05
#: The geometry of a configuration (:func:`_geometry_scan`): the CF's cell, and the factors
#: on it scanned.
GEOMETRY = "wcf"
GEOMETRY_GRID = (0.6, 0.5, 0.42, 0.36, 0.3)
#: Simulated devices × cycles of a nested fit: many devices (the D2D spread of 256 is
#: known to ~4 %), few cycles (the C2C spread is pooled over all of them).
NESTED_DESIGN = (256, 5)


def protocol_of(card: Card) -> Protocol:
    """The measurement protocol a fitted card was fitted to (its ``fit`` metadata), or
    the default DC sweep."""
    fit = card.meta.get("fit") if isinstance(card.meta, Mapping) else None
    p = fit.get("protocol") if isinstance(fit, Mapping) else None
    if not p:
        return Protocol()
    return Protocol(circuit="compliance", v_set=p["v_set"], v_reset=p["v_reset"],
                    rate=p["rate"], icc_set=p["icc_set"], v_read=p.get("v_read", 0.2))


def choose_carriers(target: Target, card: Card, protocol: Protocol, seed: int = 1,
                    devices: int = 16, cycles: int = 2,
                    log: Callable[[str], None] | None = None) -> dict[str, str]:
    """Metric -> carrier: each metric gets the candidate that moves it most (one probe
    run per candidate, no spread, its shift at :data:`PROBE`), each carrier serves one
    metric.  Which cause acts depends on the card: a card whose LRS follows the
    lateral-growth field rather than the CF's heating has it carried by ``fw``."""
    data = target.stats()
    base = stats_of(_frame_metrics(simulate_metrics(card, VariationSpec(()), protocol,
                                                    devices, cycles, seed), target))
    scores = []
    for p in dict.fromkeys(c for m in target.metrics for c in CANDIDATES[m]):
        spec = VariationSpec((Variation(p, "c2c", DISTRIBUTION[p], 0.0, shift=PROBE[p]),))
        probed = stats_of(_frame_metrics(simulate_metrics(card, spec, protocol, devices,
                                                          cycles, seed), target))
        for m in target.metrics:
            if p in CANDIDATES[m]:
                moved = abs(_centre(m, probed) - _centre(m, base))
                scores.append((moved / max(data[m]["spread"], 1e-12), m, p))
    chosen: dict[str, str] = {}
    for score, m, p in sorted(scores, reverse=True):
        if m not in chosen and p not in chosen.values() and score >= MIN_SENSITIVITY:
            chosen[m] = p
    missing = [m for m in target.metrics if m not in chosen]
    if missing:
        tried = ", ".join(c for m in missing for c in CANDIDATES[m])
        raise InputError(f"{', '.join(missing)}: no carrier ({tried}) moves it at this "
                         "card under the measured protocol; refit the card or drop the "
                         "metric")
    if log:
        log("carriers: " + ", ".join(f"{m} <- {p}" for m, p in chosen.items()))
    return {m: chosen[m] for m in target.metrics}


def _frame_metrics(frame: pd.DataFrame, target: Target) -> dict[str, np.ndarray]:
    return {m: frame[m].to_numpy(float) for m in target.metrics}


def model_stats(frame: pd.DataFrame, target: Target) -> dict[str, dict]:
    """:func:`stats_of` a simulated frame, nested like the target's, and under
    ``"ranks"`` the rank correlations the target measured."""
    devices = {m: frame["device"].to_numpy() for m in target.metrics}
    out: dict[str, dict] = stats_of(_frame_metrics(frame, target),
                                    devices if target.design else None)
    ranks = rank_correlations(frame)
    out["ranks"] = {k: ranks.get(k, float("nan")) for k, _ in target.ranks}
    return out


def sigma_key(p: str, kind: str) -> str:
    """The fitted value of carrier ``p``'s σ of ``kind`` (``""``: the total σ)."""
    return f"sigma_{kind}_{p}" if kind else f"sigma_{p}"


def spec_from(values: dict[str, float], target: Target, carriers: dict[str, str],
              slow: Mapping[str, tuple[float, float]] | None = None,
              config: Configurations | None = None) -> VariationSpec:
    """Variation entries from fitted ``shift_<p>``/``sigma_<p>`` values (nested:
    ``sigma_d2d_<p>``/``sigma_c2c_<p>``, the shift on the D2D entry); ``slow``: the
    (share, memory) of the C2C entries' slow parts (:func:`rram.fit.drift.with_slow`);
    ``config``: two measured configurations, the C2C entries offset in the upper one by
    the fitted ``step_<p>`` (none while every step is 0)."""
    out = []
    for metric, p in carriers.items():
        dist = DISTRIBUTION[p]
        if target.design:
            out += [Variation(p, "d2d", dist, values[sigma_key(p, "d2d")],
                              f"fitted: spread of the device medians ({metric})",
                              values[f"shift_{p}"]),
                    Variation(p, "c2c", dist, values[sigma_key(p, "c2c")],
                              f"fitted: spread within devices ({metric})")]
            continue
        sigma, shift = values[f"sigma_{p}"], values[f"shift_{p}"]
        c2c = target.c2c_fraction(metric)
        if c2c < 1.0:
            out.append(Variation(p, "d2d", dist, sigma * math.sqrt(1 - c2c),
                                 f"fitted: spread between devices ({metric})", shift))
            shift = 0.0
        out.append(Variation(p, "c2c", dist, sigma * math.sqrt(c2c),
                             f"fitted: spread from cycle to cycle ({metric})", shift))
    spec = with_slow(VariationSpec(tuple(out)), dict(slow or {}))
    steps = {p: values.get(f"step_{p}", 0.0) for p in carriers.values()}
    if config is None or not any(steps.values()):
        return spec
    geometry = values.get(f"step_{GEOMETRY}", 0.0)
    extra = (Variation(GEOMETRY, "c2c", "lognormal", 0.0, "fitted: the CF's cell in the "
                       "upper configuration", mode_step=geometry),) if geometry else ()
    return VariationSpec(tuple(replace(v, mode_step=steps[v.parameter])
                               if v.kind == "c2c" and v.parameter in steps else v
                               for v in spec.variations) + extra,
                         Mode(round(config.modes.share, 4), config.memory))


@dataclass
class VariationFit:
    spec: VariationSpec
    target: Target
    data_stats: dict
    model_stats: dict
    model_frame: pd.DataFrame
    seconds: float
    nfev: int
    protocol: Protocol
    carriers: dict[str, str]
    #: the Monte Carlo design of the fit's evaluations: devices, cycles, seed
    design: tuple[int, int, int] = (200, 3, 1)
    #: two configurations measured in the data, if fitted
    config: Configurations | None = None

    def with_spec(self, spec: VariationSpec, card: Card) -> VariationFit:
        """This fit reporting ``spec`` instead (e.g. with slow parts): simulated again
        with the fit's design and seed."""
        frame = simulate_metrics(card, spec, self.protocol, *self.design)
        model = model_stats(frame, self.target)
        if self.config is not None:
            model["configurations"] = simulated_configurations(frame, self.config)
        return replace(self, spec=spec, model_frame=frame, model_stats=model)

    def report(self) -> str:
        lines = [f"{'metric':10s} {'data median':>12s} {'model':>10s} {'data spread':>12s} "
                 f"{'model':>8s}   (spread: robust ln-σ of R, σ of V)"]
        for m in self.target.metrics:
            d, s = self.data_stats[m], self.model_stats[m]
            lines.append(f"{m:10s} {d['median']:12.4g} {s['median']:10.4g} "
                         f"{d['spread']:12.4g} {s['spread']:8.4g}")
        if self.target.design:
            lines.append(f"nested, {self.target.design[0]} devices x "
                         f"{self.target.design[1]} cycles: {'metric':10s} C2C data/model"
                         "   D2D data/model")
            for m in self.target.metrics:
                d, s = self.data_stats[m], self.model_stats[m]
                lines.append(f"  {m:10s} {d['within']:9.4g} {s['within']:9.4g}   "
                             f"{d['d2d']:9.4g} {s['d2d']:9.4g}")
        lines.append("quantiles " + "/".join(f"{100 * q:g}" for q in QUANTILES)
                     + " % (ln R for resistances), data | model:")
        for m in self.target.metrics:
            lines.append(f"  {m:10s} " + " ".join(f"{v:7.3f}" for v in
                                                 self.data_stats[m]["quantiles"])
                         + " | " + " ".join(f"{v:7.3f}" for v in
                                            self.model_stats[m]["quantiles"]))
        for k, rho in self.target.ranks:
            lines.append(f"Spearman {k}: data {rho:+.3f}, model "
                         f"{self.model_stats['ranks'][k]:+.3f}")
        if self.config is not None:
            lines.append(f"two configurations (upper {100 * self.config.modes.share:.0f} % "
                         f"of cycles, seen in {self.config.metric}): upper - lower median, "
                         "data | model: " + ", ".join(
                             f"{m} {c:+.3g} | {_contrast(self.model_stats, m):+.3g}"
                             for m, c in self.config.contrast.items()))
        ks = self.ks()
        lines.append("KS distance: " + ", ".join(f"{m} {v:.3f}" for m, v in ks.items()))
        lines.append(f"failed SETs: data {100 * self.target.failed_sets:.1f} %, model "
                     f"{100 * self.failed_sets():.1f} %")
        lines.append(f"{self.nfev} Monte Carlo evaluations, {self.seconds:.0f} s")
        for v in self.spec.variations:
            lines.append(f"  {v.parameter:4s} {v.kind} {v.distribution:9s} sigma {v.sigma:.4g}"
                         f"  shift {v.shift:+.4g}" + (f"  slow {100 * v.slow:.0f} % over "
                                                     f"{v.memory:.0f} cycles" if v.slow else "")
                         + (f"  upper configuration {v.mode_step:+.4g}" if v.mode_step else ""))
        return "\n".join(lines)

    def failed_sets(self) -> float:
        """Share of the simulated SETs that did not switch."""
        return float(did_not_switch(self.model_frame["reason"]).mean())

    def ks(self) -> dict[str, float]:
        from scipy.stats import ks_2samp

        out = {}
        for m in self.target.metrics:
            a = self.target.values[m][np.isfinite(self.target.values[m])]
            b = self.model_frame[m].to_numpy(float)
            out[m] = float(ks_2samp(a, b[np.isfinite(b)]).statistic)
        return out


def _contrast(model: dict, metric: str) -> float:
    got = model["configurations"][metric]
    return got["upper"] - got["lower"]


def simulate_metrics(card: Card, spec: VariationSpec, protocol: Protocol, devices: int,
                     cycles: int, seed: int) -> pd.DataFrame:
    mc = MonteCarlo(card=card, spec=spec, devices=devices, cycles=cycles, seed=seed,
                    protocol=protocol)
    frame = run_devices(mc, range(devices))
    return frame[frame["converged"]]


#: Probe steps of each carrier's shift (its units; ln for lognormal).
class _Evaluator:
    """Monte Carlo statistics of a set of fitted values, counted, and the best so far."""

    def __init__(self, target: Target, carriers: dict[str, str], card: Card,
                 protocol: Protocol, devices: int, cycles: int, seed: int,
                 log: Callable[[str], None] | None,
                 slow: Mapping[str, tuple[float, float]] | None = None,
                 config: Configurations | None = None):
        self.target, self.carriers, self.card, self.protocol = target, carriers, card, protocol
        self.devices, self.cycles, self.seed, self.log = devices, cycles, seed, log
        self.slow = dict(slow or {})
        self.config = config
        self.data = target.stats()
        self.count = 0
        self.best: tuple[float, dict[str, float]] | None = None

    def stats(self, values: dict[str, float]) -> dict:
        frame = simulate_metrics(self.card, spec_from(values, self.target, self.carriers,
                                                      self.slow, self.config),
                                 self.protocol, self.devices, self.cycles, self.seed)
        self.count += 1
        model = model_stats(frame, self.target)
        if self.config is not None:
            model["configurations"] = simulated_configurations(frame, self.config)
        cost = float(np.sum(self.residual(model) ** 2))
        if self.best is None or cost < self.best[0]:
            self.best = (cost, dict(values))
        if self.log:
            self.log(f"  evaluation {self.count}: " + ", ".join(
                f"{m} {model[m]['median']:.4g}/{model[m]['spread']:.3g}"
                for m in self.target.metrics))
        return model

    def residual(self, model: dict) -> np.ndarray:
        """Per metric: the median (5 % of it for R, 5 % of the spread for V) and the
        spread (5 % of it; nested: within and between) mismatches, then the
        :data:`QUANTILES` (of ln R for resistances; :data:`QUANTILE_UNIT` of the
        measured spread), times the metric's weight; then the rank correlations
        (:data:`RANK_UNIT`); last, with two configurations, each metric's contrast
        between them (as a quantile)."""
        r = []
        for m in self.target.metrics:
            d, s, w = self.data[m], model[m], self.target.weight(m)
            if m in LOG_METRICS:
                r.append(w * math.log(s["median"] / d["median"]) / 0.05)
            else:
                r.append(w * (s["median"] - d["median"]) / (0.05 * d["spread"]))
            for name, _ in self.target.spreads:
                r.append(w * (s[name] / d[name] - 1) / 0.05)
            r += list(w * (np.array(s["quantiles"]) - d["quantiles"])
                      / (QUANTILE_UNIT * d["spread"]))
        r += [(model["ranks"][k] - rho) / RANK_UNIT for k, rho in self.target.ranks]
        if self.config is not None:  # the configurations' contrasts, as quantiles
            r += [(_contrast(model, m) - c) / (QUANTILE_UNIT * self.data[m]["spread"])
                  for m, c in self.config.contrast.items() if m in self.data]
        return np.nan_to_num(np.array(r), nan=1e3, posinf=1e3, neginf=-1e3)


def shift_bounds(p: str, card: Card) -> tuple[float, float]:
    """The shifts that keep a carrier's centre inside its parameter range (its units, or
    ln for a lognormal carrier), with a margin: a centre at the edge of the range leaves
    no room for the truncated draws."""
    param = card.parameter(p)
    base = card[p]
    if DISTRIBUTION[p] == "lognormal":
        lo = math.log(param.lower / base) if param.lower > 0 else -3 * MAX_SIGMA[p]
        hi = math.log(param.upper / base) if math.isfinite(param.upper) else 3 * MAX_SIGMA[p]
    else:
        lo, hi = param.lower - base, param.upper - base
    lo, hi = max(lo, -3 * MAX_SIGMA[p]), min(hi, 3 * MAX_SIGMA[p])
    return 0.9 * lo, 0.9 * hi


def _centre(m: str, stats: dict) -> float:
    return math.log(stats[m]["median"]) if m in LOG_METRICS else stats[m]["median"]


def _sensitivities(ev: _Evaluator, values: dict[str, float], model: dict) -> np.ndarray:
    """d(centre of metric)/d(shift of carrier), metrics × carriers: one probe run per
    carrier.  Every metric is read, not only the carrier's own: the carriers couple."""
    metrics, carriers = ev.target.metrics, list(ev.carriers.values())
    sens = np.zeros((len(metrics), len(carriers)))
    for j, p in enumerate(carriers):
        probe = dict(values)
        probe[f"shift_{p}"] += PROBE[p]
        probed = ev.stats(probe)
        for i, m in enumerate(metrics):
            sens[i, j] = (_centre(m, probed) - _centre(m, model)) / PROBE[p]
    return sens


def _moment_step(ev: _Evaluator, values: dict[str, float], model: dict, sens: np.ndarray,
                 damping: float) -> dict[str, float]:
    """One linearised step on all medians and spreads together.

    Medians: least squares of ``sens``·Δshift = data − model, each metric in units of its
    measured spread.  Spreads: variances add, spread_m² = b_m² + Σ_p (sens_mp·σ_p)², with
    b_m² the part no carrier explains (``unexplained``, calibrated at the current point);
    the σ_p² ≥ 0 that best give the measured spreads (relative, non-negative least
    squares).  A
    carrier that widens two metrics is thus shared out between them, instead of each
    metric pulling its own carrier.  Where the sum overstates the simulated spread
    (a saturating response), the carriers' terms are scaled down to it.
    """
    from scipy.optimize import nnls

    metrics, carriers = ev.target.metrics, list(ev.carriers.values())
    data = ev.data
    s_data = np.array([max(data[m]["spread"], 1e-12) for m in metrics])
    weight = np.array([ev.target.weight(m) for m in metrics])
    miss = np.array([_centre(m, data) - _centre(m, model) for m in metrics]) / s_data
    if ev.config is not None:  # the shifts place the lower configuration, the rest follow
        got, cfg = model["configurations"], ev.config.stats
        miss = np.array([(cfg[m]["lower"] - got[m]["lower"]) / s if m in cfg else x
                         for m, s, x in zip(metrics, s_data, miss, strict=True)])
    step = np.linalg.lstsq(weight[:, None] * sens / s_data[:, None], weight * miss,
                           rcond=None)[0]
    trial = dict(values)
    for j, p in enumerate(carriers):
        limit = 3 * PROBE[p]
        lo, hi = shift_bounds(p, ev.card)
        trial[f"shift_{p}"] = float(np.clip(
            trial[f"shift_{p}"] + damping * float(np.clip(step[j], -limit, limit)), lo, hi))
    if ev.config is not None:
        _configuration_step(ev, trial, model, sens, damping, s_data, weight)
    # nested: the spreads within devices by the C2C σ, of the medians by the D2D σ
    for name, kind in ev.target.spreads:
        s_data = np.array([max(data[m][name], 1e-12) for m in metrics])
        s_model = np.array([model[m][name] for m in metrics])
        if ev.config is not None and name == "spread":  # the carriers' σ: within the
            cfg, got = ev.config.stats, model["configurations"]  # lower configuration
            s_data = np.array([max(cfg[m]["spread"], 1e-12) if m in cfg else x
                               for m, x in zip(metrics, s_data, strict=True)])
            s_model = np.array([got[m]["spread"] if m in cfg else x
                                for m, x in zip(metrics, s_model, strict=True)])
        sigma = np.array([values[sigma_key(p, kind)] for p in carriers])
        predicted = (sens ** 2) @ (sigma ** 2)
        unexplained = np.maximum(s_model ** 2 - predicted, 0.0)
        # where the linear sum overstates the simulated spread (saturating responses,
        # spreads of quantiles), the carriers' shares are scaled down to it
        scale = np.where(predicted > s_model ** 2, s_model ** 2 / np.maximum(predicted, 1e-300),
                         1.0)
        gain = scale[:, None] * sens ** 2 / (s_data ** 2)[:, None]
        var, _ = nnls(weight[:, None] * gain,
                      weight * np.maximum(1.0 - unexplained / s_data ** 2, 0.0))
        for j, p in enumerate(carriers):
            target = min(math.sqrt(var[j]), MAX_SIGMA[p])
            # damped in the log: a spread far too wide pushes devices out of switching
            ratio = float(np.clip(target / max(sigma[j], 1e-6), 0.5, 2.0)) if target > 0 \
                else 0.5
            trial[sigma_key(p, kind)] = float(np.clip(sigma[j] * ratio ** damping, 0.0,
                                                      MAX_SIGMA[p]))
    return trial


def _configuration_step(ev: _Evaluator, trial: dict[str, float], model: dict | None,
                        sens: np.ndarray, damping: float, s_data: np.ndarray,
                        weight: np.ndarray) -> None:
    """The carriers' offsets in the upper configuration (``step_<p>``, in place), by the
    linearisation of the medians applied to each configuration's cycles: the lower ones'
    misses move the shifts (as :func:`_moment_step` does for all cycles), the upper ones'
    the shifts plus the offsets, so the offsets take the difference.  ``model`` None:
    the first offsets, from the measured contrasts alone."""
    metrics, carriers = ev.target.metrics, list(ev.carriers.values())
    data = ev.config.stats
    keep = np.array([m in data for m in metrics], float)
    a = (keep * weight)[:, None] * sens / s_data[:, None]

    def solve(miss: np.ndarray) -> np.ndarray:
        return np.linalg.lstsq(a, keep * weight * np.nan_to_num(miss) / s_data, rcond=None)[0]

    if model is None:
        step = solve(np.array([data[m]["upper"] - data[m]["lower"] if m in data else 0.0
                               for m in metrics]))
    else:
        got = model["configurations"]
        miss = np.array([[data[m][k] - got[m][k] if m in data else 0.0 for m in metrics]
                         for k in ("lower", "upper")])
        step = solve(miss[1]) - solve(miss[0])
    for j, p in enumerate(carriers):
        lo, hi = shift_bounds(p, ev.card)
        limit = 3 * PROBE[p] if model is not None else hi - lo
        shift = trial[f"shift_{p}"]
        trial[f"step_{p}"] = float(np.clip(
            trial.get(f"step_{p}", 0.0) + damping * float(np.clip(step[j], -limit, limit)),
            lo - shift, hi - shift))


def _geometry_scan(ev: _Evaluator, values: dict[str, float], rounds: int
                   ) -> dict[str, float]:
    """The CF's cell (``wcf``) in the upper configuration, by a scan of
    :data:`GEOMETRY_GRID` and none: each with the carriers' offsets solved again (one
    linearised step), the best refined by moment matching.  A
    narrower cell confines the CF a SET forms: R_LRS rises while the RESET, which the
    CF's own voltage starts, comes earlier (|V_reset| falls), so with the contact it
    reproduces a measured configuration whose V_reset rises less than R_LRS (TUD:
    R_LRS x2.5, V_reset x1.5), which no carrier alone can.  The cell bounds the CF only
    below its natural width, so its response has a threshold: scanned, not linearised."""
    metrics = ev.target.metrics
    s_data = np.array([max(ev.data[m]["spread"], 1e-12) for m in metrics])
    weight = np.array([ev.target.weight(m) for m in metrics])
    model = ev.stats(values)
    sens = _sensitivities(ev, values, model)
    best_cost, best = math.inf, values
    # factor 1 first: the same re-solved step without the cell, so a cell that does not
    # bind (an identical simulation) never wins
    for factor in (1.0, *GEOMETRY_GRID):
        trial = {**values, f"step_{GEOMETRY}": math.log(factor)}
        got = ev.stats(trial) if factor != 1.0 else model
        _configuration_step(ev, trial, got, sens, 1.0, s_data, weight)
        cost = float(np.sum(ev.residual(ev.stats(trial)) ** 2))
        if cost < best_cost:
            best_cost, best = cost, trial
    if ev.log:
        ev.log(f"  the CF's cell in the upper configuration: x"
               f"{math.exp(best[f'step_{GEOMETRY}']):.2f}")
    return _moment_match(ev, best, rounds)


def _moment_match(ev: _Evaluator, values: dict[str, float], rounds: int) -> dict[str, float]:
    """Linearised moment matching (:func:`_moment_step`); the sensitivities are probed
    again after every accepted step (the response is far from linear: R_LRS saturates
    as ``kth`` grows), and the step is halved whenever a round makes the match worse.
    ``rounds`` counts the steps tried."""
    model = ev.stats(values)
    sens = _sensitivities(ev, values, model)
    if ev.config is not None and not any(k.startswith("step_") for k in values):
        # first offsets: the measured contrasts through the sensitivities
        metrics = ev.target.metrics
        s_data = np.array([max(ev.data[m]["spread"], 1e-12) for m in metrics])
        weight = np.array([ev.target.weight(m) for m in metrics])
        _configuration_step(ev, values, None, sens, 1.0, s_data, weight)
        model = ev.stats(values)
    best_cost, best = float(np.sum(ev.residual(model) ** 2)), dict(values)
    damping = 1.0
    for _ in range(rounds):
        trial = _moment_step(ev, best, model, sens, damping)
        trial_model = ev.stats(trial)
        cost = float(np.sum(ev.residual(trial_model) ** 2))
        if cost < best_cost:
            best_cost, best, model = cost, trial, trial_model
            if np.all(np.abs(ev.residual(model)) <= 1.0):  # all within 5 %
                break
            sens = _sensitivities(ev, best, model)
        else:
            damping *= 0.5
    return best


def fit_variation(target: Target, card: Card, *, devices: int | None = None,
                  cycles: int | None = None, seed: int = 1, rounds: int = 8,
                  polish_nfev: int = 10, protocol: Protocol | None = None,
                  start_sigma: Mapping[str, float] | None = None,
                  log: Callable[[str], None] | None = None,
                  carriers: dict[str, str] | None = None,
                  slow: Mapping[str, tuple[float, float]] | None = None,
                  config: Configurations | None = None) -> VariationFit:
    """Moment matching (:func:`_moment_match`, ``rounds`` steps), then, with ``polish_nfev`` > 0, an
    lmfit least-squares polish of all shifts and spreads together; the best evaluated
    values win.  ``start_sigma`` (carrier -> σ, e.g. the per-cycle scatter of
    :func:`rram.fit.cycles.scatter_sigmas`; nested, that σ starts both kinds and
    ``"<carrier>.d2d"``/``"<carrier>.c2c"`` start one) replaces the generic starting
    spreads.  Each evaluation simulates ``devices`` × ``cycles`` (default 200 × 3;
    nested, :data:`NESTED_DESIGN`).  ``carriers`` (metric -> parameter): as chosen
    already by :func:`choose_carriers`; ``slow``: the slow parts of their C2C entries
    (parameter -> (share, memory)), held while the spreads are fitted; ``config``: two
    configurations measured in the data (:mod:`rram.fit.modes`, not nested), whose
    contrasts the carriers' offsets in the upper one are fitted to."""
    t0 = time.perf_counter()
    default = NESTED_DESIGN if target.design else (200, 3)
    devices, cycles = devices or default[0], cycles or default[1]
    if target.design and cycles < 2:
        raise InputError(f"cycles {cycles}: a nested fit simulates >= 2 cycles per device")
    protocol = protocol or protocol_of(card)
    carriers = carriers or choose_carriers(target, card, protocol, seed, log=log)
    config = None if target.design else config
    ev = _Evaluator(target, carriers, card, protocol, devices, cycles, seed, log, slow, config)
    values = {}
    start = dict(start_sigma or {})
    for p in carriers.values():
        for _, kind in target.spreads:
            sigma = start.get(f"{p}.{kind}", start.get(p, START_SIGMA[p]))
            values[sigma_key(p, kind)] = float(min(max(sigma, 0.0), MAX_SIGMA[p]))
        values[f"shift_{p}"] = 0.0
    values = _moment_match(ev, values, rounds)
    if config is not None:
        values = _geometry_scan(ev, values, rounds)
    if polish_nfev > 0:
        params = lmfit.Parameters()
        for p in carriers.values():
            for _, kind in target.spreads:
                key = sigma_key(p, kind)
                params.add(key, value=values[key], min=0.0, max=MAX_SIGMA[p])
            lo, hi = shift_bounds(p, card)
            params.add(f"shift_{p}", value=values[f"shift_{p}"], min=lo, max=hi)
        budget = ev.count + polish_nfev

        def residual(pars: lmfit.Parameters) -> np.ndarray:
            if ev.count >= budget:  # a hard cap on Monte Carlo runs, Jacobian included
                raise AbortFitException(f"{polish_nfev} polish evaluations used")
            # the configurations' offsets held at the moment match's
            return ev.residual(ev.stats({**values, **{k: v.value for k, v in pars.items()}}))

        lmfit.Minimizer(residual, params).least_squares(diff_step=0.05, x_scale="jac")
    assert ev.best is not None
    spec = spec_from(ev.best[1], target, carriers, slow, config)
    frame = simulate_metrics(card, spec, protocol, devices, cycles, seed)
    model = model_stats(frame, target)
    if config is not None:
        model["configurations"] = simulated_configurations(frame, config)
    return VariationFit(spec, target, ev.data, model, frame, time.perf_counter() - t0,
                        ev.count, protocol, carriers, (devices, cycles, seed), config)


def save_spec(fit: VariationFit, path: str | Path, data_sha256: str, card: Card,
              holdout: dict | None = None, drift: dict | None = None,
              model_drift: dict | None = None) -> Path:
    """The fitted spec with its provenance, fit figures, (``holdout``) the errors on
    held-out data, (``drift``) the data's :func:`rram.fit.drift.drift_stats` and
    (``model_drift``) those of a simulated record of the spec."""
    data = json.loads(fit.spec.to_json())
    data["provenance"] = {"rram_version": __version__, "data_sha256": data_sha256,
                          "card_sha256": card.digest}
    data["fit"] = {"carriers": fit.carriers, "weights": dict(fit.target.weights),
                   "nested": (dict(zip(("devices", "cycles"), fit.target.design,
                                       strict=True)) if fit.target.design else None),
                   "data": {**fit.data_stats, "ranks": dict(fit.target.ranks),
                            **({"configurations": fit.config.stats} if fit.config else {})},
                   "model": fit.model_stats,
                   "ks": fit.ks(),
                   "failed_sets": {"data": (fit.target.failed_sets if math.isfinite(
                       fit.target.failed_sets) else None), "model": fit.failed_sets()},
                   "evaluations": fit.nfev, "seconds": round(fit.seconds, 1)}
    if holdout is not None:
        data["holdout"] = holdout
    for key, stats in (("drift", drift), ("model_drift", model_drift)):
        if stats is not None:  # JSON has no NaN: an undefined figure is null
            data[key] = {m: {k: None if isinstance(v, float) and not math.isfinite(v) else v
                             for k, v in s.items()} for m, s in stats.items()}
    return write_text_atomic(path, json.dumps(data, indent=2) + "\n")


__all__ = ["CANDIDATES", "DISTRIBUTION", "LOG_METRICS", "METRICS", "NESTED_DESIGN", "Target",
           "VariationFit", "choose_carriers", "fit_variation", "model_stats",
           "protocol_of", "resolution", "robust_sigma", "save_spec", "sigma_key",
           "simulate_metrics", "spec_from", "stats_of", "target_of"]
