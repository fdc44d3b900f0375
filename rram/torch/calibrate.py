"""Gradient calibration: the loop fit's least squares with its Jacobian from the torch
rendering's forward sensitivities instead of finite differences.

:class:`AutogradObjective` is the loop fit's :class:`~rram.fit.objective.Objective`
(the same residuals: log₁₀|I_model| − log₁₀|I_data| on the stage's points, from the
compiled engine) whose Jacobian is d log₁₀|I| / dθ from one lockstep run with the
parameters' tangents (:func:`rram.torch.sensitivity.sensitivities`: the derivative of
the whole adaptive integration, through the SET), instead of one compiled run per
parameter with a forward difference.  :func:`run_stage` runs a recipe stage with it.
It is an option beside the default fit: stages that weigh the switching voltages
(``voltage_weight`` > 0) need V_reset's and the SET completion's derivatives, which the
sensitivities do not give, and are refused; so are kinds of data other than a DC loop.
"""

from __future__ import annotations

import math

import lmfit
import numpy as np

from ..card import Card
from ..engine.run import Options
from ..errors import InputError
from ..fit.loop import I_FLOOR, MeasuredLoop
from ..fit.objective import JAC_STEP, LoopMeasurement, Objective
from ..fit.recipe import Recipe, Stage
from ..fit.stages import StageReport
from ..fit.stages import run_stage as _run_stage
from .sensitivity import sensitivities


class AutogradObjective(Objective):
    """The loop objective with the Jacobian of its current rows by forward
    sensitivities (its residuals are the compiled engine's, as the default fit's)."""

    def __init__(self, loop: MeasuredLoop, recipe: Recipe, stage: Stage, card: Card,
                 options: Options | None = None, jac_step: float = JAC_STEP):
        if stage.voltage_weight > 0:
            raise InputError(f"stage {stage.name}: the autograd Jacobian covers the current "
                             "rows, not the switching voltages (voltage_weight > 0); fit "
                             "this stage with the default finite differences")
        super().__init__(loop, recipe, stage, card, options, jac_step)
        if not isinstance(self.measurement, LoopMeasurement):
            raise InputError(f"stage {stage.name}: the autograd Jacobian differentiates a "
                             "DC loop; fit this kind of data with the default finite "
                             "differences")

    def jacobian(self, params: lmfit.Parameters) -> np.ndarray:
        x = self.vector(params)
        card = self.card_of(x)
        if card is None:
            raise InputError(f"stage {self.stage.name}: the trial card violates a "
                             "constraint; no Jacobian")
        loop = self.measurement.loop
        sens = sensitivities(loop.circuit, loop.stimulus(), card, self.names,
                             circuit_params=loop.transistor,
                             options=self.options or Options())
        current = sens.result.device_arrays(0)["current_A"]
        d_current = sens.d_current[0, :, : current.size]
        # d log10 max(|I|, floor) / dθ: zero where the floor holds
        live = np.abs(current) > I_FLOOR
        d_log = np.where(live, d_current / (np.where(live, current, 1.0) * math.log(10)),
                         0.0)
        for k, name in enumerate(self.names):
            if self.key(name) != name:  # fitted as log10: dθ/dlog10θ = θ·ln 10
                d_log[k] *= card[name] * math.log(10)
        self.nfev += 1
        return d_log[:, self.mask].T


def run_stage(loop: MeasuredLoop, card: Card, recipe: Recipe, stage: Stage,
              options: Options | None = None, tolerance: float = 1e-4
              ) -> tuple[Card, StageReport]:
    """:func:`rram.fit.stages.run_stage` with the autograd Jacobian."""
    return _run_stage(loop, card, recipe, stage, options, tolerance,
                      objective=AutogradObjective)


__all__ = ["AutogradObjective", "run_stage"]
