"""The staged fit's objective: residual vectors of many trial cards at once.

The fit is generic over the kind of data (:class:`Measurement`): a DC loop
(:class:`LoopMeasurement`, below) or a pulse record (:mod:`.pulses`) gives the residual
rows of a batch of cards, the points a stage can name and the figures the
identification compares.

The residual of a card on a DC loop is log₁₀|I_model| − log₁₀|I_data| on the stage's points, plus,
when the stage weighs them, the V_set, V_reset and SET-completion (90 % of the
compliance: the SET's abruptness) mismatches in units of ``recipe.voltage_scale``, a
penalty on a RESET that opens the gap beyond 0.65·l0 (:func:`gap_penalty`) and, when the
recipe bounds it, one on a CF wider than a fraction of ``wcf`` (:func:`width_penalty`).
The Jacobian
is a forward difference computed as one batch of cards in the vectorised engine (all
columns in one call).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import lmfit
import numpy as np

from ..card import Card
from ..engine.run import Options
from ..errors import CardError, InputError
from .loop import (
    MeasuredLoop,
    log_residual,
    set_completion_voltage,
    simulate_loops,
    switching_voltages,
    trace_metrics,
)
from .recipe import Recipe, Stage

#: Residual of a point the model could not simulate (decades).
FAILED_RESIDUAL = 3.0
#: Relative forward-difference step of the Jacobian (of the fitted, maybe log, value).
JAC_STEP = 1e-3

def point_sets(loop: MeasuredLoop) -> dict[str, np.ndarray]:
    """Boolean masks of the loop's points: ``hrs`` (SET sweep before V_set, RESET sweep
    on its way back), ``lrs`` (SET sweep on its way back below 0.9·I_cc, RESET sweep
    before V_reset), ``reset`` (RESET sweep between V_reset and its peak voltage),
    ``switching`` (lrs and reset) and ``all``; points at rest (|V| < V_MIN) excluded."""
    n_set = len(loop.set.time)
    v, i = loop.voltage, np.abs(loop.current)
    idx = np.arange(len(v))
    top_set = int(np.argmax(np.abs(v[:n_set])))
    top_reset = n_set + int(np.argmax(np.abs(v[n_set:])))
    v_set, v_reset = switching_voltages(loop, loop.current)
    if math.isnan(v_set) or math.isnan(v_reset):
        raise InputError(f"cycle {loop.cycle}: the data show no SET (|I| reaching half the "
                         "compliance) or no RESET (a 10% fall of |I|): not a switching loop")
    k_set = int(np.argmax((idx < top_set) & (np.abs(v) >= abs(v_set))))
    k_reset = n_set + int(np.argmax(np.abs(v[n_set:]) >= abs(v_reset)))
    rest = loop.mask()
    hrs = ((idx < k_set) | (idx > top_reset)) & rest
    lrs = (((idx > top_set) & (idx < n_set) & (i < 0.9 * loop.icc_set))
           | ((idx >= n_set) & (idx < k_reset))) & rest
    reset = (idx >= k_reset) & (idx <= top_reset) & rest
    return {"all": rest, "hrs": hrs, "lrs": lrs, "reset": reset, "switching": lrs | reset}


#: The RESET must stop well inside the layer: a gap beyond this fraction of ``l0`` at
#: the loop's end is penalised.  An HRS at the layer's edge is the same in every cycle
#: (no barrier moves it), which the measured spread rules out; and a card is used at
#: RESETs deeper than the one it was fitted to, whose gaps need room below 0.8·l0 to
#: follow the voltage (the TUD loop ends at 2.5 V: fitted with 0.8 here, its 3 V RESET
#: opened the gap to 0.88·l0 and R_HRS flattened; with 0.65, 0.71·l0).
MAX_GAP_FRACTION = 0.65


def excess_penalty(length_nm: float, scale_m: float, fraction: float) -> float:
    """A residual row on a length beyond ``fraction`` of ``scale_m``: 0 within it, then
    one unit per 2 % of the scale (like a V_set mismatch of 10 mV); a failed simulation
    (NaN) costs as much as a failed point."""
    if not np.isfinite(length_nm):
        return FAILED_RESIDUAL
    return max(0.0, length_nm * 1e-9 / scale_m - fraction) / 0.02


def gap_penalty(gap_nm: float, l0: float) -> float:
    """:func:`excess_penalty` of the gap the RESET leaves beyond MAX_GAP_FRACTION of l0."""
    return excess_penalty(gap_nm, l0, MAX_GAP_FRACTION)


def width_penalty(width_nm: float, wcf: float, fraction: float) -> float:
    """:func:`excess_penalty` of the loop's widest CF beyond a recipe's
    ``max_width_fraction`` of ``wcf``.  One compliance fixes R_LRS, not how it splits into
    the CF's resistivity and its width (``rho0``/w² is what the loop sees); the
    distributions do.  Unbounded, the TUD fit puts the CF at 25.8 of 30 nm, where no
    heating moves it, and the variation fit on that card fails 10 of its 14 checks
    (docs/calibration.md has the scan of the bound)."""
    return excess_penalty(width_nm, wcf, fraction)


#: Between neighbouring samples, a change of log₁₀|I| beyond this (decades) is a
#: switching event: the abrupt SET's sample, where one voltage step carries the current
#: from the HRS to the compliance.
SWITCH_JUMP_DEC = 0.5


def switching_samples(current: np.ndarray) -> np.ndarray:
    """The samples of a measured trace ``current`` (A) at a switching event: both sides of
    a jump beyond :data:`SWITCH_JUMP_DEC` and one sample on either side.  Their residual
    is a step function of the parameters (which sample the event falls on), not a smooth
    one: a model whose SET lands one 2 mV step after the data's misses by a decade there,
    and the fit trades every parameter to move the event by that step (issue 38: a
    synthetic 1T1R loop fitted to the noise's RMS with ``j0`` 29 % and ``alphaw`` 77 %
    off, reported at errors of 0.04 % and 2.1 %).  The switching voltages have their own
    rows."""
    magnitude = np.abs(np.asarray(current, float))
    log_i = np.log10(np.where(magnitude > 0, magnitude, np.nan))  # 0 A at rest: no event
    with np.errstate(invalid="ignore"):
        step = np.abs(np.diff(log_i)) > SWITCH_JUMP_DEC
    # a jump between samples i and i+1 marks samples i-1 .. i+2 (padded by one each side)
    marked = np.zeros(len(log_i) + 2, bool)
    for shift in range(4):
        marked[shift:shift + len(step)] |= step
    return marked[1:-1]


def loop_rms(loop: MeasuredLoop, current: np.ndarray) -> float:
    r = log_residual(current, loop.current)[loop.mask()]
    return float(np.sqrt(np.mean(np.where(np.isfinite(r), r, FAILED_RESIDUAL) ** 2)))


class Measurement(Protocol):
    """What the staged fit needs of a kind of data (:mod:`.stages`, :mod:`.refit`)."""

    #: the point sets a stage may name (``Stage.points``)
    point_sets: tuple[str, ...]

    def point_mask(self, points: str) -> np.ndarray:
        """Which of the data's points the point set ``points`` holds (booleans)."""

    def rows(self, cards: Sequence[Card | None], mask: np.ndarray, stage: Stage,
             recipe: Recipe, options: Options | None) -> np.ndarray:
        """The residual rows of ``cards`` (one per card, finite): the points of
        ``mask`` first, then any extra rows the stage weighs; a ``None`` card (no
        model) gets :data:`FAILED_RESIDUAL` everywhere."""

    def figures(self, card: Card, options: Options | None) -> np.ndarray:
        """The RMS error over all points (decades), then the switching voltages (V)
        the identification keeps unchanged when it fixes a parameter."""

    def switching_points(self) -> np.ndarray:
        """Which of the data's points sit at a switching event (booleans): a recipe
        with ``exclude_switching_samples`` leaves them out of every residual."""


