"""The moment matching of :func:`rram.fit.variation.fit_variation`.

An :class:`Evaluator` runs the Monte Carlo of a set of fitted values and scores it
against the data; :func:`moment_match` takes linearised steps on the carriers' shifts
and spreads (and, with two configurations, their offsets in the upper one) with
sensitivities probed by simulation; :func:`geometry_scan` fits the layer the CF crosses
in the upper configuration.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping

import numpy as np

from ..card import Card
from ..experiment import DCLoop
from ..metrics import LOG_METRICS
from ..validity import OUT_OF_RANGE
from ..variation import MAX_MODE_SCALE
from .carriers import (
    DISTRIBUTION,
    FAILED_RESETS,
    GEOMETRY,
    MAX_SIGMA,
    PROBE,
    centre,
    model_stats,
    sigma_key,
    simulate_metrics,
    spec_from,
)
from .modes import Configurations, simulated_configurations
from .nested import CONDITIONAL
from .target import Target

#: Mismatch units: a quantile in fifths of the metric's measured spread, a rank
#: correlation in steps of 0.05 (medians and spreads: 5 %, see ``Evaluator.residual``).
QUANTILE_UNIT = 0.2
RANK_UNIT = 0.05
#: A spec is no match whose devices leave the model's range of validity: the share of
#: device-cycles outside it is a residual row, one unit per 0.1 % (issue 36: the TUD
#: spec's upper configuration confined its CF to a cell ×0.30, which 30 % of the SETs
#: filled, many above tvalid).
OUT_OF_RANGE_UNIT = 0.001
#: A spec is no match whose RESETs fail where the device's did not: the failed-RESET
#: share's mismatch is a residual row, one unit per 0.25 % (issue 38: a contact's
#: lognormal tail of a few kOhm holds a RESET's current below its switch; the committed
#: TUD spec fails 0.56 % of its RESETs so, against none of the record's 987).
FAILED_RESET_UNIT = 0.0025
#: The smallest factor on a carrier's σ in the upper configuration.
MIN_SCALE = 0.1


def scale_bounds(p: str, sigma: float) -> tuple[float, float]:
    """The range of carrier ``p``'s σ factor in the upper configuration at σ ``sigma``:
    from :data:`MIN_SCALE` to what keeps σ·factor within MAX_SIGMA and MAX_MODE_SCALE."""
    return MIN_SCALE, min(MAX_SIGMA[p] / sigma, MAX_MODE_SCALE)


#: The factors on the layer :func:`geometry_scan` tries.
GEOMETRY_GRID = (1.15, 1.3, 1.5, 1.75, 2.0)
#: Moment steps (with the scan's sensitivities) each cell of the scan gets.
SCAN_ROUNDS = 3


#: Marquardt's damping of the linearised steps: the least-squares step is regularised
#: by this fraction of each column's squared norm, so a direction the probes barely
#: tell apart (two carriers moving the medians alike) takes a small step instead of a
#: large one whose sign a 2 % change in one probe flips.
RIDGE = 0.1


def damped_lstsq(a: np.ndarray, b: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """argmin |a·x − b|² + ridge·Σ_j |a_j|² x_j² (Levenberg–Marquardt with Marquardt's
    column scaling): the exact least-squares step where ``a`` is well conditioned,
    shrunk along its weakly determined directions."""
    norms = np.linalg.norm(a, axis=0)
    scaled = np.vstack([a, np.diag(math.sqrt(ridge) * norms)])
    rhs = np.concatenate([b, np.zeros(a.shape[1])])
    return np.linalg.lstsq(scaled, rhs, rcond=None)[0]


def contrast(model: dict, metric: str) -> float:
    """A metric's median in the upper configuration less that in the lower, simulated."""
    got = model["configurations"][metric]
    return got["upper"] - got["lower"]


def spread_statistic(data: dict, name: str) -> str:
    """The statistic a metric's spread ``name`` is matched by: a D2D spread by the
    conditional one (:func:`rram.fit.nested.conditional_d2d`) where the data have it."""
    return "d2d_given" if name == "d2d" and "d2d_given" in data else name


