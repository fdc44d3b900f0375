"""A variation spec as SPICE sees it: one draw per instance, the nominal at its median.

SPICE draws a parameter once per instance (ngspice's ``agauss``/``aunif`` in a
subcircuit's ``.param``), where the Monte Carlo of :mod:`rram.mc` redraws the C2C
entries at every operation.  What one draw per instance can carry is each carrier's
marginal distribution over devices and cycles: its D2D and C2C entries combined (the
slow part of a C2C entry leaves the marginal unchanged), the two configurations of the
spec's :class:`~rram.variation.Mode` as a mixture (one configuration per instance, shared
by its carriers), the truncation to the parameter's range.  A device's drift over cycles
and the redraw from one operation to the next are what it cannot carry.

:func:`marginals` describes every carrier so; :func:`median_device` is the calibrated
median device the export folds into the card (a spec fitted to measured data shifts
its carriers' centres, and the exported nominal is then that device, not the card the
loop fit left); :func:`corners` are the devices at the Φ(±3) quantiles of R_LRS, R_HRS
and |V_set|.  :mod:`rram.spice.statlib` spells them as an ngspice library.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import norm

from .card import Card, CardBatch
from .dialects import dialect
from .errors import InputError
from .experiment import DCLoop, simulate_with
from .metrics import loop_metrics
from .variation import VariationSpec


@dataclass(frozen=True)
class Configuration:
    """One configuration of a carrier: its centre and σ as offsets from the card's value
    (parameter units, or ln for a lognormal carrier), and the normal CDF at the ends of
    the parameter's range in its units (the draw is the normal truncated there)."""

    centre: float
    sigma: float
    p_lower: float
    p_upper: float

    def cdf(self, x: float) -> float:
        """P(offset <= x) of the truncated draw."""
        if self.sigma == 0:
            return float(x >= self.centre)
        p = norm.cdf((x - self.centre) / self.sigma)
        return min(max((p - self.p_lower) / (self.p_upper - self.p_lower), 0.0), 1.0)


@dataclass(frozen=True)
class Marginal:
    """The distribution of one carrier over instances: ``share`` of them in the upper
    configuration, the rest in the lower; offsets from ``base`` (the card's value)."""

    parameter: str
    distribution: str
    base: float
    lower: Configuration
    upper: Configuration
    share: float
    #: the offset of the median of the mixture (the nominal's offset)
    median: float
    #: the parameter's range (its values)
    bounds: tuple[float, float]

    def value(self, offset):
        """The parameter value at ``offset`` (a number or an array) from the card's."""
        return self.base * np.exp(offset) if self.distribution == "lognormal" \
            else self.base + offset

    @property
    def nominal(self) -> float:
        return float(self.value(self.median))

    def cdf(self, x: float) -> float:
        return (1 - self.share) * self.lower.cdf(x) + self.share * self.upper.cdf(x)

    def quantile(self, q: float) -> float:
        """The offset below which a share ``q`` (0 < q < 1) of the instances lies."""
        configs = [c for c in (self.lower, self.upper) if c.sigma > 0]
        if not configs:  # two point masses
            return self.lower.centre if q <= 1 - self.share else self.upper.centre
        lo = min(c.centre - 9 * c.sigma for c in configs)
        hi = max(c.centre + 9 * c.sigma for c in configs)
        lo = min(lo, self.lower.centre, self.upper.centre)
        hi = max(hi, self.lower.centre, self.upper.centre)
        return float(brentq(lambda x: self.cdf(x) - q, lo, hi, xtol=1e-12))


def _bounds(card: Card, name: str) -> tuple[float, float]:
    """The range a carrier is drawn within: its parameter's, and for the initial gap
    the layer (a pristine gap drawn beyond it is the layer; the Monte Carlo clips it)."""
    p = card.parameter(name)
    return p.lower, (min(p.upper, card["l0"]) if name == "x0" else p.upper)


def _offset_range(card: Card, name: str, distribution: str) -> tuple[float, float]:
    (lower, upper), base = _bounds(card, name), card[name]
    if distribution == "lognormal":
        return (math.log(lower / base) if lower > 0 else -math.inf,
                math.log(upper / base) if math.isfinite(upper) else math.inf)
    return lower - base, upper - base


def _configuration(centre: float, sigma: float, lo: float, hi: float) -> Configuration:
    if sigma == 0:
        return Configuration(centre, 0.0, 0.0, 1.0)
    return Configuration(centre, sigma, float(norm.cdf((lo - centre) / sigma)),
                         float(norm.cdf((hi - centre) / sigma)))


