"""Validation of everything that reaches a generated SPICE deck.

ngspice ``.control`` blocks can run shell commands, so no user-supplied text may reach a
deck unchecked: names must be strict identifiers, values finite numbers, paths free of
newlines and control characters.  Every failure is an :class:`~rram.errors.InputError`
naming the input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import names
from ..errors import InputError
from ..printers.format import format_number, number

IDENTIFIER = names.IDENTIFIER
#: Words that must never appear as names in a deck (control and shell access); a subset
#: of :data:`rram.names.RESERVED`, which :func:`identifier` refuses as a whole.
FORBIDDEN_WORDS = frozenset({"control", "endc", "shell", "system", "exec", "source", "end"})
#: No spaces: ngspice splits ``.include`` and ``pre_osdi`` arguments at a space (it
#: looked for "/tmp/a" given "/tmp/a b/rram.lib"), and quotes are refused anyway.
SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@:~-]+$")


def identifier(value: Any, what: str,
               targets: tuple[str, ...] = names.TARGETS) -> str:
    """A user-chosen name: ``[A-Za-z][A-Za-z0-9_]*``, ≤ 64 chars, and no reserved word
    of ``targets`` (by default every target: Verilog-A/AMS keywords, the names of
    ``disciplines.vams``, ngspice dot-cards, control words and ground; see
    :mod:`rram.names`), compared without case.  A module/subcircuit name (``rram export
    --name``) reaches every target; an instance name only decks (``targets=("spice",)``)."""
    problem = names.problem(value, targets)
    if problem:
        raise InputError(f"{what} {value!r} {problem}")
    return value


def path(value: Any, what: str) -> str:
    """A file path for ``.include``/``pre_osdi``: printable, no spaces, quotes or
    newlines."""
    text = str(value) if isinstance(value, (str, Path)) else None
    if text is None or not SAFE_PATH.match(text) or "\n" in text or "\r" in text:
        raise InputError(
            f"{what} {value!r} is not a safe path for a deck (letters, digits and ._/+@:~- "
            "only; ngspice cuts a path at a space)"
        )
    return text


def parameters(values: Mapping[str, Any], what: str) -> dict[str, str]:
    """Instance/model parameters: identifier names, finite numbers."""
    return {identifier(k, f"{what} name"): number(v, f"{what} {k}") for k, v in values.items()}


# ngspice .options ----------------------------------------------------------------------


@dataclass(frozen=True)
class OptionSpec:
    """One ngspice ``.options`` entry this project accepts: ``kind`` is ``real``,
    ``int``, ``choice`` (a word of ``choices``) or ``flag`` (bare word, given as 1);
    numbers lie in [``lower``, ``upper``] (``lower_open``: ``lower`` excluded)."""

    kind: str
    desc: str
    lower: float | None = None
    upper: float | None = None
    lower_open: bool = False
    choices: tuple[str, ...] = ()

    @property
    def range_text(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "flag":
            return "a flag: give it as 1"
        lo = "(" if self.lower_open else "["
        what = "an integer in " if self.kind == "int" else ""
        return f"{what}{lo}{self.lower:g}, {self.upper:g}]"


#: The ngspice ``.options`` a generated deck may carry (ngspice manual, "Simulator
#: Variables"), with the ranges in which they still describe a sensible simulation:
#: tolerances positive and small, iteration limits positive integers, temperatures (°C,
#: as ngspice takes them) between absolute zero and 1000 °C.  ngspice itself accepts any
#: word silently (``bogusopt=1``) and any value (``reltol=-1`` fails only at run time),
#: so every entry is checked here.
NGSPICE_OPTIONS: dict[str, OptionSpec] = {
    "reltol": OptionSpec("real", "relative error tolerance", 0.0, 0.1, lower_open=True),
    "abstol": OptionSpec("real", "absolute current tolerance (A)", 0.0, 1e-6,
                         lower_open=True),
    "vntol": OptionSpec("real", "absolute voltage tolerance (V)", 0.0, 1e-3, lower_open=True),
    "chgtol": OptionSpec("real", "charge tolerance (C)", 0.0, 1e-9, lower_open=True),
    "trtol": OptionSpec("real", "truncation-error overestimation factor", 1.0, 100.0),
    "gmin": OptionSpec("real", "minimum conductance (S)", 0.0, 1e-6, lower_open=True),
    "gshunt": OptionSpec("real", "conductance from every node to ground (S)", 0.0, 1e-6),
    "pivtol": OptionSpec("real", "absolute pivot tolerance", 0.0, 1e-3, lower_open=True),
    "pivrel": OptionSpec("real", "relative pivot tolerance", 0.0, 1.0, lower_open=True),
    "xmu": OptionSpec("real", "trapezoidal/Euler mix (0.5 = trapezoidal)", 0.0, 0.5,
                      lower_open=True),
    "method": OptionSpec("choice", "integration method", choices=("gear", "trap")),
    "maxord": OptionSpec("int", "maximum order of the integration method", 1, 6),
    "itl1": OptionSpec("int", "DC iteration limit", 1, 100000),
    "itl2": OptionSpec("int", "DC transfer-curve iteration limit", 1, 100000),
    "itl4": OptionSpec("int", "transient iteration limit per time point", 1, 100000),
    "itl6": OptionSpec("int", "source-stepping steps (srcsteps)", 0, 100000),
    "srcsteps": OptionSpec("int", "source-stepping steps", 0, 100000),
    "gminsteps": OptionSpec("int", "gmin-stepping steps", 0, 100000),
    "temp": OptionSpec("real", "circuit temperature (deg C)", -273.15, 1000.0,
                       lower_open=True),
    "tnom": OptionSpec("real", "nominal temperature of model parameters (deg C)", -273.15,
                       1000.0, lower_open=True),
    "num_threads": OptionSpec("int", "OpenMP threads for OSDI model evaluation", 1, 1024),
    "seed": OptionSpec("int", "seed of ngspice's random functions", 1, 2**31 - 1),
    "klu": OptionSpec("flag", "KLU sparse-matrix solver"),
    "sparse": OptionSpec("flag", "Sparse 1.3 sparse-matrix solver"),
    "noopiter": OptionSpec("flag", "skip the direct operating-point iteration"),
}


def option(name: Any, value: Any) -> tuple[str, str]:
    """One ``.options`` entry as (name, deck text); the name is one of
    :data:`NGSPICE_OPTIONS` (any case) and the value lies in its range."""
    if not isinstance(name, str) or name.lower() not in NGSPICE_OPTIONS:
        raise InputError(f"ngspice option {name!r} is not supported; valid: "
                         + ", ".join(NGSPICE_OPTIONS))
    key = name.lower()
    spec = NGSPICE_OPTIONS[key]
    bad = f"option {key}={value!r}: valid is {spec.range_text} ({spec.desc})"
    if spec.kind == "choice":
        text = value.lower() if isinstance(value, str) else None
        if text not in spec.choices:
            raise InputError(bad)
        return key, f"{key}={text}"
    if isinstance(value, str):
        raise InputError(bad)
    text = number(value, f"option {key}")
    v = float(value)
    if spec.kind == "flag":
        if v != 1:
            raise InputError(bad)
        return key, key
    assert spec.lower is not None and spec.upper is not None
    below = v <= spec.lower if spec.lower_open else v < spec.lower
    if below or v > spec.upper or (spec.kind == "int" and v != int(v)):
        raise InputError(bad)
    return key, f"{key}={int(v)}" if spec.kind == "int" else f"{key}={text}"


#: The smallest step cap a deck may carry, absolute (s) and relative to its stop time.
TMAX_FLOOR = 1e-15
TMAX_MIN_FRACTION = 1e-9


def max_step(value: Any, stop: float, what: str = "tmax") -> str:
    """A maximum time step for a transient ending at ``stop``: at least
    :data:`TMAX_FLOOR` (1 fs) and ``stop``·:data:`TMAX_MIN_FRACTION` (more than 1e9
    steps is no simulation), at most ``stop``."""
    number(value, what, positive=True)
    v, lo = float(value), max(TMAX_FLOOR, stop * TMAX_MIN_FRACTION)
    if not lo <= v <= stop:
        raise InputError(f"{what} = {v:g} s is out of range: valid is [{lo:g}, {stop:g}] s "
                         f"(at least {TMAX_FLOOR:g} s and 1e-9 of the stop time {stop:g} s, "
                         "at most the stop time)")
    return format_number(v)
