"""The engines' contract, in plain Python: the status of a simulated device and the
columns of its statistics.

Every engine (the numba integrator, the ngspice runner) reports with these codes and
every consumer (metrics, Monte Carlo, the fit) reads them by name, so none of them needs
the compiled engine to understand a result.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Status(IntEnum):
    OK = 0
    MAX_STEPS = 1
    STEP_TOO_SMALL = 2
    DC_FAILED = 3
    NON_FINITE = 4
    STOPPED = 5  # success: the stop current was reached (see Stat.STOP_TIME)

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    Status.OK: "ok",
    Status.MAX_STEPS: "the step limit was hit",
    Status.STEP_TOO_SMALL: "the time step fell below the minimum (hmin): Newton kept "
    "failing there, or the error test for more than 200 steps in a row",
    Status.DC_FAILED: "the initial operating point did not converge",
    Status.NON_FINITE: "a non-finite value appeared in the solution",
    Status.STOPPED: "stopped: the stop current was reached",
}

#: Statuses of a device whose waveform is complete (to its end or to its stop current).
SUCCEEDED = (Status.OK, Status.STOPPED)


def succeeded(status: np.ndarray | int) -> np.ndarray | bool:
    """True where a device's simulation completed."""
    return np.isin(status, [int(s) for s in SUCCEEDED])


class Stat(IntEnum):
    """Columns of the per-device statistics array."""

    STEPS = 0
    REJECTED = 1
    NEWTON = 2
    FAIL_TIME = 3
    STOP_TIME = 4
    JAC = 5
    FORCED = 6


N_STATS = len(Stat)