class Evaluator:
    """Monte Carlo statistics of a set of fitted values, counted, and the best so far."""

    def __init__(self, target: Target, carriers: dict[str, str], card: Card,
                 protocol: DCLoop, devices: int, cycles: int, seed: int,
                 log: Callable[[str], None] | None,
                 slow: Mapping[str, tuple[float, float]] | None = None,
                 config: Configurations | None = None):
        self.target, self.carriers, self.card, self.protocol = target, carriers, card, protocol
        self.devices, self.cycles, self.seed, self.log = devices, cycles, seed, log
        self.slow = dict(slow or {})
        self.config = config
        self.data = target.stats()
        #: each metric's measured spread and weight, the units of the linearised steps
        self.scale = np.array([max(self.data[m]["spread"], 1e-12) for m in target.metrics])
        self.weights = np.array([target.weight(m) for m in target.metrics])
        self.count = 0
        self.best: tuple[float, dict[str, float]] | None = None
        self._seen: dict[tuple, dict] = {}

    def stats(self, values: dict[str, float]) -> dict:
        # the same values give the same sample (one seed): simulate them once
        key = tuple(sorted(values.items()))
        if key in self._seen:
            return copy.deepcopy(self._seen[key])
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
        self._seen[key] = copy.deepcopy(model)
        return model

    def residual(self, model: dict) -> np.ndarray:
        """Per metric: the median (5 % of it for R, 5 % of the spread for V) and the
        spread (5 % of it; nested: within devices and of their medians, the latter
        by :func:`spread_statistic`) mismatches, then the
        :data:`QUANTILES` (of ln R for resistances; :data:`QUANTILE_UNIT` of the
        measured spread), times the metric's weight; then the rank correlations
        (:data:`RANK_UNIT`); with two configurations, each metric's contrast
        between them (as a quantile); last, the share of device-cycles outside the
        range of validity (:data:`OUT_OF_RANGE_UNIT`) and, where the data tell it, the
        share of failed RESETs (:data:`FAILED_RESET_UNIT`)."""
        r = []
        for m in self.target.metrics:
            d, s, w = self.data[m], model[m], self.target.weight(m)
            if m in LOG_METRICS:
                r.append(w * math.log(s["median"] / d["median"]) / 0.05)
            else:
                r.append(w * (s["median"] - d["median"]) / (0.05 * d["spread"]))
            for name, _ in self.target.spreads:
                k = spread_statistic(d, name)
                r.append(w * (s[k] / d[k] - 1) / 0.05)
            r += list(w * (np.array(s["quantiles"]) - d["quantiles"])
                      / (QUANTILE_UNIT * d["spread"]))
        r += [(model["ranks"][k] - rho) / RANK_UNIT for k, rho in self.target.ranks]
        if self.config is not None:  # the configurations' contrasts, as quantiles
            r += [self.target.weight(m) * (contrast(model, m) - c)
                  / (QUANTILE_UNIT * self.data[m]["spread"])
                  for m, c in self.config.contrast.items() if m in self.data]
        r.append(model.get(OUT_OF_RANGE, 0.0) / OUT_OF_RANGE_UNIT)
        if math.isfinite(self.target.failed_resets):
            r.append((model.get(FAILED_RESETS, 0.0) - self.target.failed_resets)
                     / FAILED_RESET_UNIT)
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


def sensitivities(ev: Evaluator, values: dict[str, float], model: dict) -> np.ndarray:
    """d(centre of metric)/d(shift of carrier), metrics × carriers: one probe run per
    carrier.  Every metric is read, not only the carrier's own: the carriers couple."""
    metrics, carriers = ev.target.metrics, list(ev.carriers.values())
    sens = np.zeros((len(metrics), len(carriers)))
    for j, p in enumerate(carriers):
        probe = dict(values)
        probe[f"shift_{p}"] += PROBE[p]
        probed = ev.stats(probe)
        for i, m in enumerate(metrics):
            sens[i, j] = (centre(m, probed) - centre(m, model)) / PROBE[p]
    return sens


