"""Reproducible draws of the varied parameters: counter-based streams.

Every draw comes from its own stream, ``SeedSequence(seed, spawn_key=(device, cycle,
event))``: device-to-device values from ``(device, 0, 0)``, cycle-to-cycle values of a
SET from ``(device, cycle + 1, 1)`` and of a RESET from ``(device, cycle + 1, 2)``.  A
sample therefore depends only on the seed and its own indices, never on chunking, worker
count or engine, and any device or cycle can be redrawn alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..card import PARAMETERS
from ..errors import InputError
from ..variation import Variation, VariationSpec

_BY_NAME = {p.name: p for p in PARAMETERS}
EVENTS = {"d2d": 0, "set": 1, "reset": 2}
#: Redraws before a truncated distribution gives up (a spec whose σ dwarfs the range).
MAX_REDRAWS = 1000


def _stream(seed: int, device: int, cycle: int, event: str) -> np.random.Generator:
    key = (int(device), 0 if event == "d2d" else int(cycle) + 1, EVENTS[event])
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=key)))


def _apply(v: Variation, base: float, z: float) -> float:
    if v.distribution == "lognormal":
        return base * math.exp(v.shift + v.sigma * z)
    return base + v.shift + v.sigma * z


def _truncated(v: Variation, base: float, rng: np.random.Generator) -> float:
    p = _BY_NAME[v.parameter]
    for _ in range(MAX_REDRAWS):
        value = _apply(v, base, float(rng.standard_normal()))
        if p.lower <= value <= p.upper:
            return value
    raise InputError(f"variation of {v.parameter}: σ = {v.sigma:g} cannot be drawn within "
                     f"[{p.lower:g}, {p.upper:g}] around {base:g}")


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")


def draw_d2d(spec: VariationSpec, base: dict[str, float], seed: int,
             devices: Sequence[int]) -> dict[str, np.ndarray]:
    """Every varied parameter of ``devices`` with only its D2D draw applied (the same for
    all of a device's cycles: compute once, pass to :func:`draw` as ``d2d``)."""
    _check_seed(seed)
    out = {name: np.full(len(devices), float(base[name])) for name in spec.parameters}
    d2d = spec.of_kind("d2d")
    if d2d:
        for i, dev in enumerate(devices):
            rng = _stream(seed, dev, 0, "d2d")
            for v in d2d:  # fixed order: the spec's
                out[v.parameter][i] = _truncated(v, out[v.parameter][i], rng)
    return out


def draw(spec: VariationSpec, base: dict[str, float], seed: int, devices: Sequence[int],
         cycle: int, event: str, d2d: dict[str, np.ndarray] | None = None
         ) -> dict[str, np.ndarray]:
    """Parameter values in effect for ``devices`` during ``event`` (``set``/``reset``) of
    ``cycle``: the base value with the device's D2D draw, then the event's C2C draw.
    ``d2d``: the devices' :func:`draw_d2d` values, if already drawn."""
    _check_seed(seed)
    out = {k: np.array(v, float) for k, v in (
        d2d if d2d is not None else draw_d2d(spec, base, seed, devices)).items()}
    c2c = spec.of_kind("c2c")
    for i, dev in enumerate(devices):
        rng = _stream(seed, dev, cycle, event)
        for v in c2c:
            out[v.parameter][i] = _truncated(v, out[v.parameter][i], rng)
    return out
