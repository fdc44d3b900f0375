"""Fit a card to a measured DC loop with lmfit, stage by stage (see :mod:`.recipe`).

The residual of a card is log₁₀|I_model| − log₁₀|I_data| on the stage's points, plus,
when the stage weighs them, the V_set, V_reset and SET-completion (90 % of the
compliance: the SET's abruptness) mismatches in units of ``recipe.voltage_scale`` and a
penalty on a RESET that opens the gap beyond 0.8·l0
(:func:`gap_penalty`).  The Jacobian is a forward difference computed as one batch
of cards in the vectorised engine (all columns in one call).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import lmfit
import numpy as np

from ..engine.run import Options
from ..errors import CardError, InputError
from ..params import Card
from .identify import (
    MAX_CORRELATION,
    MAX_RELATIVE_ERROR,
    covariance,
    in_card_units,
    named_covariance,
    relative_errors,
    worst_unidentified,
)
from .loop import (
    MeasuredLoop,
    log_residual,
    loop_metrics,
    set_completion_voltage,
    simulate_loops,
    steady_card,
    switching_voltages,
)
from .recipe import Recipe, Stage, default_recipe, open_recipe

#: Residual of a point the model could not simulate (decades).
FAILED_RESIDUAL = 3.0
#: Relative forward-difference step of the Jacobian (of the fitted, maybe log, value).
JAC_STEP = 1e-3
#: The loop fit's descents: the staged fit's difference step of each (the identification
#: and the polish at tolerances /10 use JAC_STEP in both).  A stage is a budgeted local
#: search on finite differences that carry the integrator's noise (~rtol), so where it
#: ends depends on its path: for every 10th measured cycle fitted on its own, one
#: descent's worst RMS moved 0.265 → 0.299 dec (and a V_reset was lost) with the
#: integrator's step control, and 0.257 → 0.507 with the step 1e-3 → 3e-3.  Two descents
#: keep the better end of such pairs (see DESCENT_MARGIN).
DESCENT_STEPS = (JAC_STEP, 3e-3)
#: A later descent replaces the first only if its RMS is lower by more than this (dec):
#: closer ends differ by where a descent stops, not by how well it fits, and the first
#: one's card keeps what is derived from it (the variation fit) where it was.
DESCENT_MARGIN = 0.01
#: A loop fit whose RMS log-current error exceeds this (decades) is a failure: the
#: model does not describe the data (wrong units, compliance, polarity or recipe).
MAX_RMS_DEC = 1.0


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


@dataclass
class StageReport:
    name: str
    parameters: dict[str, dict]  # name -> value, stderr, log
    correlations: dict[str, float]
    rms_dec: float
    nfev: int
    seconds: float


@dataclass
class LoopFit:
    card: Card
    stages: list[StageReport]
    rms_dec: float
    v_set: tuple[float, float]  # (data, model)
    v_reset: tuple[float, float]
    r_lrs: tuple[float, float]
    r_hrs: tuple[float, float]
    model_current: np.ndarray
    seconds: float
    extra: dict = field(default_factory=dict)
    #: fitted and fixed parameters after the identifiability check (None: not run)
    identification: dict | None = None
    #: every descent's start (index among the screened ones, 0 without ``starts``), the
    #: staged fit's difference step, its final RMS (dec) and whether it was kept
    descents: list[dict] = field(default_factory=list)

    def failed_reason(self) -> str | None:
        """Why this fit must not be used (its RMS error beyond :data:`MAX_RMS_DEC`, or
        not finite), else ``None``."""
        if math.isfinite(self.rms_dec) and self.rms_dec <= MAX_RMS_DEC:
            return None
        return (f"the fit failed: RMS log10 error {self.rms_dec:.3g} decades exceeds "
                f"{MAX_RMS_DEC:g} (the model does not describe the data: check the "
                "current and voltage units, the compliance, the SET polarity and the "
                "recipe)")

    def figures(self) -> dict:
        return {"rms_log10_decades": self.rms_dec, "seconds": self.seconds,
                "v_set_V": dict(zip(("data", "model"), self.v_set, strict=True)),
                "v_reset_V": dict(zip(("data", "model"), self.v_reset, strict=True)),
                "r_lrs_ohm": dict(zip(("data", "model"), self.r_lrs, strict=True)),
                "r_hrs_ohm": dict(zip(("data", "model"), self.r_hrs, strict=True)),
                "descents": self.descents}


#: The RESET must stop inside the layer: a gap beyond this fraction of ``l0`` at the
#: loop's end is penalised (the HRS is then the gap at its ceiling, which no
#: barrier moves: an HRS that cannot vary from cycle to cycle).
MAX_GAP_FRACTION = 0.8


def gap_penalty(gap_nm: float, l0: float) -> float:
    """0 while the gap the RESET leaves is within MAX_GAP_FRACTION of l0, then one unit
    per 2 % of l0 beyond (a residual row, like a V_set mismatch of 10 mV)."""
    if not np.isfinite(gap_nm):
        return FAILED_RESIDUAL
    return max(0.0, gap_nm * 1e-9 / l0 - MAX_GAP_FRACTION) / 0.02


def loop_rms(loop: MeasuredLoop, current: np.ndarray) -> float:
    r = log_residual(current, loop.current)[loop.mask()]
    return float(np.sqrt(np.mean(np.where(np.isfinite(r), r, FAILED_RESIDUAL) ** 2)))


class _Objective:
    """Residual vectors of many trial cards at once."""

    def __init__(self, loop: MeasuredLoop, recipe: Recipe, stage: Stage, card: Card,
                 options: Options | None = None, jac_step: float = JAC_STEP):
        self.loop, self.recipe, self.stage, self.card = loop, recipe, stage, card
        self.options = options
        self.jac_step = jac_step
        self.mask = point_sets(loop)[stage.points]
        self.v_data = (*switching_voltages(loop, loop.current),
                       set_completion_voltage(loop, loop.current))
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
        good = [c for c in cards if c is not None]
        sim = simulate_loops(self.loop, good, self.options) if good else None
        self.nfev += len(xs)
        rows, j = [], 0
        n_pts = int(self.mask.sum())
        for c in cards:
            if c is None:
                rows.append(np.full(n_pts + 4 * (self.stage.voltage_weight > 0),
                                    FAILED_RESIDUAL))
                continue
            cur, v_set, gap_end = sim.current[j], sim.v_set[j], sim.gap[j][-1]
            j += 1
            r = log_residual(cur, self.loop.current)[self.mask]
            r = np.where(np.isfinite(r), r, FAILED_RESIDUAL)
            if self.stage.voltage_weight > 0:
                vm = (v_set, switching_voltages(self.loop, cur)[1],
                      set_completion_voltage(self.loop, cur)) \
                    if np.all(np.isfinite(cur)) else (np.nan, np.nan, np.nan)
                dv = [0.0 if not np.isfinite(d)  # the data do not show it
                      else (m - d) / self.recipe.voltage_scale if np.isfinite(m)
                      else 1.0 / self.recipe.voltage_scale
                      for m, d in zip(vm, self.v_data, strict=True)]
                r = np.r_[r, self.stage.voltage_weight * np.array(dv),
                          gap_penalty(gap_end, c["l0"])]
            rows.append(r)
        return np.array(rows)

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


def _params(obj: _Objective, recipe: Recipe) -> lmfit.Parameters:
    params = lmfit.Parameters()
    for n in obj.names:
        lo, hi = recipe.bounds_of(n)
        v = obj.card[n]
        if n in recipe.log_parameters:
            lo, hi = math.log10(max(lo, 1e-300)), math.log10(hi)
            v = math.log10(v)
        params.add(obj.key(n), value=min(max(v, lo), hi), min=lo, max=hi)
    return params


def fit_loop(loop: MeasuredLoop, card: Card, recipe: Recipe | None = None, *,
             progress: bool = True, log: Callable[[str], None] | None = None,
             identify: bool = True, starts: int = 0, keep: int = 2,
             options: Options | None = None, refit: bool = False) -> LoopFit:
    """Fit ``card`` to ``loop`` with ``recipe`` (default :func:`default_recipe`), then
    (``identify``) fix the parameters the loop does not determine
    (:func:`identify_parameters`; ``refit``: at their documented values, the others
    refitted) and polish the identified ones (:func:`polish`).  The staged fit descends
    (with its identification and polish) once per difference step of
    :data:`DESCENT_STEPS`; the first is kept unless another ends lower by
    :data:`DESCENT_MARGIN` (every descent is listed in ``descents``).  With
    ``starts`` > 0 it runs from the ``keep`` best of ``starts`` screened starts
    (:mod:`.multistart`) and keeps the best.
    ``options``: the integrator's (default :class:`rram.engine.run.Options`).

    ``card.polarity`` is set from the data (SET at negative voltage: −1)."""
    recipe = recipe or default_recipe()
    if not loop.steady:
        recipe = open_recipe(recipe)
    t0 = time.perf_counter()
    card = card.replace(**recipe.start, polarity=loop.polarity)
    point_sets(loop)  # fail early on data that do not switch
    if starts > 0:
        from .multistart import best_indices, candidate_cards

        cands = candidate_cards(card, recipe, starts) or [card]  # none may satisfy the card
        scores = _screen(loop, recipe, cands, options)
        picked = best_indices(scores, keep)
        if log:
            log(f"  screened {len(cands)} starts; fitting from {len(picked)} (scores "
                + ", ".join(f"{scores[i]:.3g}" for i in picked) + ")")
    else:
        cands, picked = [card], [0]
    tried = [(i, step) for i in picked for step in DESCENT_STEPS]
    runs = [_descend(loop, cands[i], recipe, progress, log, options, step, identify, refit)
            for i, step in tried]
    rms = [loop_rms(loop, r[3]) for r in runs]
    # per start its first descent, unless another one is better by DESCENT_MARGIN; then
    # the best start
    per = len(DESCENT_STEPS)
    kept = []
    for a in range(0, len(runs), per):
        best = min(range(a, a + per), key=lambda i: rms[i])
        kept.append(best if rms[best] < rms[a] - DESCENT_MARGIN else a)
    win = min(kept, key=lambda i: rms[i])
    card, reports, identification, cur = runs[win]
    descents = [{"start": i, "jac_step": step, "rms_log10_decades": r, "kept": k == win}
                for k, ((i, step), r) in enumerate(zip(tried, rms, strict=True))]
    if log:
        log("  descents (start, difference step: RMS): "
            + ", ".join(f"{d['start']}, {d['jac_step']:g}: {d['rms_log10_decades']:.4f} dec"
                        for d in descents)
            + f"; kept {tried[win][0]}, {tried[win][1]:g}")
    data, model = loop_metrics(loop), loop_metrics(loop, cur)
    pairs = {k: (float(data[k]), float(model[k])) for k in data}
    return LoopFit(card, reports, rms[win], pairs["v_set_V"], pairs["v_reset_V"],
                   pairs["r_lrs_ohm"], pairs["r_hrs_ohm"], cur, time.perf_counter() - t0,
                   identification=identification, descents=descents)


def _descend(loop: MeasuredLoop, card: Card, recipe: Recipe, progress: bool,
             log: Callable[[str], None] | None, options: Options | None, jac_step: float,
             identify: bool, refit: bool
             ) -> tuple[Card, list[StageReport], dict | None, np.ndarray]:
    """One descent from ``card``: the staged fit, then the identification and polish
    (see :func:`fit_loop`).  Returns the card, the stage reports, the identification
    and the loop's simulated current."""
    card, reports = _staged(loop, card, recipe, progress, log, options, jac_step)
    identification = None
    if identify:
        card, identification = identify_parameters(loop, card, recipe, log=log,
                                                   options=options, refit=refit)
    if loop.steady:  # before the polish too: the CF's width keeps ~0.5 % of its start
        card = steady_card(loop, card, options)
    if identify:
        card, identification = polish(loop, card, recipe, identification, options, log)
        if loop.steady:
            card = steady_card(loop, card, options)
    return card, reports, identification, simulate_loops(loop, [card], options).current[0]


