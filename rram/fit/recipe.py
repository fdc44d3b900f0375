"""Fitting recipes: which card parameters are fitted, on which points, in which order.

A recipe is a sequence of stages.  Each stage fits its parameters (the others held at
their current values) to the log-current residual of the points it names, optionally
plus the V_set/V_reset mismatch, with lmfit's bounded trust-region least squares.
Parameters listed in ``log_parameters`` are fitted as log₁₀ of their value (those that
span decades).  Recipes read and write JSON (``rram fit --recipe FILE``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..card import Card, default_card
from ..checks import is_number, parse_json
from ..errors import InputError
from ..io import read_text
from ..model import Model
from .data import check_compliance

#: Point sets a stage can fit: of a DC loop (:func:`rram.fit.objective.point_sets`; a
#: pulse record has all but ``switching``:
#: :class:`rram.fit.pulse_measurement.PulseMeasurement`).
POINT_SETS = ("all", "lrs", "hrs", "reset", "switching")
#: Kinds of data with a default recipe.
RECIPE_KINDS = ("loop", "pulses")


@cache
def _default_model() -> Model:
    return default_card().model


def _positive_or_zero(value: Any) -> bool:
    return is_number(value) and math.isfinite(value) and value >= 0


@dataclass(frozen=True)
class Stage:
    name: str
    parameters: tuple[str, ...]
    #: the point set the stage fits, or a union of them joined by ``+``
    points: str = "all"
    #: Weight of the V_set and V_reset mismatch, per ``voltage_scale`` volts, against
    #: one point's log₁₀ residual (0: not fitted).
    voltage_weight: float = 0.0
    max_nfev: int = 40
    #: the model whose parameters it fits (default: the default card's)
    model: Model | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.check(self.model or _default_model())

    def check(self, model: Model) -> None:
        """Refuse a stage ``model`` cannot fit (the message names the stage)."""
        fittable = model.fittable
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"stage name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.points, str) or any(
                p not in POINT_SETS for p in self.points.split("+")):
            raise InputError(f"stage {self.name!r}: points {self.points!r} (valid: "
                             f"{', '.join(POINT_SETS)}, or a union such as hrs+reset)")
        if not isinstance(self.parameters, tuple) or not self.parameters:
            raise InputError(f"stage {self.name!r} fits no parameters (give a list of "
                             f"names from: {', '.join(fittable)})")
        for p in self.parameters:
            if p not in fittable:
                raise InputError(f"stage {self.name!r}: {p!r} is not a fittable card "
                                 f"parameter (valid: {', '.join(fittable)})")
        twice = sorted({p for p in self.parameters if self.parameters.count(p) > 1})
        if twice:
            raise InputError(f"stage {self.name!r} lists {', '.join(twice)} twice")
        if not _positive_or_zero(self.voltage_weight):
            raise InputError(f"stage {self.name!r}: voltage_weight must be a finite number "
                             f">= 0, got {self.voltage_weight!r}")
        if not (is_number(self.max_nfev) and math.isfinite(self.max_nfev)
                and self.max_nfev == int(self.max_nfev) and self.max_nfev >= 1):
            raise InputError(f"stage {self.name!r}: max_nfev must be an integer >= 1, "
                             f"got {self.max_nfev!r}")


@dataclass(frozen=True)
class Recipe:
    stages: tuple[Stage, ...]
    #: Card values set before the first stage (e.g. a cell wide enough for the LRS).
    start: dict[str, float] = field(default_factory=dict)
    log_parameters: tuple[str, ...] = ()
    #: Tighter bounds than the card's parameter ranges (card units).
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: Volts per unit of the V_set/V_reset residual.
    voltage_scale: float = 0.01
    #: Compliance of the RESET sweep when the instrument had none (A).
    icc_reset: float = 0.1
    #: Leave the data's samples at a switching event (:func:`rram.fit.objective.
    #: switching_samples`) out of every residual: the switching voltages' rows weigh them.
    exclude_switching_samples: bool = False
    #: A penalty on a loop whose CF grows wider than this fraction of ``wcf``
    #: (:func:`rram.fit.objective.width_penalty`); None: no bound on the width.
    max_width_fraction: float | None = None
    #: the model whose parameters it fits (default: the default card's)
    model: Model | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.model is None:
            object.__setattr__(self, "model", _default_model())
        by_name = self.model.by_name
        # a recipe without stages would write the unfitted card as a fit
        if not isinstance(self.stages, tuple) or not self.stages:
            raise InputError("recipe: no stages (a recipe fits at least one stage)")
        for k, s in enumerate(self.stages):
            if not isinstance(s, Stage):
                raise InputError(f"recipe: stage {k} is not a Stage, got {s!r}")
            if (s.model or _default_model()) is not self.model:
                s.check(self.model)
        names = [s.name for s in self.stages]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"recipe: stage name(s) {', '.join(map(repr, twice))} used "
                             "twice (reports are keyed by stage)")
        if not isinstance(self.start, dict) or not isinstance(self.bounds, dict):
            raise InputError("recipe: 'start' and 'bounds' must map parameter names to "
                             "values")
        if "polarity" in self.start:
            raise InputError("recipe: start cannot set polarity (it is read from the data: "
                             "--set-polarity)")
        for name in (*self.start, *self.log_parameters, *self.bounds):
            if name not in by_name:
                raise InputError(f"recipe: unknown card parameter {name!r}")
        for name, value in self.start.items():
            p = by_name[name]
            problem = p.check(value)
            if problem:
                raise InputError(f"recipe: start value of {name}: {problem} "
                                 f"(valid {p.range_text})")
        for name, pair in self.bounds.items():
            p = by_name[name]
            if not (isinstance(pair, tuple) and len(pair) == 2
                    and all(is_number(b) and math.isfinite(b) for b in pair)):
                raise InputError(f"recipe: bounds of {name} must be two finite numbers "
                                 f"[lo, hi], got {pair!r}")
            lo, hi = pair
            if not (p.lower <= lo < hi <= p.upper):
                raise InputError(f"recipe: bounds of {name} must satisfy "
                                 f"{p.lower:g} <= lo < hi <= {p.upper:g} {p.unit}, "
                                 f"got ({lo:g}, {hi:g})")
        for name in self.log_parameters:
            if self.bounds_of(name)[0] < 0:
                raise InputError(f"recipe: {name} can be negative (range "
                                 f"{by_name[name].range_text}): it cannot be fitted as "
                                 "log10")
        if not (_positive_or_zero(self.voltage_scale) and self.voltage_scale > 0):
            raise InputError(f"recipe: voltage_scale must be a finite number > 0 V, got "
                             f"{self.voltage_scale!r}")
        check_compliance(self.icc_reset, "recipe: icc_reset")
        if not isinstance(self.exclude_switching_samples, bool):
            raise InputError("recipe: exclude_switching_samples must be true or false, got "
                             f"{self.exclude_switching_samples!r}")
        if self.max_width_fraction is not None and not (
                is_number(self.max_width_fraction) and 0 < self.max_width_fraction < 1):
            raise InputError("recipe: max_width_fraction must be a number within (0, 1) "
                             f"(a fraction of wcf) or null, got {self.max_width_fraction!r}")

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.stages for p in s.parameters))

    def bounds_of(self, name: str) -> tuple[float, float]:
        p = self.model.by_name[name]
        return self.bounds.get(name, (p.lower, p.upper))

    def to_json(self) -> str:
        data = _fields(self)
        data["stages"] = [_fields(stage) for stage in self.stages]
        data["bounds"] = {k: list(v) for k, v in self.bounds.items()}
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "recipe", model: Model | None = None
                  ) -> Recipe:
        """Parse a recipe (as :meth:`to_json` writes it); every problem is an
        :class:`InputError` naming ``source``."""
        data = parse_json(text, source)
        try:
            if not isinstance(data, dict):
                raise TypeError("expected a JSON object")
            raw = data.pop("stages", None)
            if not isinstance(raw, list):
                raise TypeError("'stages' must be a list of stages")
            stages = []
            for k, s in enumerate(raw):
                if not isinstance(s, dict) or not isinstance(s.get("parameters"), list):
                    raise TypeError(f"stage {k} must be an object with a 'parameters' list")
                stages.append(Stage(**{**s, "parameters": tuple(s["parameters"]),
                                       "model": model}))
            bounds = data.pop("bounds", {})
            log_parameters = data.pop("log_parameters", [])
            if not isinstance(bounds, dict) or not isinstance(log_parameters, list):
                raise TypeError("'bounds' must be an object and 'log_parameters' a list")
            return cls(stages=tuple(stages),
                       bounds={k: tuple(v) if isinstance(v, list) else v
                               for k, v in bounds.items()},
                       log_parameters=tuple(log_parameters), **data, model=model)
        except TypeError as exc:
            raise InputError(f"{source}: not a valid fitting recipe: {exc}") from None
        except InputError as exc:
            raise InputError(f"{source}: {str(exc).removeprefix('recipe: ')}") from None


def _fields(obj) -> dict:
    """A stage's or recipe's fields as JSON data (its model is not data)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj) if f.name != "model"}