def _median(m: Marginal, lo: float, hi: float) -> float:
    configs = [(1 - m.share, m.lower), (m.share, m.upper)]
    if all(c.sigma == 0 for _, c in configs):  # two point masses
        return m.lower.centre if 1 - m.share >= 0.5 else m.upper.centre
    span = [c.centre + k * c.sigma for _, c in configs for k in (-9, 9)]
    a, b = max(min(span), lo), min(max(span), hi)
    return float(brentq(lambda x: m.cdf(x) - 0.5, a, b, xtol=1e-12))


def marginals(card: Card, spec: VariationSpec) -> tuple[Marginal, ...]:
    """Every varied parameter's distribution over instances (see the module docstring),
    in the spec's order."""
    share = spec.mode.share if spec.mode is not None else 0.0
    out = []
    for name in spec.parameters:
        entries = [v for v in spec.variations if v.parameter == name]
        dist = entries[0].distribution
        lo, hi = _offset_range(card, name, dist)
        centre = sum(v.shift for v in entries)
        sigma = math.sqrt(sum(v.sigma ** 2 for v in entries))
        step = sum(v.mode_step for v in entries)
        sigma_up = math.sqrt(sum((v.sigma * v.mode_scale) ** 2 for v in entries))
        m = Marginal(name, dist, card[name], _configuration(centre, sigma, lo, hi),
                     _configuration(centre + step, sigma_up, lo, hi), share, 0.0,
                     _bounds(card, name))
        out.append(Marginal(**{**m.__dict__, "median": _median(m, lo, hi)}))
    return tuple(out)


def nominal_card(card: Card, spec: VariationSpec) -> Card:
    """``card`` with every carrier at the median of its distribution over instances: the
    calibrated median device (the fitted centres folded into the nominal)."""
    values = {m.parameter: m.nominal for m in marginals(card, spec)}
    if "x0" in values or "l0" in values:  # a pristine gap stays within its layer
        values["x0"] = min(values.get("x0", card["x0"]), values.get("l0", card["l0"]))
    try:
        return card.replace(**values)
    except InputError as exc:
        raise InputError(f"the spec's medians do not make a valid card: {exc}") from None


#: The corners' metrics: (section stem, loop-metric column, how it is compared: ln of a
#: resistance, |V| of a switching voltage).
CORNER_METRICS = (("rlrs", "r_lrs_ohm", "ln"), ("rhrs", "r_hrs_ohm", "ln"),
                  ("vset", "v_set_V", "abs"))
#: The metrics the median device matches, and the Monte Carlo devices that measure them.
MEDIAN_METRICS = (("r_lrs_ohm", "ln"), ("r_hrs_ohm", "ln"), ("v_set_V", "abs"),
                  ("v_reset_V", "abs"))
MEDIAN_DEVICES = 1000
#: The corners' quantiles, Φ(±CORNER_SIGMA) of each metric over the instances.
CORNER_SIGMA = 3.0
#: Devices of the instance sample whose quantiles the corners reach.
CORNER_DEVICES = 4000
#: The design-point search: iterations, gradient step (σ), tolerance on the metric (ln R,
#: or V), and the largest distance from the median it may go (σ).
DESIGN_ROUNDS = 8
DESIGN_STEP = 0.2
DESIGN_TOLERANCE = 0.005
MAX_CORNER_Z = 6.0


def steady_metrics(cards: Sequence[Card], protocol: DCLoop) -> pd.DataFrame:
    """The second loop of ``protocol`` (a cycled device's) of each card, Python engine:
    one row per card."""
    res = simulate_with("python", protocol.circuit, protocol.stimulus(2), cards=list(cards),
                        circuit_params=protocol.circuit_params, record=False)
    rows = loop_metrics(res)
    return rows[rows["cycle"] == rows["cycle"].max()].set_index("device").sort_index()


def _measure(rows: pd.DataFrame, column: str, how: str) -> np.ndarray:
    x = rows[column].to_numpy(float)
    return np.log(x) if how == "ln" else np.abs(x)


def instance_sample(card: Card, spec: VariationSpec, n: int, seed: int) -> CardBatch:
    """``n`` devices drawn as the ``mc`` section of the library draws them: one
    configuration per device (upper with the spec's share), each carrier from its
    normal truncated to its range (the exact inverse CDF where SPICE uses Tukey's)."""
    rng = np.random.default_rng(seed)
    margs = marginals(card, spec)
    share = margs[0].share if margs else 0.0
    upper = rng.uniform(size=n) < share
    columns = {}
    for m in margs:
        u = rng.uniform(size=n)
        offsets = np.empty(n)
        for flag, c in ((False, m.lower), (True, m.upper)):
            sel = upper == flag
            p = c.p_lower + u[sel] * (c.p_upper - c.p_lower)
            offsets[sel] = c.centre + c.sigma * norm.ppf(np.clip(p, 1e-16, 1 - 1e-16))
        columns[m.parameter] = m.value(offsets)
    batch = CardBatch.of(nominal_card(card, spec), n)
    return batch.with_columns(**columns)


