"""The experiments that define RRAM, run on a card with the Python engine.

Each function runs one experiment and returns a :class:`Phenomenon`: the measured
figures (``figures``), the pass/fail verdicts against the acceptance thresholds
(``checks``) and the raw data for plots (``data``).  ``make demo`` and the tests call the
same functions, so the numbers in the summary are the numbers the tests assert.

* :mod:`.switching`: abrupt SET, gradual RESET, LRS set by the compliance, HRS set by the
  RESET voltage (1R sweep and 1T1R source-line pulses), Joule-assisted RESET, overshoot;
* :mod:`.retention`: read disturb, read immunity in both polarities, half-select disturb,
  retention in a bake;
* :mod:`.robustness`: no smoothing artefacts, endurance over many cycles.
"""

from __future__ import annotations

from .common import YEAR, Phenomenon
from .retention import bake_retention, read_disturb, read_immunity
from .robustness import endurance, no_artefacts
from .switching import (
    abrupt_set,
    gradual_reset,
    hrs_vs_reset_voltage,
    hrs_vs_source_line,
    joule_reset,
    lrs_vs_compliance,
    overshoot,
    reset_temperature,
)

ALL = (abrupt_set, gradual_reset, lrs_vs_compliance, joule_reset, hrs_vs_reset_voltage,
       hrs_vs_source_line, overshoot, reset_temperature, read_disturb, read_immunity,
       bake_retention, no_artefacts, endurance)


def run_all(card=None, options=None) -> list[Phenomenon]:
    return [f(card, options=options) for f in ALL]


__all__ = ["ALL", "YEAR", "Phenomenon", "abrupt_set", "bake_retention", "endurance",
           "gradual_reset", "hrs_vs_reset_voltage", "hrs_vs_source_line", "joule_reset",
           "lrs_vs_compliance", "no_artefacts", "overshoot", "read_disturb", "read_immunity",
           "reset_temperature", "run_all"]