def _staged(loop: MeasuredLoop, card: Card, recipe: Recipe, progress: bool,
            log: Callable[[str], None] | None, options: Options | None = None,
            jac_step: float = JAC_STEP) -> tuple[Card, list[StageReport]]:
    """The recipe's stages in order from ``card`` (``jac_step``: the Jacobian's
    relative difference step)."""
    reports = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(recipe.stages), unit="stage", desc=f"fit (step {jac_step:g})")
    for stage in recipe.stages:
        if bar is not None:
            bar.set_postfix_str(stage.name)
        card, report = _run_stage(loop, card, recipe, stage, options, jac_step=jac_step)
        reports.append(report)
        if log:
            log(f"  stage {stage.name} (step {jac_step:g}): RMS {report.rms_dec:.3f} dec, "
                f"{report.nfev} simulations, {report.seconds:.1f} s")
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return card, reports


def _screen(loop: MeasuredLoop, recipe: Recipe, cards: list[Card],
            options: Options | None = None) -> np.ndarray:
    """Residual norm of each candidate card over the whole loop, with the switching
    voltages weighed as in the recipe's last stage (one batched simulation)."""
    from .multistart import fitted_names

    stage = Stage("screen", fitted_names(recipe), "all", recipe.stages[-1].voltage_weight, 1)
    obj = _Objective(loop, recipe, stage, cards[0], options)
    xs = [np.array([math.log10(c[n]) if n in recipe.log_parameters else c[n]
                    for n in stage.parameters]) for c in cards]
    rows = obj.residuals(xs)
    return np.sqrt(np.mean(rows ** 2, axis=1))