def _at(margs: Sequence[Marginal], nominal: Card, z: np.ndarray) -> Card:
    """The nominal card with each carrier at its quantile Φ(z_p)."""
    return nominal.replace(**{m.parameter: float(m.value(m.quantile(float(norm.cdf(zk)))))
                              for m, zk in zip(margs, z, strict=True)})


def _linearised(margs: Sequence[Marginal], nominal: Card, protocol: DCLoop, z: np.ndarray,
                metrics: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The ``metrics`` (measured as :func:`_measure`) of the device at ``z`` and their
    forward differences over :data:`DESIGN_STEP` in each carrier (metrics x carriers),
    or None if a probe did not complete its loop."""
    eye = np.eye(len(margs))
    rows = steady_metrics([_at(margs, nominal, z)]
                          + [_at(margs, nominal, z + DESIGN_STEP * eye[k])
                             for k in range(len(margs))], protocol)
    if len(rows) != len(margs) + 1:
        return None
    x = np.column_stack([_measure(rows, column, how) for column, how in metrics])
    return x[0], ((x[1:] - x[0]) / DESIGN_STEP).T


def _design_point(margs: Sequence[Marginal], nominal: Card, protocol: DCLoop,
                  column: str, how: str, target: float, z: np.ndarray) -> np.ndarray:
    """The most probable carriers (in standard normal units) at which the metric reaches
    ``target``: Hasofer–Lind–Rackwitz–Fiessler iterations from ``z`` (the gradient by
    forward differences of :data:`DESIGN_STEP`), a step that misses the target by more
    than the last point halved back toward it; the point nearest the target found."""
    best: tuple[float, np.ndarray] | None = None
    step_from = None
    for _ in range(DESIGN_ROUNDS):
        probed = _linearised(margs, nominal, protocol, z, [(column, how)])
        if probed is None:
            break
        g, grad = probed[0][0] - target, probed[1][0]
        if best is not None and abs(g) >= best[0] and step_from is not None:
            z = (step_from + z) / 2  # overshot: back toward the better point
            step_from = None
            continue
        if best is None or abs(g) < best[0]:
            best = (abs(g), z)
        if abs(g) <= DESIGN_TOLERANCE or not np.any(grad):
            break
        step_from = z
        z = (grad @ z - g) / (grad @ grad) * grad
        z = z * min(1.0, MAX_CORNER_Z / max(float(np.linalg.norm(z)), 1e-300))
    return best[1] if best is not None else z


def corners(card: Card, spec: VariationSpec, protocol: DCLoop,
            sample: pd.DataFrame | None = None
            ) -> tuple[tuple[str, str, dict[str, float]], ...]:
    """The ±:data:`CORNER_SIGMA` corners of R_LRS, R_HRS and |V_set|: (section, comment,
    carrier values) each.

    A corner is the most probable device (its carriers in standard normal units, each
    at its quantile Φ(z_p) of its distribution) whose metric is the Φ(±3) quantile of
    the metric over the instances (:func:`instance_sample`, :data:`CORNER_DEVICES`
    devices, or ``sample``: rows of :func:`steady_metrics`): the design point of
    first-order reliability, found from the linearised point (backward propagation of
    variance) by :func:`_design_point`.  Where a metric's tail comes from carriers acting
    together (TUD: a low R_LRS from a low generation barrier behind a small contact,
    which overshoots the SET), the linearised point alone misses it."""
    margs = marginals(card, spec)
    nominal = nominal_card(card, spec)
    if sample is None:
        sample = steady_metrics(instance_sample(card, spec, CORNER_DEVICES, 1).cards(),
                                protocol)
    base = steady_metrics([nominal] + [_at(margs, nominal, np.eye(len(margs))[k])
                                       for k in range(len(margs))], protocol)
    if len(base) != len(margs) + 1:
        raise InputError("the spec's +1σ probes did not all complete a loop: no corners")
    out = []
    for label, column, how in CORNER_METRICS:
        x = _measure(base, column, how)
        lever = x[1:] - x[0]
        direction = lever / max(float(np.linalg.norm(lever)), 1e-300)
        values = _measure(sample, column, how)
        values = values[np.isfinite(values)]
        for sign, end in ((1.0, "hi"), (-1.0, "lo")):
            target = float(np.quantile(values, norm.cdf(sign * CORNER_SIGMA)))
            z = _design_point(margs, nominal, protocol, column, how, target,
                              sign * CORNER_SIGMA * direction)
            corner = _at(margs, nominal, z)
            moved = ", ".join(f"{m.parameter} {zk:+.2f}σ" for m, zk in
                              zip(margs, z, strict=True))
            out.append((f"{label}_{end}", f"{column} at its {norm.cdf(sign * CORNER_SIGMA):.2%} "
                        f"quantile: {moved}", {m.parameter: corner[m.parameter]
                                               for m in margs}))
    return tuple(out)


def median_device(card: Card, spec: VariationSpec, protocol: DCLoop,
                  devices: int = MEDIAN_DEVICES, seed: int = 1) -> Card:
    """The calibrated median device: the most probable device (its carriers in standard
    normal units, each at its quantile Φ(z_p)) whose second loop of ``protocol`` has
    the Monte Carlo's median R_LRS, R_HRS, V_set and V_reset (``devices`` x 2 cycles
    after a burn-in cycle, the Python engine), by minimum-norm Gauss-Newton steps from
    the per-carrier medians (:func:`nominal_card`).

    The per-carrier medians alone miss where carriers act together: on the TUD spec the
    upper configuration's contact raises V_reset, and R_HRS and V_reset of that card
    were +9 % and -13 % from the Monte Carlo's."""
    from .mc import MonteCarlo, run_devices

    margs = marginals(card, spec)
    mc = MonteCarlo(card=card, spec=spec, devices=devices, cycles=2, seed=seed,
                    protocol=protocol, burn_in=1)
    frame = run_devices(mc, range(devices))
    target = np.array([float(np.nanmedian(_measure(frame[frame["converged"]], column, how)))
                       for column, how in MEDIAN_METRICS])
    nominal = nominal_card(card, spec)
    z = np.zeros(len(margs))
    for _ in range(DESIGN_ROUNDS):
        probed = _linearised(margs, nominal, protocol, z, MEDIAN_METRICS)
        if probed is None:
            raise InputError("a device near the median did not complete its loop: no "
                             "median device")
        miss, jac = probed[0] - target, probed[1]
        if np.all(np.abs(miss) <= DESIGN_TOLERANCE):
            break
        z = z - np.linalg.lstsq(jac, miss, rcond=None)[0]
        z = z * min(1.0, CORNER_SIGMA / max(float(np.linalg.norm(z)), 1e-300))
    return _at(margs, nominal, z)