def moment_step(ev: Evaluator, values: dict[str, float], model: dict, sens: np.ndarray,
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
    s_data, weight = ev.scale, ev.weights
    miss = np.array([centre(m, data) - centre(m, model) for m in metrics]) / s_data
    if ev.config is not None:  # the shifts place the lower configuration, the rest follow
        got, cfg = model["configurations"], ev.config.stats
        miss = np.array([(cfg[m]["lower"] - got[m]["lower"]) / s if m in cfg else x
                         for m, s, x in zip(metrics, s_data, miss, strict=True)])
    step = damped_lstsq(weight[:, None] * sens / s_data[:, None], weight * miss)
    trial = dict(values)
    for j, p in enumerate(carriers):
        limit = 3 * PROBE[p]
        lo, hi = shift_bounds(p, ev.card)
        trial[f"shift_{p}"] = float(np.clip(
            trial[f"shift_{p}"] + damping * float(np.clip(step[j], -limit, limit)), lo, hi))
    if ev.config is not None:
        configuration_step(ev, trial, model, sens, damping)
    # nested: the spreads within devices by the C2C σ, of the medians by the D2D σ
    for name, kind in ev.target.spreads:
        stat = [spread_statistic(data[m], name) for m in metrics]
        s_data = np.array([max(data[m][k], 1e-12) for m, k in zip(metrics, stat, strict=True)])
        s_model = np.array([model[m][k] for m, k in zip(metrics, stat, strict=True)])
        row = sens.copy()  # a conditional spread: the conditioning metric's carrier is out
        for i, (m, k) in enumerate(zip(metrics, stat, strict=True)):
            if k == "d2d_given":
                row[i, [j for j, p in enumerate(carriers)
                        if ev.carriers.get(dict(CONDITIONAL)[m]) == p]] = 0.0
        if ev.config is not None and name == "spread":  # the carriers' σ: within the
            cfg, got = ev.config.stats, model["configurations"]  # lower configuration
            s_data = np.array([max(cfg[m]["spread"], ev.target.spread_floor(m), 1e-12)
                               if m in cfg else x for m, x in zip(metrics, s_data, strict=True)])
            s_model = np.array([got[m]["spread"] if m in cfg else x
                                for m, x in zip(metrics, s_model, strict=True)])
        sigma = np.array([values[sigma_key(p, kind)] for p in carriers])
        predicted = (row ** 2) @ (sigma ** 2)
        # a spread the sample could not measure (too few devices switched) weighs 0
        measured = np.isfinite(s_model)
        s_model = np.where(measured, s_model, np.sqrt(predicted))
        unexplained = np.maximum(s_model ** 2 - predicted, 0.0)
        # where the linear sum overstates the simulated spread (saturating responses,
        # spreads of quantiles), the carriers' shares are scaled down to it
        scale = np.where(predicted > s_model ** 2, s_model ** 2 / np.maximum(predicted, 1e-300),
                         1.0)
        gain = scale[:, None] * row ** 2 / (s_data ** 2)[:, None]
        w = weight * measured
        var, _ = nnls(w[:, None] * gain, w * np.maximum(1.0 - unexplained / s_data ** 2, 0.0))
        for j, p in enumerate(carriers):
            target = min(math.sqrt(var[j]), MAX_SIGMA[p])
            # damped in the log: a spread far too wide pushes devices out of switching
            ratio = float(np.clip(target / max(sigma[j], 1e-6), 0.5, 2.0)) if target > 0 \
                else 0.5
            trial[sigma_key(p, kind)] = float(np.clip(sigma[j] * ratio ** damping, 0.0,
                                                      MAX_SIGMA[p]))
    return trial


def configuration_step(ev: Evaluator, trial: dict[str, float], model: dict | None,
                        sens: np.ndarray, damping: float) -> None:
    """The carriers' offsets in the upper configuration (``step_<p>``, in place), by the
    linearisation of the medians applied to each configuration's cycles: the lower ones'
    misses move the shifts (as :func:`moment_step` does for all cycles), the upper ones'
    the shifts plus the offsets, so the offsets take the difference; and the σ factors
    there (``scale_<p>``), toward each metric's measured spread in the upper
    configuration.  ``model`` None: the first offsets, from the measured contrasts
    alone."""
    metrics, carriers = ev.target.metrics, list(ev.carriers.values())
    s_data, weight = ev.scale, ev.weights
    data = ev.config.stats
    keep = np.array([m in data for m in metrics], float)
    a = (keep * weight)[:, None] * sens / s_data[:, None]

    def solve(miss: np.ndarray) -> np.ndarray:
        return damped_lstsq(a, keep * weight * np.nan_to_num(miss) / s_data)

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
    if model is None:
        return
    # the spreads in the upper configuration, each by its own metric's carrier (the
    # carriers' terms do not couple as strongly in a configuration's narrow range)
    got = model["configurations"]
    for m, p in ev.carriers.items():
        if m not in data or not np.isfinite(got[m]["upper_spread"]):
            continue
        want = max(data[m]["upper_spread"], ev.target.spread_floor(m), 1e-12)
        ratio = float(np.clip(want / max(got[m]["upper_spread"], 1e-12), 0.5, 2.0))
        sigma = max(trial[sigma_key(p, "")], 1e-12) if sigma_key(p, "") in trial else 1.0
        trial[f"scale_{p}"] = float(np.clip(trial.get(f"scale_{p}", 1.0) * ratio ** damping,
                                            *scale_bounds(p, sigma)))


def geometry_scan(ev: Evaluator, values: dict[str, float], rounds: int
                  ) -> dict[str, float]:
    """The length of the CF's path through the layer (``l0``) in the upper
    configuration, by a scan of :data:`GEOMETRY_GRID` and none: each with the carriers'
    offsets solved again (one linearised step) and :data:`SCAN_ROUNDS` moment steps, the
    best refined by moment matching.

    A CF that forms where the layer is thicker (or whose constriction sits deeper in it)
    has more room for the gap: its RESET opens a wider gap (R_HRS rises) and its next
    SET needs more voltage (|V_set| rises), while its LRS barely moves.  With the
    contact, which raises R_LRS and V_reset, it reproduces a measured configuration in
    which all four metrics move together (TUD: R_LRS x2.5, R_HRS x1.9, |V_set| +0.25 V,
    V_reset +0.36 V), which no carrier alone can; the gap opens as the log of the
    time, so the response is scanned, not linearised.  Before (issue 36) the scan
    narrowed the CF's cell (``wcf`` x0.30 on the TUD record), a cell 30 % of the SETs
    then filled, outside the range of validity."""
    model = ev.stats(values)
    sens = sensitivities(ev, values, model)
    best_cost, best = math.inf, values
    # factor 1 first: the same re-solved step without the geometry, so a change that
    # moves nothing (an identical simulation) never wins
    for factor in (1.0, *GEOMETRY_GRID):
        trial = {**values, f"step_{GEOMETRY}": math.log(factor)}
        got = ev.stats(trial) if factor != 1.0 else model
        configuration_step(ev, trial, got, sens, 1.0)
        # each matched a little before they are compared: one re-solved step leaves
        # misses that the matching removes, and the choice flipped with them
        trial = moment_match(ev, trial, SCAN_ROUNDS, sens)
        cost = float(np.sum(ev.residual(ev.stats(trial)) ** 2))
        if cost < best_cost:
            best_cost, best = cost, trial
    if ev.log:
        ev.log(f"  the layer the CF crosses in the upper configuration: x"
               f"{math.exp(best[f'step_{GEOMETRY}']):.2f}")
    return moment_match(ev, best, rounds)


def moment_match(ev: Evaluator, values: dict[str, float], rounds: int,
                 sens: np.ndarray | None = None) -> dict[str, float]:
    """Linearised moment matching (:func:`moment_step`); the sensitivities are probed
    again after every accepted step (the response is far from linear: R_LRS saturates
    as ``kth`` grows), and the step is halved whenever a round makes the match worse.
    ``rounds`` counts the steps tried.  ``sens`` given (probed on a smaller design for
    :func:`refine`, or once for all the cells of :func:`geometry_scan`): used
    throughout, never probed."""
    model = ev.stats(values)
    probe = sens is None
    if sens is None:
        sens = sensitivities(ev, values, model)
    if ev.config is not None and not any(k.startswith("step_") for k in values):
        # first offsets: the measured contrasts through the sensitivities
        configuration_step(ev, values, None, sens, 1.0)
        model = ev.stats(values)
    best_cost, best = float(np.sum(ev.residual(model) ** 2)), dict(values)
    damping = 1.0
    for _ in range(rounds):
        trial = moment_step(ev, best, model, sens, damping)
        trial_model = ev.stats(trial)
        cost = float(np.sum(ev.residual(trial_model) ** 2))
        if cost < best_cost:
            best_cost, best, model = cost, trial, trial_model
            if np.all(np.abs(ev.residual(model)) <= 1.0):  # all within 5 %
                break
            if probe:
                sens = sensitivities(ev, best, model)
        else:
            damping *= 0.5
    return best


def refine(ev: Evaluator, values: dict[str, float], devices: int, rounds: int
           ) -> tuple[Evaluator, dict[str, float]]:
    """Moment matching on ``devices`` (more than ``ev``'s) with the sensitivities probed
    on ``ev``'s design: (the larger design's evaluator, its best values).

    The fit's own sample is small, and its medians are matched to that sample's noise: a
    configuration that lasts hundreds of cycles and R_HRS's ln-σ ~0.75 leave the median
    of 200 devices uncertain by ~7 % (TUD: +11 % on the fit's sample, −10 % on 2000
    devices).  A few steps on a larger sample remove that bias at a few of its runs."""
    sens = sensitivities(ev, values, ev.stats(values))
    big = Evaluator(ev.target, ev.carriers, ev.card, ev.protocol, devices, ev.cycles, ev.seed,
                    ev.log, ev.slow, ev.config)
    big.count = ev.count
    if ev.log:
        ev.log(f"  refinement on {devices} devices x {ev.cycles} cycles")
    return big, moment_match(big, values, rounds, sens)


__all__ = ["GEOMETRY_GRID", "QUANTILE_UNIT", "RANK_UNIT", "Evaluator", "configuration_step",
           "contrast", "geometry_scan", "moment_match", "moment_step", "refine",
           "sensitivities", "shift_bounds", "spread_statistic"]