def load_recipe(path: str | Path, model: Model | None = None) -> Recipe:
    """A recipe file fitting ``model``'s parameters (default: the default card's)."""
    return Recipe.from_json(read_text(path, "recipe"), str(path), model)


def recipe_of(card: Card) -> Recipe:
    """The recipe ``card`` was fitted with (its provenance: ``rram fit`` records it), or
    its model's default recipe for a card that was not fitted."""
    recorded = card.meta.get("provenance", {}).get("recipe")
    if recorded is None:
        return default_recipe(card.model)
    return Recipe.from_json(json.dumps(recorded), "the card's fitting recipe", card.model)


#: The initial state: fitted on a loop that is not steady (:func:`open_recipe`).
INITIAL_STATE = ("x0", "w0")


def open_recipe(recipe: Recipe) -> Recipe:
    """``recipe`` for one cycle's loop (:attr:`rram.fit.loop.MeasuredLoop.steady`
    False): its first and last stages also fit the initial state (:data:`INITIAL_STATE`),
    unless a stage fits part of it already."""
    stages = list(recipe.stages)
    if any(p in s.parameters for s in stages for p in INITIAL_STATE):
        return recipe
    for k in {0, len(stages) - 1}:
        stages[k] = replace(stages[k], parameters=stages[k].parameters + INITIAL_STATE)
    return replace(recipe, stages=tuple(stages))


def default_recipe(model: Model | None = None, kind: str = "loop") -> Recipe:
    """``model``'s staged recipe of a DC loop or (``kind="pulses"``) of a pulse record
    (its calibration; default: the default card's model,
    :data:`rram.equations.calibration.CALIBRATION`)."""
    model = model or _default_model()
    if kind not in RECIPE_KINDS:
        raise InputError(f"recipe kind {kind!r}: valid are {', '.join(RECIPE_KINDS)}")
    cal = model.calibration
    stages = None if cal is None else cal.stages if kind == "loop" else cal.pulse_stages
    if not stages:
        raise InputError(f"model {model.name!r} has no {kind} calibration recipe: give one")
    return Recipe(
        stages=tuple(Stage(s.name, s.parameters, s.points, s.voltage_weight, s.max_nfev,
                           model) for s in stages),
        log_parameters=cal.log_parameters,
        bounds={name: (lo, hi) for name, lo, hi in cal.bounds},
        max_width_fraction=cal.max_width_fraction if kind == "loop" else None,
        model=model,
    )