def render_library(card: Card, spec: VariationSpec, protocol: DCLoop, name: str,
                   kind: str, median: Card | None = None) -> str:
    """The ngspice statistical library of ``spec`` (:mod:`rram.spice.statlib`) for the
    model exported from ``card`` under ``name``: typical (``median``, by default
    :func:`median_device`), Monte Carlo and corner sections."""
    from . import __version__
    from .spice.statlib import render_statlib

    margs = marginals(card, spec)
    fixed = [m.parameter for m in margs if card.parameter(m.parameter).kind != "instance"]
    if dialect(kind).compiled and fixed:
        instance = sorted(p.name for p in card.model.parameters if p.kind == "instance")
        raise InputError(f"{', '.join(fixed)}: not instance parameters of the Verilog-A "
                         "module, so a cell cannot draw its own; the spec's carriers must "
                         f"be among {', '.join(instance)} (or use --format spice)")
    median = median_device(card, spec, protocol) if median is None else median
    header = [f"statistical library of {name} (rram {__version__}); {kind} model",
              f"card {card.digest[:12]}, typical (the median device) {median.digest[:12]}, "
              f"spec {spec.digest[:12]}",
              "One draw per instance: each carrier's distribution over devices and cycles "
              "(D2D and C2C combined,",
              "the configurations as a mixture). A cycle-to-cycle redraw inside one "
              "transient, and a device's",
              "drift over cycles, are not expressed: run one transient per cycle "
              "(mc_source) for those.",
              f"protocol of the median device and the corners: {protocol.as_meta()}"]
    return render_statlib(name, kind, margs, {m.parameter: median[m.parameter]
                                               for m in margs},
                          corners(card, spec, protocol), header)


__all__ = ["CORNER_DEVICES", "CORNER_METRICS", "CORNER_SIGMA", "MEDIAN_DEVICES",
           "MEDIAN_METRICS", "Configuration", "Marginal", "corners", "instance_sample",
           "marginals", "median_device", "nominal_card", "render_library", "steady_metrics"]
