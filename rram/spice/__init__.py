"""ngspice: generated decks, the PySpice adapter and the runner.

Only :mod:`rram.spice.ngspice` imports PySpice.  :func:`simulate_spice` runs a circuit
through the ngspice subcircuit (``model="subckt"``) or the OSDI build of the Verilog-A
module (``model="osdi"``) and returns the Python engine's result type;
:func:`simulate_vacask` runs the same circuits with the module in VACASK, through the
same batch runner.

The runner (and with it the compiled engine) loads on first use, so that rendering decks
— and ``rram generate``, which re-renders the engine's own kernels — never imports them.
"""

from __future__ import annotations

from typing import Any

from .testbench import KINDS, MODELS, ModelRef, Testbench

_RUNNER = ("SpiceOptions", "simulate_spice", "simulate_vacask")

__all__ = ["KINDS", "MODELS", "ModelRef", "SpiceOptions", "Testbench",
           "simulate_spice", "simulate_vacask"]


def __getattr__(name: str) -> Any:
    if name in _RUNNER:
        from . import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