def _run_stage(loop: MeasuredLoop, card: Card, recipe: Recipe,
               stage: Stage, options: Options | None = None,
               tolerance: float = 1e-4, jac_step: float = JAC_STEP
               ) -> tuple[Card, StageReport]:
    """One least-squares stage: the fitted card and the stage's report (``tolerance``:
    least squares' ftol and xtol)."""
    ts = time.perf_counter()
    obj = _Objective(loop, recipe, stage, card, options, jac_step)
    mini = lmfit.Minimizer(lambda p, o=obj: o.residual(p), _params(obj, recipe))
    res = mini.least_squares(jac=lambda p, o=obj: o.jacobian(p), x_scale="jac",
                             max_nfev=stage.max_nfev, ftol=tolerance, xtol=tolerance)
    best = obj.card_of(obj.vector(res.params))
    if best is None:  # lmfit's final values are within bounds: a constraint failed
        raise InputError(f"stage {stage.name}: the fitted values violate a card "
                         "constraint")
    card = best
    cur = simulate_loops(loop, [card], options).current[0]
    n_pts = int(obj.mask.sum())  # the point rows come first
    # least_squares' Jacobian at its solution (ours, one batch), else a fresh one
    jac = getattr(res, "jac", None)
    if jac is None or np.shape(jac) != (len(res.residual), len(obj.names)):
        jac = obj.jacobian(res.params)
    errors, correl = named_covariance(np.asarray(jac)[:n_pts], res.residual[:n_pts], obj.names)
    return card, StageReport(
        stage.name,
        {n: {"value": card[n], "stderr": in_card_units(errors[k], n, card, recipe),
             "log10": n in recipe.log_parameters} for k, n in enumerate(obj.names)},
        correl, loop_rms(loop, cur), obj.nfev, time.perf_counter() - ts)


