"""An array's cells a time after they were written: relaxation and retention in the read.

:func:`states_after_programming` writes a data pattern the way a program-and-read flow
does and lets the cells sit before the read:

1. every cell starts in the opposite state of the pattern (the card's programmed states,
   :func:`rram.array.cells.pattern_states`) and gets one pulse of
   :class:`~rram.engine.stimulus.PulseCycle` on its own 1T1R cell: a SET pulse where the
   pattern holds an LRS, a RESET pulse where it holds an HRS;
2. the cells then sit unbiased for ``after_s`` seconds at the card's ambient or at a
   bake temperature;
3. each cell's gap, width and optional states (the disorder ``u0`` a switching event
   quenches, :mod:`rram.equations.relaxation`; the wear) at that time are its frozen
   state for the array's reads.

A card with the relaxation block reads lower with time (the write-verify record's drift,
docs/model.md §10); every card loses its states to vacancy diffusion in a hot bake
(:mod:`rram.equations.retention`).  Each cell is simulated once per step, with its own
device-to-device draw, vectorised over the array.
"""

from __future__ import annotations

import numpy as np

from ..card import CardBatch, carried_at_end, carried_states
from ..constants import BAKE_RANGE_C, CELSIUS_ZERO, MAX_WAIT_S, NM
from ..engine.stimulus import PulseCycle, constant_stress
from ..errors import InputError
from ..experiment import simulate_with
from .cells import States, cell_parameters, pattern_states, with_states
from .spec import ArraySpec


def _end_states(cards: CardBatch, result, segment: int) -> tuple[np.ndarray, ...]:
    """Gap, width (m) and carried states at the end of ``segment`` of every device."""
    result.raise_on_failure()
    ev = result.events
    rows = np.arange(len(cards))
    gap = np.clip(ev["gap_end"][rows, segment] * NM, 0.0, cards["l0"])
    width = np.clip(ev["width_end"][rows, segment] * NM, cards["wmin"], cards["wcf"])
    before = {p: cards[p] for p in carried_states(cards.model)}
    return gap, width, carried_at_end(cards.model, ev, rows, segment, before)


def _with(cards: CardBatch, gap, width, carried) -> CardBatch:
    return cards.with_columns(x0=gap, w0=width, **carried)


def states_after_programming(spec: ArraySpec, pattern: np.ndarray, after_s: float = 0.0,
                             *, bake_c: float | None = None,
                             protocol: PulseCycle | None = None,
                             engine: str = "python") -> States:
    """The cells' states ``after_s`` seconds after ``pattern`` (True = LRS) was written
    (module docstring); ``bake_c``: the wait's temperature (°C; default the card's
    ambient); ``protocol``: the write pulses (default :class:`PulseCycle`)."""
    p = np.asarray(pattern, bool)
    if p.shape != spec.shape:
        raise InputError(f"data pattern has shape {p.shape}; the array is "
                         f"{spec.rows} x {spec.cols}")
    if isinstance(after_s, bool) or not isinstance(after_s, (int, float, np.floating)) \
            or not 0.0 <= after_s <= MAX_WAIT_S:
        raise InputError(f"time after programming must be in [0, {MAX_WAIT_S:g}] s, "
                         f"got {after_s!r}")
    lo, hi = BAKE_RANGE_C
    if bake_c is not None and not (isinstance(bake_c, (int, float, np.floating))
                                   and lo <= bake_c <= hi):
        raise InputError(f"bake temperature must be in [{lo:g}, {hi:g}] °C, got {bake_c!r}")
    protocol = protocol or PulseCycle()
    cards = with_states(spec, cell_parameters(spec), pattern_states(~p, spec.card))
    sign = float(spec.card["polarity"])
    gap, width = cards["x0"].copy(), cards["w0"].copy()
    carried = {k: cards[k].copy() for k in carried_states(cards.model)}
    flat = p.reshape(-1)
    for which, amplitude in ((flat, protocol.v_set), (~flat, protocol.v_reset)):
        idx = np.flatnonzero(which)
        if not idx.size:
            continue
        sub = cards.take(idx)
        res = simulate_with(engine, protocol.circuit, protocol.pulse(amplitude, sign), sub,
                            record=False)
        g, w, c = _end_states(sub, res, PulseCycle.SEGMENTS - 1)
        gap[idx], width[idx] = g, w
        for k, v in c.items():
            carried[k][idx] = v
    if after_s > 0:
        written = _with(cards, gap, width, carried)
        held = written if bake_c is None else written.with_columns(
            tamb=bake_c + CELSIUS_ZERO)
        res = simulate_with(engine, "resistor", constant_stress(0.0, after_s), held,
                            record=False)
        gap, width, carried = _end_states(held, res, 1)
    shape = spec.shape
    return States(gap.reshape(shape) / NM, width.reshape(shape) / NM,
                  {k: v.reshape(shape) for k, v in carried.items()})


__all__ = ["states_after_programming"]
