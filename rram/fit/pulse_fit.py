"""Fit a card to a pulse record (:mod:`.pulses`, the measurement of
:mod:`.pulse_measurement`): the staged fit's descents, restarts, identification and
polish, and the validation on held-out sequences."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..card import Card
from ..engine.run import Options
from .iv import DESCENT_MARGIN, DESCENT_STEPS
from .pulse_measurement import PulseMeasurement, initial_state
from .pulses import PulseRecord
from .recipe import Recipe, default_recipe

#: Descents restarted from the best end (the recipe's last stage) while each lowers the
#: RMS by more than RESTART_GAIN (dec): the trust region of a stage shrinks in the
#: valley of the SET's steps and stops short; a fresh start from its end goes on.
RESTARTS, RESTART_GAIN = 3, 5e-4


@dataclass
class PulseFit:
    card: Card
    stages: list
    rms_dec: float
    model_resistance: np.ndarray
    seconds: float
    identification: dict | None = None
    switching: dict = field(default_factory=dict)
    #: the (gap, width) (m) the record was simulated from
    initial: tuple[float, float] = (float("nan"), float("nan"))

    def figures(self) -> dict:
        return {"rms_log10_decades": self.rms_dec, "seconds": self.seconds,
                "initial_state_m": {"gap": self.initial[0], "width": self.initial[1]},
                **self.switching}


def fit_pulses(record: PulseRecord, card: Card, recipe: Recipe | None = None, *,
               progress: bool = True, log: Callable[[str], None] | None = None,
               identify: bool = True, options: Options | None = None,
               sign: float = 0.0, starts: int = 0, keep: int = 2) -> PulseFit:
    """Fit ``card`` to a pulse record with ``recipe`` (default: the model's pulse
    recipe, :func:`rram.fit.recipe.default_recipe` with ``kind="pulses"``): the staged
    fit once per difference step of :data:`~.iv.DESCENT_STEPS`, the better end kept
    (as the loop fit does) and restarted from while it improves, then (``identify``)
    the parameters the record does not determine held and the identified ones
    polished.  With ``starts`` > 0 the descents run from the ``keep`` best of that many
    screened starts (:mod:`.multistart`, as ``rram fit --starts``).  ``card.polarity``
    is set from the data."""
    t0 = time.perf_counter()
    meas = PulseMeasurement(record, initial_state(record, card), sign)
    recipe = recipe or default_recipe(card.model, kind="pulses")
    card = card.replace(**recipe.start, polarity=meas.sign)
    origins = [card]
    if starts > 0:
        from .multistart import best_indices, candidate_cards
        from .stages import screen

        cands = candidate_cards(card, recipe, starts) or [card]
        scores = screen(meas, recipe, cands, options)
        origins = [cands[i] for i in best_indices(scores, keep)]
        if log:
            log(f"  screened {len(cands)} starts; fitting from {len(origins)} (scores "
                + ", ".join(f"{scores[i]:.3g}" for i in best_indices(scores, keep)) + ")")
    best = None
    for origin in origins:
        first = None
        for step in DESCENT_STEPS:  # as the loop fit: the better end of two descents
            end = _descend(meas, origin, recipe, progress, log, options, step)
            if first is None or end[0] < first[0] - DESCENT_MARGIN:
                first = end
        if best is None or first[0] < best[0]:
            best = first
    # a restart runs the last stage alone (all the recipe's parameters): the partial
    # stages before it would leave the good end along their own points
    last = replace(recipe, stages=recipe.stages[-1:])
    for _ in range(RESTARTS):
        again = _descend(meas, best[1], last, progress, log, options, DESCENT_STEPS[0])
        if log:
            log(f"  restart from the best end: RMS {best[0]:.4f} -> {again[0]:.4f} dec")
        gain = best[0] - again[0]
        if gain > 0:
            best = again
        if gain <= RESTART_GAIN:
            break
    rms, card, reports = best
    identification = None
    if identify:  # once, at the best end (the polish is most of a descent's cost)
        from .refit import identify_parameters, polish

        card, identification = identify_parameters(meas, card, recipe, log=log,
                                                   options=options)
        card, identification = polish(meas, card, recipe, identification, options, log)
    r = meas.simulate([card], options).resistance[0]
    rms = meas.rms(r)
    # its own programmed states (rram.states); the record's start stays where it was
    from ..states import with_programmed_states

    card = with_programmed_states(card, options)
    data_sw, model_sw = meas.switching(record.resistance), meas.switching(r)
    switching = {"v_set_V": {"data": data_sw[0], "model": model_sw[0]},
                 "v_reset_V": {"data": data_sw[1], "model": model_sw[1]}}
    return PulseFit(card, reports, rms, r, time.perf_counter() - t0, identification,
                    switching, meas.initial)


def _descend(meas: PulseMeasurement, card: Card, recipe: Recipe, progress: bool,
             log: Callable[[str], None] | None, options: Options | None, jac_step: float
             ) -> tuple[float, Card, list]:
    """One descent through the recipe's stages: the RMS (dec), card and stage reports."""
    from .stages import run_stages

    card, reports = run_stages(meas, card, recipe, progress, log, options, jac_step)
    return meas.rms(meas.simulate([card], options).resistance[0]), card, reports


def held_out_rms(record: PulseRecord, held: Sequence[str], fit: PulseFit) -> dict:
    """The fitted card's RMS log₁₀ error on the reads of the sequences ``held`` of
    ``record`` (the fit saw :meth:`~.pulses.PulseRecord.without_reads` of it: the same
    pulses from the same initial state)."""
    meas = PulseMeasurement(record, fit.initial, float(fit.card["polarity"]))
    r = meas.simulate([fit.card], None).resistance[0]
    keep = np.isin(record.sequence.astype(str), list(held)) & record.reads
    return {"sequences": list(held), "reads": int(keep.sum()),
            "held_out_rms_log10_decades": meas.rms(r, keep),
            "training_rms_log10_decades": fit.rms_dec}