@dataclass(frozen=True)
class LoopMeasurement:
    """A measured DC loop as a :class:`Measurement`."""

    loop: MeasuredLoop
    point_sets: tuple[str, ...] = ("all", "lrs", "hrs", "reset", "switching")

    def point_mask(self, points: str) -> np.ndarray:
        return point_sets(self.loop)[points]

    def rows(self, cards: Sequence[Card | None], mask: np.ndarray, stage: Stage,
             recipe: Recipe, options: Options | None) -> np.ndarray:
        loop = self.loop
        good = [c for c in cards if c is not None]
        sim = simulate_loops(loop, good, options) if good else None
        v_data = (*switching_voltages(loop, loop.current),
                  set_completion_voltage(loop, loop.current))
        rows, j = [], 0
        n_pts = int(mask.sum())
        bound = recipe.max_width_fraction if stage.voltage_weight > 0 else None
        extra_rows = 4 + (bound is not None) if stage.voltage_weight > 0 else 0
        for c in cards:
            if c is None:
                rows.append(np.full(n_pts + extra_rows, FAILED_RESIDUAL))
                continue
            cur, v_set, gap_end, width = sim.current[j], sim.v_set[j], sim.gap[j][-1], sim.width[j]
            j += 1
            r = log_residual(cur, loop.current)[mask]
            r = np.where(np.isfinite(r), r, FAILED_RESIDUAL)
            if stage.voltage_weight > 0:
                vm = (v_set, switching_voltages(loop, cur)[1],
                      set_completion_voltage(loop, cur)) \
                    if np.all(np.isfinite(cur)) else (np.nan, np.nan, np.nan)
                dv = [0.0 if not np.isfinite(d)  # the data do not show it
                      else (m - d) / recipe.voltage_scale if np.isfinite(m)
                      else 1.0 / recipe.voltage_scale
                      for m, d in zip(vm, v_data, strict=True)]
                r = np.r_[r, stage.voltage_weight * np.array(dv),
                          gap_penalty(gap_end, c["l0"])]
                if bound is not None:
                    r = np.r_[r, width_penalty(float(np.max(width)), c["wcf"], bound)]
            rows.append(r)
        return np.array(rows)

    def figures(self, card: Card, options: Options | None) -> np.ndarray:
        cur = simulate_loops(self.loop, [card], options).current[0]
        m = trace_metrics(self.loop, cur)
        return np.array([loop_rms(self.loop, cur), m["v_set_V"], m["v_reset_V"]])

    def switching_points(self) -> np.ndarray:
        return switching_samples(self.loop.current)


