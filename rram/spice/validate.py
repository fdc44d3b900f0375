"""Validation of everything that reaches a generated SPICE deck.

ngspice ``.control`` blocks can run shell commands, so no user-supplied text may reach a
deck unchecked: names must be strict identifiers, values finite numbers, paths free of
newlines and control characters.  Every failure is an :class:`~rram.errors.InputError`
naming the input.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..printers.format import format_number

IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
#: Words that must never appear as names in a deck (control and shell access).
FORBIDDEN_WORDS = frozenset({"control", "endc", "shell", "system", "exec", "source", "end"})
SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@:~-][A-Za-z0-9_./+@:~ -]*$")


def identifier(value: Any, what: str) -> str:
    """A name for a deck (instance, node, model): ``[A-Za-z][A-Za-z0-9_]*``, ≤ 64 chars."""
    if not isinstance(value, str) or not IDENTIFIER.match(value):
        raise InputError(
            f"{what} {value!r} is not a valid name: use letters, digits and '_', "
            "starting with a letter (at most 64 characters)"
        )
    if value.lower() in FORBIDDEN_WORDS:
        raise InputError(f"{what} {value!r} is a reserved word")
    return value


def number(value: Any, what: str, *, positive: bool = False, nonnegative: bool = False) -> str:
    """A finite number, rendered for the deck."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            import numpy as np

            if isinstance(value, np.generic) and np.isreal(value):
                value = float(value)
            else:
                raise TypeError
        except (TypeError, ImportError):
            raise InputError(f"{what} must be a number, got {value!r}") from None
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{what} must be finite, got {value!r}")
    if positive and value <= 0:
        raise InputError(f"{what} must be > 0, got {value:g}")
    if nonnegative and value < 0:
        raise InputError(f"{what} must be >= 0, got {value:g}")
    return format_number(value)


def path(value: Any, what: str) -> str:
    """A file path for ``.include``/``pre_osdi``: printable, no quotes or newlines."""
    text = str(value) if isinstance(value, (str, Path)) else None
    if text is None or not SAFE_PATH.match(text) or "\n" in text or "\r" in text:
        raise InputError(
            f"{what} {value!r} is not a safe path for a deck (letters, digits, spaces and "
            "._/+@:~- only)"
        )
    return text


def parameters(values: Mapping[str, Any], what: str) -> dict[str, str]:
    """Instance/model parameters: identifier names, finite numbers."""
    return {identifier(k, f"{what} name"): number(v, f"{what} {k}") for k, v in values.items()}
