"""The same write in ngspice: a transient of the exported deck (the reference of
:mod:`.write`).

The array of :func:`~.write.write_circuit` (wires with their capacitance, floating lines
undriven) is exported by :func:`~.export.render_write`, every source pulsing to its
plateau value, every cell free with its state on observable nets, and run through the
project's ngspice adapter (:mod:`rram.spice.ngspice`).  The cells' states at the end of
the last pulse's gap are read back and each cell's resistance read on its own as the
native write reads it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..constants import NM
from ..dialects import dialect
from .cells import States, cell_parameters, with_states
from .export import frozen_osdi, render_write, state_nets
from .spec import ArraySpec
from .write import V_READ, PulseTrain, cell_resistance, check_quasi_static, write_circuit


@dataclass(frozen=True)
class SpiceWrite:
    """Cell states after the train (nm), every cell's resistance at :data:`V_READ`
    before and after (Ω), the deck's size (characters) and the run time (s)."""

    states: States
    r0: np.ndarray
    r: np.ndarray
    deck_chars: int
    seconds: float

    @property
    def change(self) -> np.ndarray:
        return self.r / self.r0 - 1


def ngspice_write(spec: ArraySpec, cell: tuple[int, int], pulse: PulseTrain,
                  scheme: str = "v/2", states: States | None = None, kind: str = "osdi",
                  max_step: float | None = None) -> SpiceWrite:
    """Run the write of :func:`rram.array.write.write` as an ngspice transient."""
    from ..spice.ngspice import NgspiceSession

    check_quasi_static(spec, pulse)
    P = with_states(spec, cell_parameters(spec), states)
    c = write_circuit(spec, cell, scheme, pulse.amplitude, P)
    session = NgspiceSession.get()
    path = None
    if dialect(kind).compiled:
        path = frozen_osdi(P.model)
        session.load_osdi(path)
    deck = render_write(c, pulse.rise, pulse.width, pulse.fall, pulse.gap, pulse.count,
                        kind, path, in_deck_osdi=False, max_step=max_step)
    t0 = time.perf_counter()
    vec = session.run(deck).vectors
    seconds = time.perf_counter() - t0
    nets = state_nets(c)
    dgap = np.array([float(vec[f"v({g})"][-1]) for g, _ in nets])
    dwidth = np.array([float(vec[f"v({w})"][-1]) for _, w in nets])
    gap, width = P["x0"] + dgap * NM, P["w0"] + dwidth * NM
    r0, bank = cell_resistance(P, P["x0"], P["w0"])
    r, _ = cell_resistance(P, gap, width, bank)
    m, n = spec.shape
    return SpiceWrite(States(gap.reshape(m, n) / NM, width.reshape(m, n) / NM),
                      r0.reshape(m, n), r.reshape(m, n), len(deck), seconds)


__all__ = ["V_READ", "SpiceWrite", "ngspice_write"]
