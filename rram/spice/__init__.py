"""ngspice: generated decks, the PySpice adapter and the runner.

Only :mod:`rram.spice.ngspice` imports PySpice.  :func:`simulate_spice` runs a circuit
through the ngspice subcircuit (``model="subckt"``) or the OSDI build of the Verilog-A
module (``model="osdi"``) and returns the Python engine's result type.
"""

from .runner import ENGINE_MODELS, SpiceOptions, simulate_spice
from .testbench import KINDS, MODELS, ModelRef, Testbench

__all__ = ["ENGINE_MODELS", "KINDS", "MODELS", "ModelRef", "SpiceOptions", "Testbench",
           "simulate_spice"]
