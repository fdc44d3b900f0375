"""Number and line formatting shared by the SPICE and Verilog-A printers."""

from __future__ import annotations

import math
from typing import Any

from ..errors import InputError


def format_number(value: float) -> str:
    """Shortest text that reads back to the same double (``repr``), in a form every
    target parses: no SPICE scale suffixes, always a decimal point or exponent."""
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"cannot print the non-finite number {v!r}")
    for digits in range(1, 18):
        text = format(v, f".{digits}g")
        if float(text) == v:
            break
    return text if any(c in text for c in ".e") else text + ".0"


def wrap_spice(head: str, items: list[str], width: int = 100) -> list[str]:
    """``head`` followed by ``items``, continued on ``+`` lines within ``width``."""
    lines, cur = [], head
    for item in items:
        if len(cur) + 1 + len(item) > width:
            lines.append(cur)
            cur = "+"
        cur += " " + item
    lines.append(cur)
    return lines


def number(value: Any, what: str, *, positive: bool = False, nonnegative: bool = False) -> str:
    """A finite number, checked and rendered for a deck (:class:`~rram.errors.InputError`
    naming ``what`` otherwise)."""
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
