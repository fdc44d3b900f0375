"""The staged fit: one bounded least-squares run per stage of the recipe
(:mod:`.recipe`), each on the parameters and points it names, and the screen of many
starts with one batched simulation.  Any kind of data (a DC loop, a pulse record: a
:class:`~.objective.Measurement`) is fitted by the same stages."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import lmfit
import numpy as np

from ..card import Card
from ..engine.run import Options
from ..errors import InputError
from .identify import in_card_units, named_covariance
from .loop import MeasuredLoop
from .objective import JAC_STEP, Measurement, Objective, lmfit_parameters
from .recipe import Recipe, Stage


@dataclass
class StageReport:
    name: str
    parameters: dict[str, dict]  # name -> value, stderr, log
    correlations: dict[str, float]
    rms_dec: float
    nfev: int
    seconds: float



def run_stages(loop: MeasuredLoop | Measurement, card: Card, recipe: Recipe, progress: bool,
            log: Callable[[str], None] | None, options: Options | None = None,
            jac_step: float = JAC_STEP) -> tuple[Card, list[StageReport]]:
    """The recipe's stages in order from ``card`` (``jac_step``: the Jacobian's
    relative difference step)."""
    reports = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(recipe.stages), unit="stage", desc=f"fit (step {jac_step:g})",
                   disable=None)
    for stage in recipe.stages:
        if bar is not None:
            bar.set_postfix_str(stage.name)
        card, report = run_stage(loop, card, recipe, stage, options, jac_step=jac_step)
        reports.append(report)
        if log:
            log(f"  stage {stage.name} (step {jac_step:g}): RMS {report.rms_dec:.3f} dec, "
                f"{report.nfev} simulations, {report.seconds:.1f} s")
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return card, reports


def screen(loop: MeasuredLoop | Measurement, recipe: Recipe, cards: list[Card],
            options: Options | None = None) -> np.ndarray:
    """Residual norm of each candidate card over all the data's points, with the
    switching voltages weighed as in the recipe's last stage (one batched
    simulation)."""
    from .multistart import fitted_names

    stage = Stage("screen", fitted_names(recipe), "all", recipe.stages[-1].voltage_weight, 1)
    obj = Objective(loop, recipe, stage, cards[0], options)
    xs = [np.array([math.log10(c[n]) if n in recipe.log_parameters else c[n]
                    for n in stage.parameters]) for c in cards]
    rows = obj.residuals(xs)
    return np.sqrt(np.mean(rows ** 2, axis=1))


def run_stage(loop: MeasuredLoop | Measurement, card: Card, recipe: Recipe,
               stage: Stage, options: Options | None = None,
               tolerance: float = 1e-4, jac_step: float = JAC_STEP,
               objective: type[Objective] = Objective) -> tuple[Card, StageReport]:
    """One least-squares stage: the fitted card and the stage's report (``tolerance``:
    least squares' ftol and xtol; ``objective``: the residuals and their Jacobian, by
    finite differences in the compiled engine unless another is given, e.g.
    :class:`rram.torch.calibrate.AutogradObjective`)."""
    ts = time.perf_counter()
    obj = objective(loop, recipe, stage, card, options, jac_step)
    mini = lmfit.Minimizer(lambda p, o=obj: o.residual(p), lmfit_parameters(obj, recipe))
    res = mini.least_squares(jac=lambda p, o=obj: o.jacobian(p), x_scale="jac",
                             max_nfev=stage.max_nfev, ftol=tolerance, xtol=tolerance)
    best = obj.card_of(obj.vector(res.params))
    if best is None:  # lmfit's final values are within bounds: a constraint failed
        raise InputError(f"stage {stage.name}: the fitted values violate a card "
                         "constraint")
    card = best
    rms = float(obj.measurement.figures(card, options)[0])
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
        correl, rms, obj.nfev, time.perf_counter() - ts)
