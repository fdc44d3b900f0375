"""Static (DC) evaluation of devices at a frozen state: reads and I-V at fixed state.

A read applies ``v_read`` across te-be through a negligible source resistance and solves
the electrical nodes and the temperature with the gap and width held, exactly as an
instrument's short read pulse leaves the state unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..card import PARAMETER_NAMES
from ..circuits import CIRCUIT_KINDS, CIRCUIT_PARAMETERS
from ..equations import NM
from ..errors import ConvergenceError
from ..params import Card
from ..status import Status

READ_SOURCE_RESISTANCE = 1e-6  # Ohm


def _params(cards: Sequence[Card]) -> np.ndarray:
    circuit = {p.name: p.default for p in CIRCUIT_PARAMETERS}
    circuit["rs"] = READ_SOURCE_RESISTANCE
    tail = [circuit[p.name] for p in CIRCUIT_PARAMETERS]
    return np.array([[c.values[k] for k in PARAMETER_NAMES] + tail for c in cards])


TIP_GUESSES = (0.5, 1.0, 0.0)


def solve_static(
    cards: Sequence[Card],
    gap_nm: np.ndarray,
    width_nm: np.ndarray,
    v_cell: np.ndarray,
) -> dict[str, np.ndarray]:
    """Solve each device at its (gap, width) under ``v_cell`` (te - be, V).

    Returns ``current_A`` (into te), ``temperature_K`` and the internal node voltages.
    Raises :class:`ConvergenceError` naming the first device that does not converge.
    """
    from .jit import integrator as ig  # the compiled engine loads on first solve

    n = len(cards)
    gap = np.broadcast_to(np.asarray(gap_nm, float), (n,))
    width = np.broadcast_to(np.asarray(width_nm, float), (n,))
    v = np.broadcast_to(np.asarray(v_cell, float), (n,))
    P = _params(cards)
    U = np.zeros((n, 3))
    U[:, 0] = v
    U[:, 2] = 1.0
    frozen = np.array([False, False, False, False, True, True, False])
    atol = np.array([1e-9] * 4 + [1e-6] * 2 + [1e-6])
    lim = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 100.0])
    Y = np.zeros((n, 7))
    status = np.full(n, -1, np.int64)
    # The tip voltage splits v between the CF body and the gap: mid-way first, then the
    # two ends for the devices Newton lost (a fully open gap takes all of v)
    for tip_fraction in TIP_GUESSES:
        todo = np.flatnonzero(status != Status.OK)
        if not todo.size:
            break
        Yt = np.zeros((todo.size, 7))
        Yt[:, 0] = Yt[:, 1] = v[todo]
        Yt[:, 3] = tip_fraction * v[todo]
        Yt[:, 4] = gap[todo] - P[todo, PARAMETER_NAMES.index("x0")] / NM  # the changes
        Yt[:, 5] = width[todo] - P[todo, PARAMETER_NAMES.index("w0")] / NM
        st = np.zeros(todo.size, np.int64)
        ig.dc_batch(CIRCUIT_KINDS.index("resistor"), np.ascontiguousarray(P[todo]),
                    np.ascontiguousarray(U[todo]), Yt, frozen, atol, 1e-9, lim, st)
        Y[todo], status[todo] = Yt, st
    bad = np.flatnonzero(status != Status.OK)
    if bad.size:
        d = int(bad[0])
        raise ConvergenceError(
            f"static solve of device {d} at {v[d]:g} V (gap {gap[d]:g} nm, width "
            f"{width[d]:g} nm) did not converge", analysis="op", device=d)
    rtop = P[:, PARAMETER_NAMES.index("rtop")]
    tamb = P[:, PARAMETER_NAMES.index("tamb")]
    return {
        "current_A": (Y[:, 0] - Y[:, 1]) / rtop,
        "temperature_K": tamb + Y[:, 6],
        "nodes": Y,
    }


def read_resistance(cards: Sequence[Card], gap_nm, width_nm, v_read: float = 0.1) -> np.ndarray:
    """Cell resistance V/I (Ohm, contacts included) read at ``v_read`` across te-be."""
    out = solve_static(cards, gap_nm, width_nm, np.full(len(cards), float(v_read)))
    return float(v_read) / out["current_A"]