#: A documented value may replace a fitted one only if the loop's RMS error moves by
#: less than this (decades) and V_set and V_reset by less than INDISTINGUISHABLE_V:
#: the data cannot tell the two apart.
INDISTINGUISHABLE_DEC = 0.005
INDISTINGUISHABLE_V = 0.005
#: A parameter with a large relative error whose documented value raises the loop's RMS
#: error by more than this (decades, before any refit) is not a value this device can
#: have: it stays free in the refit instead (a state such as the CF's initial width).
REJECT_DEC = 0.25
#: The refit with the unidentified parameters at their documented values is kept when
#: its RMS error is within this of the fit's (decades): the minimum it finds no longer
#: depends on where along their unidentified directions the fit stopped.
REFIT_TOLERANCE_DEC = 0.02
REFIT_NFEV = 40
#: The identified parameters' minimum is found again (the polish) with the integrator's
#: tolerances this many times tighter and least squares run to POLISH_TOLERANCE.  Their
#: valley is flat: on the TUD loop, rtop, ea and ei move by 10-20 % while the RMS error
#: moves by 1e-4 dec, so the stages' loose stop (1e-4) ends anywhere along it, wherever
#: the start and the integration's O(rtol) noise lead.  At rtol/10 the RMS along the
#: valley is smooth to ~1e-6 dec and every path ends at one point (to ~1 %).
POLISH_TIGHTENING = 10.0
POLISH_TOLERANCE = 1e-10
POLISH_NFEV = 150


