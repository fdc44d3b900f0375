"""What every experiment shares: the result type and the loop helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..card import Card, default_card
from ..engine.run import SimResult
from ..states import set_sign as set_sign  # the phenomena's, re-exported
from ..states import standard_loops

#: The phenomena's loops are the standard loop of the programmed states (rram.states).
loops = standard_loops

YEAR = 365.25 * 24 * 3600.0


@dataclass
class Phenomenon:
    name: str
    figures: dict[str, Any]
    checks: dict[str, bool]
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return all(self.checks.values())


def card_or_default(card: Card | None) -> Card:
    return card if card is not None else default_card()


def phase_mask(res: SimResult, d: int, t: np.ndarray, cycle: int, phase: str,
               segment: int | None = None) -> np.ndarray:
    """Samples of device ``d`` (times ``t``) in ``phase`` of ``cycle``; ``segment`` 0
    keeps the phase's first segment only (the ramp away from 0 V)."""
    st = res.stimuli[d]
    seg = st.segment_of(t)
    phases = np.array(st.phases)
    segs = np.flatnonzero((st.cycles == cycle) & (phases == phase))
    if segment is not None:
        segs = segs[segment:segment + 1]
    return np.isin(seg, segs)


def local_slopes(x: np.ndarray, y: np.ndarray, log_x: bool = True) -> np.ndarray:
    """Slopes of log10(y) between neighbours, against log10(x) or x."""
    xx = np.log10(x) if log_x else np.asarray(x, float)
    return np.diff(np.log10(y)) / np.diff(xx)


def first_crossing_time(t: np.ndarray, ratio: np.ndarray, factor: float) -> float:
    """First time ``ratio`` leaves [1/factor, factor], interpolated in log time; inf if
    it never does."""
    out = np.flatnonzero((ratio > factor) | (ratio < 1.0 / factor))
    if not out.size:
        return float("inf")
    k = int(out[0])
    if k == 0:
        return float(t[0])
    target = np.log(factor) if ratio[k] > factor else -np.log(factor)
    r0, r1 = np.log(ratio[k - 1]), np.log(ratio[k])
    f = (target - r0) / (r1 - r0) if r1 != r0 else 1.0
    lt = np.log(t[k - 1]) + f * (np.log(t[k]) - np.log(t[k - 1]))
    return float(np.exp(lt))


def log_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log10(y) against log10(x)."""
    return float(np.polyfit(np.log10(x), np.log10(y), 1)[0])
