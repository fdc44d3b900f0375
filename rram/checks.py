"""Type checks of values read from JSON: numbers are numbers, never booleans or strings.

``bool`` is a subclass of ``int`` in Python, so ``isinstance(True, int)`` holds and a
JSON ``true`` would pass as 1 unless refused explicitly; every loader uses these.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from .errors import InputError


def is_number(value: Any) -> bool:
    """A real number (Python or numpy), not a bool and not a string."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def finite_number(value: Any, what: str, error: type[Exception] = InputError) -> float:
    """``value`` as a float, or ``error`` naming ``what`` if it is not a finite number."""
    if not is_number(value) or not math.isfinite(value):
        raise error(f"{what} must be a finite number, got {value!r}")
    return float(value)


def integer(value: Any, what: str, error: type[Exception] = InputError) -> int:
    """``value`` as an int, or ``error`` naming ``what`` if it is not a whole number."""
    if not is_number(value) or not math.isfinite(value) or value != int(value):
        raise error(f"{what} must be an integer, got {value!r}")
    return int(value)