def identify_parameters(loop: MeasuredLoop, card: Card, recipe: Recipe, *,
                        log: Callable[[str], None] | None = None,
                        options: Options | None = None,
                        refit: bool = False) -> tuple[Card, dict]:
    """Fix the parameters the loop does not identify (see :mod:`.identify`), and report
    the others with their errors.

    First (:func:`_identify`) the unidentified parameters are found, worst first, and
    each is held at its fitted value, or at its documented one where the loop cannot
    tell the two apart.  That keeps the best fit, but the fit's values along the
    unidentified directions are wherever its path stopped, and the identified values
    that correlate with them move with the start and the integrator's tolerances.  With
    ``refit`` they are instead set
    to their documented values (the default card's, within the recipe's bounds), except
    those with a large error the data reject (:data:`REJECT_DEC`; a correlated one's
    partner makes up for it), and the other parameters are refitted
    from there (one stage, :data:`REFIT_NFEV`): different starts or integration
    tolerances then end at the same minimum.  The refit is kept if its RMS error is
    within :data:`REFIT_TOLERANCE_DEC` of the fit's, and identified again (parameters
    still unidentified are then held at their refitted values); otherwise every
    unidentified parameter is held at its fitted value.

    Returns the card and ``{"fitted": {name: {value, stderr, relative_error}},
    "fixed": {name: {value, fitted_value, reason}}, "correlations": {...}, "rules":
    {...}, "refit": {...}}``, ``stderr`` in the card's units, correlations beyond 0.5
    among the fitted parameters."""
    from ..card import default_card

    documented = default_card()
    free = list(dict.fromkeys(n for st in recipe.stages for n in st.parameters))
    held, first = _identify(loop, card, recipe, free, documented, options, log)
    rms_fit = first.pop("rms_dec")
    if not refit:
        return held, _public(first)
    # a correlated parameter's partner makes up for it in the refit, so its change
    # before the refit says nothing
    to_documented = {n: f for n, f in first["fixed"].items()
                     if f["documented_rms_change"] is not None
                     and (f["correlated"] or f["documented_rms_change"] < REJECT_DEC)}
    summary = {"rms_before_dec": rms_fit, "documented": sorted(to_documented)}
    trial = None
    if to_documented:
        with contextlib.suppress(CardError):
            trial = held.replace(**{n: f["documented_value"] for n, f in to_documented.items()})
    if trial is None:
        return held, _public({**first, "refit": {**summary, "kept": False}})
    names = tuple(n for n in free if n not in to_documented)
    vw = recipe.stages[-1].voltage_weight
    refitted, report = _run_stage(loop, trial, recipe,
                                  Stage("refit", names, "all", vw, REFIT_NFEV), options)
    summary.update(rms_after_dec=report.rms_dec, nfev=report.nfev,
                   seconds=round(report.seconds, 1))
    if log:
        log(f"  refit with {', '.join(sorted(to_documented))} at documented values: RMS "
            f"{rms_fit:.4f} -> {report.rms_dec:.4f} dec")
    if report.rms_dec > rms_fit + REFIT_TOLERANCE_DEC:
        return held, _public({**first, "refit": {**summary, "kept": False}})
    final, second = _identify(loop, refitted, recipe, list(names), None, options, log)
    second.pop("rms_dec")
    fixed = {n: {"value": f["documented_value"], "fitted_value": f["fitted_value"],
                 "reason": f"{f['unidentified']}; set to its documented value and the "
                           "others refitted"}
             for n, f in to_documented.items()}
    fixed.update(second["fixed"])
    return final, _public({**second, "fixed": fixed, "refit": {**summary, "kept": True}})


def polish(loop: MeasuredLoop, card: Card, recipe: Recipe, ident: dict,
           options: Options | None = None,
           log: Callable[[str], None] | None = None) -> tuple[Card, dict]:
    """The identified parameters (``ident``: :func:`identify_parameters`' report) at the
    minimum of their valley at tight tolerances (:data:`POLISH_TIGHTENING`,
    :data:`POLISH_TOLERANCE`), and their errors there; one that the data no longer
    identify there is held at its polished value.  The report gains ``polish``."""
    names = tuple(ident["fitted"])
    if not names:
        return card, _public(ident)
    tight = (options or Options()).tightened(POLISH_TIGHTENING)
    stage = Stage("polish", names, "all", recipe.stages[-1].voltage_weight, POLISH_NFEV)
    try:
        polished, report = _run_stage(loop, card, recipe, stage, tight, POLISH_TOLERANCE)
    except InputError as exc:  # ended on a card constraint: the fit stands unpolished
        if log:
            log(f"  no polish: {exc}")
        return card, _public({**ident, "polish": {"skipped": str(exc)}})
    if log:
        log(f"  polish at tolerances /{POLISH_TIGHTENING:g}: RMS {report.rms_dec:.4f} dec, "
            f"{report.nfev} simulations, {report.seconds:.1f} s")
    final, again = _identify(loop, polished, recipe, list(names), None, tight, log)
    again.pop("rms_dec")
    return final, _public({**ident, **again, "fixed": {**ident["fixed"], **again["fixed"]},
                           "polish": {"tightening": POLISH_TIGHTENING,
                                      "rms_dec": report.rms_dec, "nfev": report.nfev,
                                      "seconds": round(report.seconds, 1)}})


