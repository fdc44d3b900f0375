"""Fitting recipes: which card parameters are fitted, on which points, in which order.

A recipe is a sequence of stages.  Each stage fits its parameters (the others held at
their current values) to the log-current residual of the points it names, optionally
plus the V_set/V_reset mismatch, with lmfit's bounded trust-region least squares.
Parameters listed in ``log_parameters`` are fitted as log₁₀ of their value (those that
span decades).  Recipes read and write JSON (``rram fit --recipe FILE``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..card import PARAMETERS
from ..errors import InputError
from ..model import MODEL

#: Point sets a stage can fit (see :func:`rram.fit.iv.point_sets`).
POINT_SETS = ("all", "lrs", "hrs", "reset", "switching")
_BY_NAME = {p.name: p for p in PARAMETERS}


@dataclass(frozen=True)
class Stage:
    name: str
    parameters: tuple[str, ...]
    points: str = "all"
    #: Weight of the V_set and V_reset mismatch, per ``voltage_scale`` volts, against
    #: one point's log₁₀ residual (0: not fitted).
    voltage_weight: float = 0.0
    max_nfev: int = 40

    def __post_init__(self) -> None:
        if self.points not in POINT_SETS:
            raise InputError(f"stage {self.name!r}: points {self.points!r} "
                             f"(valid: {', '.join(POINT_SETS)})")
        if not self.parameters:
            raise InputError(f"stage {self.name!r} fits no parameters")
        for p in self.parameters:
            if p not in MODEL.fittable:
                raise InputError(f"stage {self.name!r}: {p!r} is not a fittable card "
                                 f"parameter (valid: {', '.join(MODEL.fittable)})")
        if self.voltage_weight < 0 or self.max_nfev < 1:
            raise InputError(f"stage {self.name!r}: voltage_weight must be >= 0 and "
                             "max_nfev >= 1")


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

    def __post_init__(self) -> None:
        for name in (*self.start, *self.log_parameters, *self.bounds):
            if name not in _BY_NAME:
                raise InputError(f"recipe: unknown card parameter {name!r}")
        for name, (lo, hi) in self.bounds.items():
            p = _BY_NAME[name]
            if not (p.lower <= lo < hi <= p.upper):
                raise InputError(f"recipe: bounds of {name} must satisfy "
                                 f"{p.lower:g} <= lo < hi <= {p.upper:g}, got ({lo:g}, {hi:g})")
        if self.voltage_scale <= 0 or self.icc_reset <= 0:
            raise InputError("recipe: voltage_scale and icc_reset must be > 0")

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for s in self.stages for p in s.parameters))

    def bounds_of(self, name: str) -> tuple[float, float]:
        p = _BY_NAME[name]
        return self.bounds.get(name, (p.lower, p.upper))

    def to_json(self) -> str:
        data = asdict(self)
        data["bounds"] = {k: list(v) for k, v in self.bounds.items()}
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Recipe:
        try:
            data = json.loads(text)
            stages = tuple(Stage(**{**s, "parameters": tuple(s["parameters"])})
                           for s in data.pop("stages"))
            bounds = {k: (float(v[0]), float(v[1])) for k, v in data.pop("bounds", {}).items()}
            return cls(stages=stages, bounds=bounds,
                       log_parameters=tuple(data.pop("log_parameters", ())), **data)
        except (json.JSONDecodeError, KeyError, TypeError, IndexError) as exc:
            raise InputError(f"not a fitting recipe: {exc}") from None


def load_recipe(path: str | Path) -> Recipe:
    return Recipe.from_json(Path(path).read_text())


def default_recipe() -> Recipe:
    """The model's staged recipe of a DC loop (:data:`rram.model.CALIBRATION`)."""
    cal = MODEL.calibration
    return Recipe(
        stages=tuple(Stage(s.name, s.parameters, s.points, s.voltage_weight, s.max_nfev)
                     for s in cal.stages),
        log_parameters=cal.log_parameters,
        bounds={name: (lo, hi) for name, lo, hi in cal.bounds},
    )
