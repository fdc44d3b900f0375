"""Parameters, and the text of a card file.

A :class:`Parameter` carries a name, default, unit, range and description; the range
semantics are those of the CMC Verilog-A macros (closed or open ends), so the Verilog-A
printer maps them mechanically.  :meth:`Parameter.violations` checks one value or a
column of values (one per device) against it.  Cards, the values of every parameter of
a model, are in :mod:`rram.card`; :func:`card_values_from_json` reads their files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import is_number, parse_json
from .errors import CardError

#: Names must be lower-case identifiers: they are used verbatim in SPICE and Verilog-A.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,31}$")

#: Names we refuse because they are keywords or functions in one of the targets
#: (ngspice is case-insensitive, so lower-case comparison is enough).
RESERVED = frozenset(
    (
        "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "begin", "branch", "case", "cos",
        "cosh", "ddt", "ddx", "default", "discipline", "else", "end", "endcase", "endfunction",
        "endmodule", "exp", "floor", "for", "function", "ground", "idt", "if", "inf", "inout",
        "input", "integer", "limexp", "ln", "log", "max", "min", "module", "nature", "output",
        "parameter", "pow", "pwl", "pwr", "real", "sgn", "sign", "sin", "sinh", "sqrt", "string",
        "tan", "tanh", "temper", "temp", "time", "u", "uramp", "v", "i", "while", "from",
        "exclude", "analog", "electrical", "thermal", "hertz", "pi", "e",
    )
)


#: What a parameter does (``Parameter.role``):
#:
#: * ``""``: structure or conduction: fixed for a device's life;
#: * ``state``: an initial state (drawn once per device; afterwards the state carries);
#: * ``kinetic``: enters rates only (no state, no conduction): may be redrawn between
#:   operations without moving the resistance;
#: * ``bound``: a bound of a state: drawn by the RESET and held through the next SET, so
#:   no state leaves its range between operations;
#: * ``filament``: a property of the CF a SET forms (its thermal coupling, its contact
#:   to the electrode): drawn by each SET and held through the RESET that dissolves it;
#: * ``smoothing``: the width of a C¹ replacement of a hard branch (results must not
#:   depend on it);
#: * ``guard``: a numerical guard, inactive within the physical range.
ROLES = ("", "state", "kinetic", "bound", "filament", "smoothing", "guard")


@dataclass(frozen=True)
class Parameter:
    """One model parameter.

    ``lower``/``upper`` bound the value; ``*_open`` makes that end exclusive.  ``choices``
    restricts the value to a finite set (switches).  ``kind`` is ``"instance"`` for
    parameters that may differ per instance in SPICE (initial state, the carriers of
    variation: one ``.model`` serves a varied array),
    ``"environment"`` for what the simulator provides (the ambient temperature): a
    column of the Python engine's cards, never in a card file or an exported model.
    """

    name: str
    default: float
    unit: str
    desc: str
    group: str
    lower: float = -math.inf
    upper: float = math.inf
    lower_open: bool = False
    upper_open: bool = False
    choices: tuple[float, ...] = ()
    kind: str = "model"
    role: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role of {self.name}: {self.role!r} is not one of "
                             + ", ".join(repr(r) for r in ROLES))
        if not NAME_PATTERN.match(self.name):
            raise ValueError(f"parameter name {self.name!r} is not a lower-case identifier")
        if self.name in RESERVED:
            raise ValueError(f"parameter name {self.name!r} clashes with a target keyword")
        problem = self.check(self.default)
        if problem:
            raise ValueError(f"default of {self.name}: {problem}")

    @property
    def range_text(self) -> str:
        if self.choices:
            return "one of {" + ", ".join(f"{c:g}" for c in self.choices) + "}"
        lo = "(" if self.lower_open else "["
        hi = ")" if self.upper_open else "]"
        return f"{lo}{self.lower:g}, {self.upper:g}{hi}"

    def check(self, value: Any) -> str | None:
        """Return a message if ``value`` is not acceptable, else ``None``."""
        if not is_number(value):  # a JSON true or "1.4" is no number
            return f"{value!r} is not a number"
        value = float(value)
        if not math.isfinite(value):
            return f"{value!r} is not finite"
        if self.choices:
            return None if value in self.choices else f"{value:g} is not {self.range_text}"
        below = value <= self.lower if self.lower_open else value < self.lower
        above = value >= self.upper if self.upper_open else value > self.upper
        if below or above:
            return f"{value:g} is outside {self.range_text} {self.unit}".rstrip()
        return None

    def violations(self, values: np.ndarray) -> np.ndarray:
        """True where a value of the column ``values`` is not acceptable (the same rule
        as :meth:`check`, for one value per device at once)."""
        v = np.asarray(values, dtype=float)
        bad = ~np.isfinite(v)
        if self.choices:
            return bad | ~np.isin(v, self.choices)
        with np.errstate(invalid="ignore"):
            bad |= (v <= self.lower) if self.lower_open else (v < self.lower)
            bad |= (v >= self.upper) if self.upper_open else (v > self.upper)
        return bad


def parameter(name: str, default: float, unit: str, desc: str, group: str,
              lo: float = -math.inf, hi: float = math.inf, lo_open: bool = False,
              hi_open: bool = False, choices: tuple = (), kind: str = "model",
              role: str = "") -> Parameter:
    """A :class:`Parameter`, its numbers as floats (how the physics blocks declare them)."""
    return Parameter(name, float(default), unit, desc, group, float(lo), float(hi),
                     lo_open, hi_open, tuple(float(c) for c in choices), kind, role)


#: Keys of a card entry ``{"value": v, "unit": u}``; any other key is refused (a typo
#: such as "units" would otherwise be ignored).
ENTRY_KEYS = ("value", "unit")


def unit_key(unit: str) -> str:
    """A unit spelling reduced for comparison: Ω/Ohm/ohm/ohms are one, ``·`` is ``*``,
    and ``-``, ``–`` or ``1`` mean dimensionless (``""``).  Case matters otherwise
    (mS is not MS)."""
    u = unit.strip().replace("\u03a9", "Ohm").replace("\u2126", "Ohm").replace("\u00b7", "*")
    u = re.sub(r"(?i)\bohms?\b", "Ohm", u).replace(" ", "")
    return "" if u in ("-", "\u2013", "1") else u


def card_values_from_json(text: str, source: str = "<card>"
                          ) -> tuple[str, dict[str, Any], dict, dict[str, Any]]:
    """Parse card JSON: ``{"parameters": {name: value | {"value": v, "unit": u}}}`` or a
    flat mapping.  Returns the name, the values, the metadata and the units given."""
    data = parse_json(text, source, CardError)
    if not isinstance(data, dict):
        raise CardError(f"{source}: a card must be a JSON object")
    params = data.get("parameters", data if "format" not in data else None)
    if not isinstance(params, dict):
        raise CardError(f"{source}: missing the 'parameters' object")
    values: dict[str, Any] = {}
    units: dict[str, Any] = {}
    for key, entry in params.items():
        if isinstance(entry, dict):
            if "value" not in entry:
                raise CardError(f"{source}: parameter {key} has no 'value'")
            extra = sorted(set(entry) - set(ENTRY_KEYS))
            if extra:
                raise CardError(f"{source}: parameter {key}: unknown key(s) "
                                f"{', '.join(map(repr, extra))} (valid: value, unit)")
            if "unit" in entry:
                units[key] = entry["unit"]
        values[key] = entry.get("value") if isinstance(entry, dict) else entry
    name = data.get("name", "rram") if "parameters" in data else "rram"
    meta = data.get("meta", {}) if "parameters" in data else {}
    return str(name), values, dict(meta) if isinstance(meta, dict) else {}, units


def check_units(units: Mapping[str, Any], parameters: Iterable[Parameter]) -> None:
    """Every unit a card gives must be its parameter's declared unit (:func:`unit_key`):
    a value in joules where electronvolts are meant must not run."""
    by_name = {p.name: p for p in parameters}
    for name, unit in units.items():
        p = by_name.get(name)
        if p is None:
            continue  # an unknown name is refused with the others by Card.of
        if not isinstance(unit, str) or unit_key(unit) != unit_key(p.unit):
            raise CardError(f"parameter {name}: unit {unit!r} is not its unit "
                            f"{p.unit!r} (give the value in {p.unit or 'no unit'}, "
                            f"or drop the 'unit' key)")