def as_measurement(data: MeasuredLoop | Measurement) -> Measurement:
    """``data`` as a :class:`Measurement` (a measured loop is wrapped)."""
    return LoopMeasurement(data) if isinstance(data, MeasuredLoop) else data


class Objective:
    """Residual vectors of many trial cards at once."""

    def __init__(self, data: MeasuredLoop | Measurement, recipe: Recipe, stage: Stage,
                 card: Card, options: Options | None = None, jac_step: float = JAC_STEP):
        self.measurement = as_measurement(data)
        self.recipe, self.stage, self.card = recipe, stage, card
        self.options = options
        self.jac_step = jac_step
        parts = stage.points.split("+")
        if any(p not in self.measurement.point_sets for p in parts):
            raise InputError(f"stage {stage.name}: points {stage.points!r} are not a point "
                             "set of this kind of data (valid: "
                             f"{', '.join(self.measurement.point_sets)})")
        self.mask = np.logical_or.reduce([self.measurement.point_mask(p) for p in parts])
        if recipe.exclude_switching_samples:
            self.mask = self.mask & ~self.measurement.switching_points()
        self.names = stage.parameters
        self.nfev = 0

    def key(self, name: str) -> str:
        return f"log10_{name}" if name in self.recipe.log_parameters else name

    def card_of(self, x: np.ndarray) -> Card | None:
        values = {n: (10.0 ** v if n in self.recipe.log_parameters else float(v))
                  for n, v in zip(self.names, x, strict=True)}
        if "x0" in values or "l0" in values:  # project onto x0 <= l0 (the gap's range)
            values["x0"] = min(values.get("x0", self.card["x0"]),
                               values.get("l0", self.card["l0"]))
        try:
            return self.card.replace(**values)
        except CardError:  # a card constraint (w0 <= wcf, ...): this trial has no model
            return None

    def residuals(self, xs: list[np.ndarray]) -> np.ndarray:
        cards = [self.card_of(x) for x in xs]
        self.nfev += len(xs)
        return self.measurement.rows(cards, self.mask, self.stage, self.recipe,
                                     self.options)

    def vector(self, params: lmfit.Parameters) -> np.ndarray:
        x = np.array([params[self.key(n)].value for n in self.names])
        return x

    def residual(self, params: lmfit.Parameters) -> np.ndarray:
        return self.residuals([self.vector(params)])[0]

    def jacobian(self, params: lmfit.Parameters) -> np.ndarray:
        x = self.vector(params)
        trials = [x]
        steps = []
        for k, n in enumerate(self.names):
            p = params[self.key(n)]
            h = self.jac_step * max(abs(x[k]), 1e-3 if self.key(n) != n else 1e-30)
            if x[k] + h > p.max:  # step inwards at an upper bound
                h = -h
            xk = x.copy()
            xk[k] += h
            trials.append(xk)
            steps.append(h)
        r = self.residuals(trials)
        return ((r[1:] - r[0]) / np.array(steps)[:, None]).T


def lmfit_parameters(obj: Objective, recipe: Recipe) -> lmfit.Parameters:
    params = lmfit.Parameters()
    for n in obj.names:
        lo, hi = recipe.bounds_of(n)
        v = obj.card[n]
        if n in recipe.log_parameters:
            lo, hi = math.log10(max(lo, 1e-300)), math.log10(hi)
            v = math.log10(v)
        params.add(obj.key(n), value=min(max(v, lo), hi), min=lo, max=hi)
    return params
