"""Type checks of values read from JSON: numbers are numbers, never booleans or strings.

``bool`` is a subclass of ``int`` in Python, so ``isinstance(True, int)`` holds and a
JSON ``true`` would pass as 1 unless refused explicitly; every loader uses these.
"""

from __future__ import annotations

import json
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


#: The strict JSON reader's limits: deeper nesting would exhaust Python's recursion, and
#: a longer number is no measurement (5 000 digits made int() and float() raise).
MAX_JSON_DEPTH = 64
MAX_NUMBER_CHARS = 64


def _number(kind: type):
    def parse(text: str) -> float | int:
        if len(text) > MAX_NUMBER_CHARS:
            raise ValueError(f"a number of {len(text)} characters (at most "
                             f"{MAX_NUMBER_CHARS})")
        return kind(text)
    return parse


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(text: str, source: str, error: type[Exception] = InputError) -> Any:
    """Parse user JSON strictly, or raise ``error`` naming ``source``: nesting at most
    :data:`MAX_JSON_DEPTH` deep, numbers at most :data:`MAX_NUMBER_CHARS` characters, no
    key twice in one object (``json`` would keep the last silently).  NaN is parsed (a
    fit's unestimated standard error); the value checks refuse it where it matters."""
    if (depth := _depth(text)) > MAX_JSON_DEPTH:
        raise error(f"{source}: JSON nested {depth} deep (at most {MAX_JSON_DEPTH})")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_float=_number(float), parse_int=_number(int))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise error(f"{source}: not valid JSON ({exc})") from None
