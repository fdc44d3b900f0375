"""After the stages: the parameters the loop does not identify fixed (at their
documented values where the loop cannot tell, the rest refitted) and the identified ones
polished at tight tolerances."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

from ..card import Card
from ..engine.run import Options
from ..errors import CardError, InputError
from .identify import (
    MAX_CORRELATION,
    MAX_RELATIVE_ERROR,
    covariance,
    in_card_units,
    relative_errors,
    worst_unidentified,
)
from .loop import MeasuredLoop
from .objective import Measurement, Objective, as_measurement, lmfit_parameters
from .recipe import Recipe, Stage
from .stages import run_stage

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


def identify_parameters(loop: MeasuredLoop | Measurement, card: Card, recipe: Recipe, *,
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
    refitted, report = run_stage(loop, trial, recipe,
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


def polish(loop: MeasuredLoop | Measurement, card: Card, recipe: Recipe, ident: dict,
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
        polished, report = run_stage(loop, card, recipe, stage, tight, POLISH_TOLERANCE)
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


def _identify(loop: MeasuredLoop | Measurement, card: Card, recipe: Recipe, free: list[str],
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

    measurement = as_measurement(loop)

    def figures(c: Card) -> np.ndarray:  # RMS (dec), then the switching voltages (V)
        return measurement.figures(c, options)

    now = figures(card)
    while True:
        stage = Stage("identify", tuple(free), "all", vw, 1)
        obj = Objective(loop, recipe, stage, card, options)
        params = lmfit_parameters(obj, recipe)
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
                after = figures(trial)
                # a figure the data do not show (NaN before and after) has not moved
                moved = np.where(np.isnan(after) & np.isnan(now), 0.0, after - now)
                entry.update(documented_value=candidate,
                             documented_rms_change=float(moved[0]))
            except CardError:
                trial, moved = None, np.full_like(now, np.nan)
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
