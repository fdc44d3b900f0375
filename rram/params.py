"""Parameters and model cards.

A :class:`Parameter` carries a name, default, unit, range and description; the range
semantics are those of the CMC Verilog-A macros (closed or open ends), so the Verilog-A
printer maps them mechanically.  A :class:`Card` is an immutable set of values for every
parameter of a model, validated on construction and read from / written to JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .checks import is_number
from .errors import CardError
from .io import read_text

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
    parameters that may differ per instance in SPICE (initial state, variation hooks).
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


def _check_known(names: Iterable[str], by_name: Mapping[str, Parameter]) -> None:
    unknown = sorted(set(names) - set(by_name))
    if unknown:
        raise CardError(f"unknown parameter(s) {', '.join(unknown)}; valid names: "
                        + ", ".join(sorted(by_name)))


def _checked(p: Parameter, value: Any) -> float:
    problem = p.check(value)
    if problem:
        raise CardError(f"parameter {p.name}: {problem} (valid range {p.range_text})")
    return float(value)


def _check_constraints(constraints: Iterable[Any], values: Mapping[str, float]) -> None:
    for check in constraints:
        problem = check(values)
        if problem:
            raise CardError(problem)


@dataclass(frozen=True)
class Card:
    """Immutable, validated values for every parameter of a model.

    Build with :meth:`from_values` (missing names take their defaults); change with
    :meth:`replace`.  ``values`` is read-only.
    """

    parameters: tuple[Parameter, ...]
    values: Mapping[str, float]
    name: str = "rram"
    meta: Mapping[str, Any] = field(default_factory=dict)
    constraints: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def from_values(
        cls,
        parameters: Iterable[Parameter],
        values: Mapping[str, Any] | None = None,
        *,
        name: str = "rram",
        meta: Mapping[str, Any] | None = None,
        constraints: Iterable[Any] = (),
    ) -> Card:
        params = tuple(parameters)
        by_name = {p.name: p for p in params}
        given = dict(values or {})
        _check_known(given, by_name)
        resolved = {p.name: _checked(p, given.get(p.name, p.default)) for p in params}
        _check_constraints(constraints, resolved)
        return cls(
            params,
            MappingProxyType(resolved),
            name,
            MappingProxyType(dict(meta or {})),
            tuple(constraints),
        )

    def __getitem__(self, name: str) -> float:
        try:
            return self.values[name]
        except KeyError:
            raise CardError(f"unknown parameter {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise CardError(f"unknown parameter {name!r}")

    def replace(self, **changes: float) -> Card:
        """A copy with ``changes``; only they are checked (the rest already were)."""
        by_name = {p.name: p for p in self.parameters}
        _check_known(changes, by_name)
        merged = dict(self.values)
        merged.update({name: _checked(by_name[name], v) for name, v in changes.items()})
        _check_constraints(self.constraints, merged)
        return Card(self.parameters, MappingProxyType(merged), self.name, self.meta,
                    self.constraints)

    def with_meta(self, **meta: Any) -> Card:
        merged = dict(self.meta)
        merged.update(meta)
        return Card.from_values(
            self.parameters,
            self.values,
            name=self.name,
            meta=merged,
            constraints=self.constraints,
        )

    # Serialisation ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "rram-card/1",
            "name": self.name,
            "parameters": {
                p.name: {"value": self.values[p.name], "unit": p.unit} for p in self.parameters
            },
            "meta": dict(self.meta),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @property
    def digest(self) -> str:
        """sha256 of the parameter values (not the metadata): the card's identity."""
        payload = json.dumps({k: repr(v) for k, v in self.values.items()}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


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
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CardError(f"{source}: not valid JSON ({exc})") from None
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
            continue  # an unknown name is refused with the others by Card.from_values
        if not isinstance(unit, str) or unit_key(unit) != unit_key(p.unit):
            raise CardError(f"parameter {name}: unit {unit!r} is not its unit "
                            f"{p.unit!r} (give the value in {p.unit or 'no unit'}, "
                            f"or drop the 'unit' key)")


def read_card_file(path: str | Path, parameters: Iterable[Parameter], constraints=()) -> Card:
    path = Path(path)
    params = tuple(parameters)
    name, values, meta, units = card_values_from_json(read_text(path, "card"), str(path))
    try:
        check_units(units, params)
        return Card.from_values(params, values, name=name, meta=meta, constraints=constraints)
    except CardError as exc:
        raise CardError(f"{path}: {exc}") from None
