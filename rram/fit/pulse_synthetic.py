"""A pulse-staircase record simulated on a card: an experiment designed before it is
run, and the synthetic device of the pulse fit's round trip (tests, docs).

The standard ISPP record of a 1T1R cell: for each gate voltage a RESET that prepares
the HRS, then SET pulses of rising amplitude at that gate; then a SET that prepares the
LRS and RESET pulses of rising amplitude with the gate fully on.  Every pulse is read.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..card import Card
from ..engine.run import Options
from .pulse_measurement import initial_state, simulate_pulses
from .pulses import PulseRecord

#: The default staircases (V): SET 0.2 → 2.0 V and RESET 0.2 → 2.5 V in 0.1 V steps.
SET_STEPS = tuple(np.round(np.arange(0.2, 2.0001, 0.1), 3))
RESET_STEPS = tuple(np.round(np.arange(0.2, 2.5001, 0.1), 3))


def staircase_record(card: Card, gates: Sequence[float] = (1.0, 1.2, 1.5), *,
                     set_steps: Sequence[float] = SET_STEPS,
                     reset_steps: Sequence[float] = RESET_STEPS, width: float = 1e-6,
                     reset_gate: float = 3.0, prepare_reset: float = 2.0,
                     prepare_set: float = 1.6, prepare_set_gate: float = 1.2,
                     noise: float = 0.0, seed: int = 0,
                     options: Options | None = None) -> PulseRecord:
    """The staircases of ``gates`` (V) simulated on ``card`` (its polarity gives the
    signs; the amplitudes are magnitudes), from its programmed LRS, each read with a
    lognormal error of ``noise`` (the σ of ln R) drawn from ``seed``."""
    sign = float(card["polarity"])
    seq, amp, gate = [], [], []
    for g in gates:
        seq += [f"set@{g:g}V"] * (1 + len(set_steps))
        amp += [-sign * prepare_reset, *(sign * a for a in set_steps)]
        gate += [reset_gate, *([g] * len(set_steps))]
    seq += ["reset"] * (1 + len(reset_steps))
    amp += [sign * prepare_set, *(-sign * a for a in reset_steps)]
    gate += [prepare_set_gate, *([reset_gate] * len(reset_steps))]
    n = len(amp)
    schedule = PulseRecord(np.array(seq), np.array(amp, float), np.full(n, float(width)),
                           np.ones(n), v_gate=np.array(gate, float), source="staircases")
    r = simulate_pulses(schedule, [card], sign, initial_state(schedule, card),
                        options).resistance[0]
    r = r * np.exp(noise * np.random.default_rng(seed).standard_normal(n))
    return PulseRecord(schedule.sequence, schedule.v_pulse, schedule.width, r,
                       v_gate=schedule.v_gate, source=f"staircases simulated on card "
                       f"{card.digest[:12]}")
