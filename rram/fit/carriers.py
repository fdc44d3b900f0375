"""The carriers of measured variation and the simulation a variation fit evaluates.

Which card parameter carries each measured metric (:data:`CANDIDATES`, chosen on the card
by :func:`choose_carriers`), their distributions and ranges, the measurement protocol a
fitted card stands for, the Monte Carlo run of a candidate spec (:func:`simulate_metrics`)
and its statistics (:func:`model_stats`), and the spec a set of fitted values stands for
(:func:`spec_from`).  :mod:`rram.fit.variation` fits them (the physics of each carrier is
in its docstring).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from ..card import Card
from ..errors import InputError
from ..experiment import DCLoop
from ..mc import MonteCarlo, run_devices
from ..metrics import LOG_METRICS, failed_reset_share
from ..validity import OUT_OF_RANGE, count_out_of_range
from ..variation import MAX_MODE_SCALE, Mode, Variation, VariationSpec, spread_limits
from .drift import with_slow
from .modes import Configurations
from .target import Target, conditional_stats, rank_correlations, stats_of

#: The physical causes each metric may be carried by, in order of preference.
CANDIDATES = {"r_lrs_ohm": ("rtop", "kth", "fw"), "r_hrs_ohm": ("deh",),
              "v_set_V": ("dea",), "v_reset_V": ("dei", "deh")}
DISTRIBUTION = {"fw": "lognormal", "kwr": "lognormal", "kth": "lognormal", "rtop": "lognormal",
                "deh": "normal", "dea": "normal", "dei": "normal"}
#: Starting spreads, largest spreads and probe steps of each carrier (its units; ln for
#: the lognormal ones).
START_SIGMA = {"fw": 0.3, "kwr": 0.3, "kth": 0.3, "rtop": 0.5, "deh": 0.05, "dea": 0.05,
               "dei": 0.1}
#: A barrier's lever on its voltage is the gap over its lowering length (TUD card: V_set
#: moves 0.65 V per eV of ``dea``), so the measured σ(V_set) 0.31 V needs ~0.5 eV.  The
#: HRS barrier ``deh`` may use the whole 0.5 eV a barrier's spread allows: the TUD card
#: refitted in issue 36 opens its gap by field and heat together, so ``deh`` moves its
#: R_HRS x1.7 per −0.4 eV (x3.6 before), and a lower tail that drives a state out of
#: its range costs the fit through the range-of-validity residual.
MAX_SIGMA = {"fw": 2.0, "kwr": 2.0, "kth": 1.5, "rtop": 2.0, "deh": 0.5, "dea": 0.6,
             "dei": 0.4}
PROBE = {"fw": 0.15, "kwr": 0.3, "kth": 0.15, "rtop": 0.3, "deh": 0.05, "dea": 0.05,
         "dei": 0.05}
#: A carrier must move its metric's median by this many of the data's spreads per probe.
MIN_SENSITIVITY = 0.05
#: Cycles each simulated device runs before those compared with the data: a measured
#: distribution is of a cycled device, and the first SET from the formed state is not
#: (TUD card: first V_set −0.87 V, later ones −1.25 V, which a 2-cycle design mixed 1:1).
BURN_IN = 1
#: The geometry of a configuration (:func:`rram.fit.matching.geometry_scan`): the length
#: of the CF's path through the layer, the bound of the gap.
GEOMETRY = "l0"
#: The key of :func:`model_stats` that holds the share of failed RESETs.
FAILED_RESETS = "failed_resets"



def protocol_of(card: Card) -> DCLoop:
    """The measurement protocol a fitted card was fitted to (its ``fit`` metadata), or
    the default DC loop."""
    return DCLoop.from_meta(card.meta)


def centre(m: str, stats: dict) -> float:
    """A metric's centre as the fit matches it: ln of the median for resistances."""
    return math.log(stats[m]["median"]) if m in LOG_METRICS else stats[m]["median"]


