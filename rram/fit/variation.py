"""Fit the Monte Carlo variation spec to measured distributions (lmfit).

The carriers are the physical causes of ``docs/model.md`` § Variation, one per measured
metric:

=========  ==========  ==========================================================
carrier    metric      distribution, cause
=========  ==========  ==========================================================
``rtop``   R_LRS       lognormal: the constriction of the CF a SET forms at the top
                       electrode, drawn at each SET and held through its RESET.  The
                       compliance sets the CF's own resistance; the contact adds to it,
                       so R_LRS = R_CF + rtop has a floor and an upper tail, and the
                       series drop raises V_reset with it.  (The TUD cell's upper LRS
                       mode, cycles ~600-925, is a second configuration of the cell:
                       :mod:`rram.fit.modes`.)
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
from ..card import Card
from ..errors import InputError
from ..experiment import DCLoop
from ..io import write_text_atomic
from ..metrics import LOG_METRICS, METRICS, did_not_switch, failed_reset_share
from ..validity import OUT_OF_RANGE
from ..variation import VariationSpec
from .carriers import (
    CANDIDATES,
    DISTRIBUTION,
    MAX_SIGMA,
    START_SIGMA,
    choose_carriers,
    model_stats,
    protocol_of,
    sigma_key,
    simulate_metrics,
    spec_from,
)
from .matching import (
    Evaluator,
    contrast,
    geometry_scan,
    moment_match,
    refine,
    shift_bounds,
)
from .modes import Configurations, simulated_configurations
from .nested import CONDITIONAL
from .target import (
    QUANTILES,
    Target,
    resolution,
    robust_sigma,
    stats_of,
    target_of,
)

#: Simulated devices × cycles of a nested fit: many devices (the D2D spread of 256 is
#: known to ~4 %), few cycles (the C2C spread is pooled over all of them).
NESTED_DESIGN = (256, 5)
#: Devices of the last moment-matching steps and of the reported figures
#: (:func:`rram.fit.matching.refine`), and the steps tried there.
REFINE_DEVICES = 1000
REFINE_ROUNDS = 3

@dataclass
class VariationFit:
    spec: VariationSpec
    target: Target
    data_stats: dict
    model_stats: dict
    model_frame: pd.DataFrame
    seconds: float
    nfev: int
    protocol: DCLoop
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
            for m, given in CONDITIONAL:
                if "d2d_given" in self.data_stats.get(m, {}):
                    lines.append(f"  {m} D2D given the devices' {given}: data "
                                 f"{self.data_stats[m]['d2d_given']:.4g}, model "
                                 f"{self.model_stats[m]['d2d_given']:.4g} (fitted in its "
                                 "place)")
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
                             f"{m} {c:+.3g} | {contrast(self.model_stats, m):+.3g}"
                             for m, c in self.config.contrast.items()))
            got = self.model_stats["configurations"]
            lines.append("  spread there, data | model: " + ", ".join(
                f"{m} {d['upper_spread']:.3g} | {got[m]['upper_spread']:.3g}"
                for m, d in self.config.stats.items()))
        ks = self.ks()
        lines.append("KS distance: " + ", ".join(f"{m} {v:.3f}" for m, v in ks.items()))
        lines.append(f"failed SETs: data {100 * self.target.failed_sets:.1f} %, model "
                     f"{100 * self.failed_sets():.1f} %; failed RESETs (after a SET that "
                     f"switched): data {100 * self.target.failed_resets:.1f} %, model "
                     f"{100 * self.failed_resets():.1f} %")
        lines.append(f"device-cycles outside the model's range of validity: "
                     f"{100 * self.model_stats.get(OUT_OF_RANGE, 0.0):.1f} %")
        lines.append(f"{self.nfev} Monte Carlo evaluations, {self.seconds:.0f} s")
        for v in self.spec.variations:
            lines.append(f"  {v.parameter:4s} {v.kind} {v.distribution:9s} sigma {v.sigma:.4g}"
                         f"  shift {v.shift:+.4g}" + (f"  slow {100 * v.slow:.0f} % over "
                                                     f"{v.memory:.0f} cycles" if v.slow else "")
                         + (f"  upper configuration {v.mode_step:+.4g}" if v.mode_step else "")
                         + (f" σ x{v.mode_scale:.3g}" if v.mode_scale != 1 else ""))
        return "\n".join(lines)

    def failed_sets(self) -> float:
        """Share of the simulated SETs that did not switch."""
        return float(did_not_switch(self.model_frame["reason"]).mean())

    def failed_resets(self) -> float:
        """Share of the simulated RESETs after a SET that switched that did not switch."""
        return failed_reset_share(self.model_frame["reason"])

    def ks(self) -> dict[str, float]:
        from scipy.stats import ks_2samp

        out = {}
        for m in self.target.metrics:
            a = self.target.values[m][np.isfinite(self.target.values[m])]
            b = self.model_frame[m].to_numpy(float)
            out[m] = float(ks_2samp(a, b[np.isfinite(b)]).statistic)
        return out



def fit_variation(target: Target, card: Card, *, devices: int | None = None,
                  cycles: int | None = None, seed: int = 1, rounds: int = 8,
                  polish_nfev: int = 10, protocol: DCLoop | None = None,
                  start_sigma: Mapping[str, float] | None = None,
                  log: Callable[[str], None] | None = None,
                  carriers: dict[str, str] | None = None,
                  slow: Mapping[str, tuple[float, float]] | None = None,
                  config: Configurations | None = None,
                  refine_devices: int | None = None) -> VariationFit:
    """Moment matching (:func:`moment_match`, ``rounds`` steps), then, with ``polish_nfev`` > 0, an
    lmfit least-squares polish of all shifts and spreads together; the best evaluated
    values win.  ``start_sigma`` (carrier -> σ, e.g. the per-cycle scatter of
    :func:`rram.fit.cycles.scatter_sigmas`; nested, that σ starts both kinds and
    ``"<carrier>.d2d"``/``"<carrier>.c2c"`` start one) replaces the generic starting
    spreads.  Each evaluation simulates ``devices`` × ``cycles`` (default 200 × 3;
    nested, :data:`NESTED_DESIGN`).  ``carriers`` (metric -> parameter): as chosen
    already by :func:`choose_carriers`; ``slow``: the slow parts of their C2C entries
    (parameter -> (share, memory)), held while the spreads are fitted; ``config``: two
    configurations measured in the data (:mod:`rram.fit.modes`, not nested), whose
    contrasts the carriers' offsets in the upper one are fitted to, and the layer the
    CF crosses there scanned (:func:`rram.fit.matching.geometry_scan`).
    ``refine_devices`` more
    than ``devices``: the last steps, and the figures reported, on that many devices
    (:func:`rram.fit.matching.refine`; None: :data:`REFINE_DEVICES`); 0, fewer than
    ``devices`` or a nested fit: none."""
    t0 = time.perf_counter()
    default = NESTED_DESIGN if target.design else (200, 3)
    devices, cycles = devices or default[0], cycles or default[1]
    if target.design and cycles < 2:
        raise InputError(f"cycles {cycles}: a nested fit simulates >= 2 cycles per device")
    protocol = protocol or protocol_of(card)
    carriers = carriers or choose_carriers(target, card, protocol, seed, log=log)
    config = None if target.design else config
    ev = Evaluator(target, carriers, card, protocol, devices, cycles, seed, log, slow, config)
    values = {}
    start = dict(start_sigma or {})
    for p in carriers.values():
        for _, kind in target.spreads:
            sigma = start.get(f"{p}.{kind}", start.get(p, START_SIGMA[p]))
            values[sigma_key(p, kind)] = float(min(max(sigma, 0.0), MAX_SIGMA[p]))
        values[f"shift_{p}"] = 0.0
    values = moment_match(ev, values, rounds)
    if config is not None:
        values = geometry_scan(ev, values, rounds)
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
    refine_devices = REFINE_DEVICES if refine_devices is None else refine_devices
    if not target.design and refine_devices > devices:  # nested: many devices already
        ev, _ = refine(ev, ev.best[1], refine_devices, REFINE_ROUNDS)
        devices = refine_devices
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
              model_drift: dict | None = None, verdict: dict | None = None) -> Path:
    """The fitted spec with its provenance, fit figures, (``holdout``) the errors on
    held-out data, (``drift``) the data's :func:`rram.fit.drift.drift_stats` and
    (``model_drift``) those of a simulated record of the spec."""
    data = json.loads(fit.spec.to_json())
    data["provenance"] = {"rram_version": __version__, "data_sha256": data_sha256,
                          "card_sha256": card.digest}
    data["fit"] = {"protocol": fit.protocol.as_meta(),
                   "carriers": fit.carriers, "weights": dict(fit.target.weights),
                   "nested": (dict(zip(("devices", "cycles"), fit.target.design,
                                       strict=True)) if fit.target.design else None),
                   "data": {**fit.data_stats, "ranks": dict(fit.target.ranks),
                            **({"configurations": fit.config.stats} if fit.config else {})},
                   "model": fit.model_stats,
                   "ks": fit.ks(),
                   **{key: {"data": measured if math.isfinite(measured) else None,
                            "model": modelled}
                      for key, measured, modelled in (
                          ("failed_sets", fit.target.failed_sets, fit.failed_sets()),
                          ("failed_resets", fit.target.failed_resets, fit.failed_resets()))},
                   "evaluations": fit.nfev, "seconds": round(fit.seconds, 1)}
    if holdout is not None:
        data["holdout"] = holdout
    if verdict is not None:
        data["verdict"] = verdict
    for key, stats in (("drift", drift), ("model_drift", model_drift)):
        if stats is not None:  # JSON has no NaN: an undefined figure is null
            data[key] = {m: {k: None if isinstance(v, float) and not math.isfinite(v) else v
                             for k, v in s.items()} for m, s in stats.items()}
    return write_text_atomic(path, json.dumps(data, indent=2) + "\n")


__all__ = ["CANDIDATES", "DISTRIBUTION", "LOG_METRICS", "METRICS", "NESTED_DESIGN",
           "REFINE_DEVICES", "Target",
           "VariationFit", "choose_carriers", "fit_variation", "model_stats",
           "protocol_of", "resolution", "robust_sigma", "save_spec", "sigma_key",
           "simulate_metrics", "spec_from", "stats_of", "target_of"]