def _public(ident: dict) -> dict:
    """The report without :func:`_identify`'s working entries."""
    keep = ("value", "fitted_value", "reason")
    return {**ident, "fixed": {n: {k: f[k] for k in keep}
                               for n, f in ident["fixed"].items()}}


def _identify(loop: MeasuredLoop, card: Card, recipe: Recipe, free: list[str],
              documented: Card | None, options: Options | None,
              log: Callable[[str], None] | None) -> tuple[Card, dict]:
    """Fix, one at a time and worst first, the parameters of ``free`` the loop does not
    identify.  With ``documented`` (a card), a parameter left free by the data (relative
    error beyond the rule) is set to its documented value when that changes the loop's
    RMS error by less than :data:`INDISTINGUISHABLE_DEC` and V_set and V_reset by less
    than :data:`INDISTINGUISHABLE_V`, else held at its fitted value; one of a correlated
    pair is held at its fitted value (its partner carries the combination the data
    determine).  Either way the fit is unchanged within that tolerance.  Each fixed
    entry records the documented value and the RMS change it makes (for the refit)."""
    vw = recipe.stages[-1].voltage_weight
    free = list(free)
    fixed: dict[str, dict] = {}

    def figures(c: Card) -> np.ndarray:  # RMS (dec), V_set and V_reset (V)
        cur = simulate_loops(loop, [c], options).current[0]
        m = loop_metrics(loop, cur)
        return np.array([loop_rms(loop, cur), m["v_set_V"], m["v_reset_V"]])

    now = figures(card)
    while True:
        stage = Stage("identify", tuple(free), "all", vw, 1)
        obj = _Objective(loop, recipe, stage, card, options)
        params = _params(obj, recipe)
        n_pts = int(obj.mask.sum())
        r0, jac = obj.residual(params), obj.jacobian(params)
        err, corr = covariance(jac[:n_pts], r0[:n_pts])
        logs = [n in recipe.log_parameters for n in free]
        rel = relative_errors(err, [card[n] for n in free], logs)
        verdict = worst_unidentified(free, rel, corr)
        if verdict is None or len(free) == 1:
            break
        name, reason, value = verdict.name, verdict.reason, card[verdict.name]
        entry = {"unidentified": reason, "documented_value": None,
                 "documented_rms_change": None, "correlated": verdict.correlated}
        if documented is not None:
            lo, hi = recipe.bounds_of(name)
            candidate = min(max(documented[name], lo), hi)
            try:
                trial = card.replace(**{name: candidate})
                moved = figures(trial) - now
                entry.update(documented_value=candidate,
                             documented_rms_change=float(moved[0]))
            except CardError:
                trial, moved = None, np.full(3, np.nan)
            change = (f"RMS {moved[0]:+.4f} dec, V_set {1e3 * moved[1]:+.1f} mV, V_reset "
                      f"{1e3 * moved[2]:+.1f} mV")
            if trial is not None and not verdict.correlated \
                    and abs(moved[0]) < INDISTINGUISHABLE_DEC \
                    and np.all(np.abs(moved[1:]) < INDISTINGUISHABLE_V):
                card, value = trial, candidate
                reason += f"; set to its documented value ({change})"
            else:
                reason += f"; held at its fitted value (the documented {candidate:.4g}: {change})"
        else:
            reason += "; held at its fitted value"
        fixed[name] = {"value": value, "fitted_value": obj.card[name], "reason": reason,
                       **entry}
        free.remove(name)
        if log:
            log(f"  fixed {name} = {value:.4g}: {reason}")
    fitted = {n: {"value": card[n], "stderr": in_card_units(err[k], n, card, recipe),
                  "relative_error": float(rel[k])} for k, n in enumerate(free)}
    correl = {f"{free[a]}~{free[b]}": float(corr[a, b]) for a in range(len(free))
              for b in range(a + 1, len(free)) if abs(corr[a, b]) >= 0.5}
    return card, {"fitted": fitted, "fixed": fixed, "correlations": correl,
                  "rules": {"max_relative_error": MAX_RELATIVE_ERROR,
                            "max_correlation": MAX_CORRELATION},
                  "rms_dec": float(now[0])}
