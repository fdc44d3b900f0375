"""Typed errors.  Every message names the bad input and, where there is one, the valid range."""

from __future__ import annotations


class RramError(Exception):
    """Base class of all errors this package raises on purpose."""


class CardError(RramError, ValueError):
    """A model card is invalid: unknown name, non-finite value or value out of range."""


class InputError(RramError, ValueError):
    """A user input (stimulus, option, file, name) is invalid."""


class SimulationError(RramError, RuntimeError):
    """A simulation could not be completed.

    ``time_s`` is the simulated time at which it stopped, ``analysis`` the analysis
    (``"tran"``, ``"op"``, ``"dc"``) and ``device`` the index of the failing device.
    """

    def __init__(
        self,
        message: str,
        *,
        time_s: float | None = None,
        analysis: str = "tran",
        device: int | None = None,
    ):
        super().__init__(message)
        self.time_s = time_s
        self.analysis = analysis
        self.device = device


class ConvergenceError(SimulationError):
    """The solver did not converge (Newton failure or time step too small)."""


class InterruptedRunError(RramError):
    """The user stopped a long run (Ctrl-C); the message says what was kept."""
