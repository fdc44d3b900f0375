"""How the model is fitted to a measured DC loop: its staged recipe.

Which parameter carries which feature of a loop, stage by stage, the parameters fitted
in log₁₀ and the bounds tighter than their ranges (:func:`rram.fit.recipe.default_recipe`
turns it into a recipe).  It names parameters of the default blocks
(:data:`rram.equations.DEFAULT_BLOCKS`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CalibrationStage:
    """One stage of the model's default loop-fitting recipe (:mod:`rram.fit.recipe`):
    the parameters that carry one feature of a measured loop, the points that show it,
    the weight of the V_set/V_reset mismatch and the evaluations allowed."""

    name: str
    parameters: tuple[str, ...]
    points: str
    voltage_weight: float
    max_nfev: int


@dataclass(frozen=True)
class Calibration:
    """How the model is fitted to a DC loop: staged parameters, the ones fitted in log₁₀
    (they span decades), and bounds tighter than the parameter ranges."""

    stages: tuple[CalibrationStage, ...]
    log_parameters: tuple[str, ...]
    bounds: tuple[tuple[str, float, float], ...]
    #: the stages of a pulse record (:mod:`rram.fit.pulse_fit`; same log parameters
    #: and bounds)
    pulse_stages: tuple[CalibrationStage, ...] = ()
    #: the widest CF a loop fit may put in the cell, as a fraction of ``wcf`` (None:
    #: unbounded; :func:`rram.fit.objective.width_penalty`)
    max_width_fraction: float | None = None


#: The staged loop fit (see :func:`rram.fit.recipe.default_recipe`):
#:
#: 1. ``conduction``: the gap's hopping conduction, on the HRS;
#: 2. ``lrs``: the compliance-limited LRS (lateral-growth field ``alphaw``, the CF/gap
#:    split ``rho0``, the contact), on the LRS;
#: 3. ``kinetics``: SET (``ea``, ``alpha``), RESET onset (``ei``, ``ri``) and progress
#:    (``eh``, ``alphah``), the time scale ``f0``, on all points plus V_set/V_reset;
#: 4. ``thermal``: all of the above with the heating ``kth``.
#:
#: The initial state (``x0``, ``w0``) is not fitted: the loop is simulated after a burn-in
#: loop (:meth:`rram.fit.loop.MeasuredLoop.stimulus`), so the HRS its SET starts from is
#: the one the card's own RESET leaves, as in every later cycle of a Monte Carlo.  Fitted
#: (as it was before), it read 77 kΩ where the card's RESET leaves 39 kΩ, and the TUD card's
#: steady cycles set at −1.34 V against the loop's −0.97 V.
#:
#: The contact resistance is bounded to 200 Ω.  The LRS a compliance sets follows
#: R_LRS ≈ V_min/I_cc with V_min ≈ 0.2–0.4 V, so at the 1 mA end of the range a card is
#: used over R_LRS is 200–400 Ω: a larger contact would be the 1 mA LRS itself and flatten
#: the trend (the TUD card fitted with a 3 kΩ bound put it at 605 Ω and its R_LRS slope
#: over 0.5–1 mA at −0.43).  One loop at one compliance cannot separate the contact from
#: the CF; the bound is the trend's.  Within it the TUD median loop puts the contact at
#: 139 Ω, inside the bound.
#:
#: The CF's width is bounded to 0.45·wcf.  One compliance fixes R_LRS ∝ ``rho0``/w², not
#: the width; unbounded, the TUD median loop puts the CF at 25.8 of 30 nm (with `make
#: fit`'s Haswell kernels; 0.62·wcf with others), where the
#: heating (the R_LRS carrier ``kth``) no longer moves R_LRS, and the variation fit on
#: that card passes 4 of its 14 checks.  At 0.45 it passes 12, with no device-cycle out
#: of the range of validity (docs/calibration.md, "The CF's width", has the scan).
#: The staged fit of a pulse record (SET staircases at several gate voltages or
#: compliances, RESET staircases: :mod:`rram.fit.pulse_fit`):
#:
#: 1. ``off``: the RESET's progress (``eh``, ``alphah``) and the HRS's conduction ``j0``,
#:    on the reads before the SETs and after the RESET pulses;
#: 2. ``set``: the SET barrier ``ea``, on all reads plus the SET amplitudes;
#: 3. ``lrs``: the LRS each limit sets (``alphaw``, ``rho0``), on the reads after the
#:    SETs (once the SETs happen in the right pulses: the LRS at a low gate depends on
#:    it);
#: 4. ``all``: everything above with the heating ``kth``, which moves the RESET as much
#:    as the LRS (fitted on the LRS reads alone, a fitted card's ``kth`` went +65 % and
#:    ``rho0`` −58 % where its LRS hardly follows the gate, and the HRS was lost).
#:
#: A staircase at one pulse width shows each SET as one amplitude per limit and the HRS
#: at one read voltage, so the rest stays at the start card's values (a loop fit's, or
#: the documented ones): the time scale ``f0`` and the field factor ``alpha`` (one width
#: measures the barrier only together with them), the RESET's onset (``ei``, ``ri``), the
#: hopping length ``xt`` and the contact.  Fitted too, they wander along valleys: on a
#: synthetic record with 2 % read noise, a fit of all twelve reached the noise floor
#: with ``xt`` 10 % and ``alphah`` 79 % off.
PULSE_STAGES = (
    CalibrationStage("off", ("eh", "alphah", "j0"), "hrs+reset", 0.0, 30),
    CalibrationStage("set", ("ea",), "all", 1.0, 20),
    CalibrationStage("lrs", ("alphaw", "rho0"), "lrs", 0.0, 20),
    CalibrationStage("all", ("ea", "alphaw", "rho0", "kth", "eh", "alphah", "j0"), "all",
                     1.0, 40),
)
CALIBRATION = Calibration(
    stages=(
        CalibrationStage("conduction", ("j0", "xt", "vt"), "hrs", 0.0, 25),
        CalibrationStage("lrs", ("alphaw", "rho0", "rtop"), "lrs", 0.0, 15),
        CalibrationStage("kinetics", ("ea", "alpha", "ei", "ri", "eh", "alphah", "f0",
                                      "alphaw"), "all", 1.0, 40),
        CalibrationStage("thermal", ("ea", "alpha", "alphaw", "ei", "ri", "eh", "alphah",
                                     "j0", "xt", "vt", "rho0", "f0", "kth", "rtop"),
                         "all", 1.0, 20),
    ),
    log_parameters=("j0", "rho0", "f0", "rtop", "kth"),
    pulse_stages=PULSE_STAGES,
    bounds=(("x0", 0.2e-9, 3.5e-9), ("w0", 0.1e-9, 20e-9), ("rtop", 1.0, 200.0),
            ("f0", 1e9, 1e15), ("kth", 100.0, 1e5), ("alphaw", 0.1e-9, 5e-9),
            ("alphah", 1e-10, 2e-9), ("xt", 0.2e-9, 0.6e-9)),
    max_width_fraction=0.45,
)
