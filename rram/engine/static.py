"""Static (DC) evaluation of devices at a frozen state: reads and I-V at fixed state.

A read applies ``v_read`` across te-be through a negligible source resistance and solves
the electrical nodes and the temperature with the gap and width held, exactly as an
instrument's short read pulse leaves the state unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..card import Card, CardBatch
from ..circuits import CIRCUIT_KINDS, CIRCUIT_PARAMETERS, build_circuit
from ..errors import ConvergenceError
from ..status import Status
from .run import newton_limits

READ_SOURCE_RESISTANCE = 1e-6  # Ohm


def _params(cards: CardBatch) -> np.ndarray:
    circuit = {p.name: p.default for p in CIRCUIT_PARAMETERS}
    circuit["rs"] = READ_SOURCE_RESISTANCE
    tail = [circuit[p.name] for p in CIRCUIT_PARAMETERS]
    return np.hstack([cards.values, np.tile(tail, (len(cards), 1))])


#: The tip voltage splits the cell's voltage between the CF body and the gap: mid-way
#: first, then the two ends for the devices Newton lost (a fully open gap takes it all).
TIP_GUESSES = (0.5, 1.0, 0.0)


def solve_rounds(n: int, attempt: Callable[[np.ndarray, float | None], np.ndarray],
                 guesses: Sequence[float | None] = TIP_GUESSES) -> np.ndarray:
    """The static solve of ``n`` devices, one guess after the other: ``attempt(devices,
    guess)`` solves those devices from the tip voltage's ``guess`` (None: their last
    solution) and returns which converged; the next guess takes the others.  Returns
    the devices no guess solved."""
    todo = np.arange(n)
    for guess in guesses:
        if not todo.size:
            break
        todo = todo[~attempt(todo, guess)]
    return todo


def solve_static(
    cards: Card | Sequence[Card] | CardBatch,
    gap_nm: np.ndarray,
    width_nm: np.ndarray,
    v_cell: np.ndarray,
) -> dict[str, np.ndarray]:
    """Solve each device at its (gap, width) under ``v_cell`` (te - be, V).

    Returns ``current_A`` (into te), ``temperature_K`` and the internal node voltages.
    Raises :class:`ConvergenceError` naming the first device that does not converge.
    """
    from .jit import load_integrator  # the compiled engine loads on first solve

    v_cell = np.asarray(v_cell, float)
    batch = CardBatch.of(cards, None if not isinstance(cards, Card) else max(v_cell.size, 1))
    n = len(batch)
    ig = load_integrator(batch.model)
    lay = build_circuit("resistor", batch.model).layout
    gap = np.broadcast_to(np.asarray(gap_nm, float), (n,))
    width = np.broadcast_to(np.asarray(width_nm, float), (n,))
    v = np.broadcast_to(v_cell, (n,))
    P = _params(batch)
    U = np.zeros((n, 3))
    U[:, 0] = v
    U[:, 2] = 1.0
    frozen = np.zeros(len(lay.unknowns), bool)
    frozen[lay.held()] = True  # the states are held
    atol = lay.per_unit({"V": 1e-9, "nm": 1e-6, "K": 1e-6, "1": 1e-9})
    lim = newton_limits(lay)
    Y = np.zeros((n, len(lay.unknowns)))
    states = {"dgap": gap, "dwidth": width}

    def attempt(todo: np.ndarray, tip_fraction: float | None) -> np.ndarray:
        Yt = np.zeros((todo.size, len(lay.unknowns)))
        Yt[:, lay.unknown("mid")] = Yt[:, lay.unknown("ti")] = v[todo]
        Yt[:, lay.unknown("tip")] = tip_fraction * v[todo]
        for node, value in states.items():  # the changes since x0, w0
            anchor, scale = lay.anchor(node)
            Yt[:, lay.unknown(node)] = value[todo] - P[todo, lay.column(anchor)] / scale
        st = np.zeros(todo.size, np.int64)
        ig.dc_batch(CIRCUIT_KINDS.index("resistor"), np.ascontiguousarray(P[todo]),
                    np.ascontiguousarray(U[todo]), Yt, frozen, atol, 1e-9, lim, st)
        Y[todo] = Yt
        return st == Status.OK

    bad = solve_rounds(n, attempt, TIP_GUESSES)
    if bad.size:
        d = int(bad[0])
        raise ConvergenceError(
            f"static solve of device {d} at {v[d]:g} V (gap {gap[d]:g} nm, width "
            f"{width[d]:g} nm) did not converge", analysis="op", device=d)
    return {
        "current_A": (Y[:, lay.unknown("mid")] - Y[:, lay.unknown("ti")]) / batch["rtop"],
        "temperature_K": batch["tamb"] + Y[:, lay.unknown("dtemp")],
        "nodes": Y,
    }


def read_resistance(cards: Card | Sequence[Card] | CardBatch, gap_nm, width_nm,
                    v_read: float = 0.1) -> np.ndarray:
    """Cell resistance V/I (Ohm, contacts included) read at ``v_read`` across te-be."""
    batch = CardBatch.of(cards, None if not isinstance(cards, Card)
                         else np.broadcast(np.asarray(gap_nm), np.asarray(width_nm)).size)
    out = solve_static(batch, gap_nm, width_nm, np.full(len(batch), float(v_read)))
    return float(v_read) / out["current_A"]