def choose_carriers(target: Target, card: Card, protocol: DCLoop, seed: int = 1,
                    devices: int = 16, cycles: int = 2,
                    log: Callable[[str], None] | None = None) -> dict[str, str]:
    """Metric -> carrier: each metric gets its first candidate in the order of
    :data:`CANDIDATES` that moves it by :data:`MIN_SENSITIVITY` of its measured spread
    (one probe run per candidate, no spread, its shift at :data:`PROBE`), each carrier
    serving one metric.  Which cause acts depends on the card: the contact carries R_LRS
    where it moves it (a card with a 20 Ohm contact has its LRS carried by the CF's
    heating ``kth``, one whose LRS follows the lateral-growth field by ``fw``).  The
    order, not the largest lever, decides: the CF's heating moves R_LRS more per probe
    than the TUD card's 150 Ohm contact, but the spread it then needs runs 3-4 % of the
    cycles outside the range of validity and misses R_LRS's median by 15 % (KS 0.36–0.42
    against the contact's 0.04–0.17 in issue 36's refits)."""
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
                moved = abs(centre(m, probed) - centre(m, base))
                scores.append((moved / max(data[m]["spread"], 1e-12), m, p))
    chosen: dict[str, str] = {}
    # every metric's first choice before any metric's second
    usable = [(CANDIDATES[m].index(p), target.metrics.index(m), m, p)
              for score, m, p in scores if score >= MIN_SENSITIVITY]
    for _, _, m, p in sorted(usable):
        if m not in chosen and p not in chosen.values():
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
    """:func:`stats_of` a simulated frame, nested like the target's (with the
    conditional D2D spreads the target measured), under ``"ranks"`` the rank
    correlations the target measured, under :data:`rram.validity.OUT_OF_RANGE` the
    share of its device-cycles that left the model's range of validity, and under
    :data:`FAILED_RESETS` the share of its RESETs after a switched SET that failed."""
    devices = {m: frame["device"].to_numpy() for m in target.metrics}
    values = _frame_metrics(frame, target)
    out: dict[str, dict] = stats_of(values, devices if target.design else None)
    if target.conditional:  # one row per cycle: the metrics are paired already
        got = conditional_stats(values, frame["device"].to_numpy(), target.metrics)
        for m, _ in target.conditional:
            out[m]["d2d_given"] = got.get(m, math.nan)
    ranks = rank_correlations(frame)
    out["ranks"] = {k: ranks.get(k, float("nan")) for k, _ in target.ranks}
    out[OUT_OF_RANGE] = count_out_of_range(frame) / max(len(frame), 1)
    out[FAILED_RESETS] = failed_reset_share(frame["reason"])
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
    the fitted ``step_<p>`` and their σ scaled there by ``scale_<p>`` (none while every
    step is 0)."""
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
    scales = {p: values.get(f"scale_{p}", 1.0) for p in carriers.values()}
    geometry = values.get(f"step_{GEOMETRY}", 0.0)
    if config is None or not (any(steps.values()) or geometry):
        return spec
    extra = (Variation(GEOMETRY, "c2c", "lognormal", 0.0, "fitted: the layer the CF "
                       "crosses in the upper configuration", mode_step=geometry),
             ) if geometry else ()
    # a scale that the σ has outgrown since it was set stops at the largest σ
    return VariationSpec(tuple(replace(v, mode_step=steps[v.parameter],
                                       mode_scale=min(scales[v.parameter], MAX_MODE_SCALE,
                                                      spread_limits(
                                                          spec.model.parameter(v.parameter),
                                                          v.distribution)[0]
                                                      / max(v.sigma, 1e-12)))
                               if v.kind == "c2c" and v.parameter in steps else v
                               for v in spec.variations) + extra,
                         Mode(round(config.modes.share, 4), config.memory))



def simulate_metrics(card: Card, spec: VariationSpec, protocol: DCLoop, devices: int,
                     cycles: int, seed: int) -> pd.DataFrame:
    mc = MonteCarlo(card=card, spec=spec, devices=devices, cycles=cycles, seed=seed,
                    protocol=protocol, burn_in=BURN_IN)
    frame = run_devices(mc, range(devices))
    return frame[frame["converged"]]


__all__ = ["BURN_IN", "CANDIDATES", "DISTRIBUTION", "FAILED_RESETS", "GEOMETRY", "MAX_SIGMA",
           "MIN_SENSITIVITY", "PROBE", "START_SIGMA", "centre", "choose_carriers",
           "model_stats", "protocol_of", "sigma_key", "simulate_metrics", "spec_from"]
