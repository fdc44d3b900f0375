"""rram: a SPICE-compatible compact model of filamentary metal-oxide RRAM.

One set of equations (:mod:`rram.equations`) rendered to a numba/numpy engine, an ngspice
subcircuit and a Verilog-A module; Monte Carlo and calibration around it.

Importing the package has no side effects; the engine compiles on first use.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rram")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

from .card import PARAMETERS, default_card, load_card, make_card
from .errors import CardError, ConvergenceError, InputError, RramError, SimulationError
from .params import Card, Parameter

__all__ = [
    "PARAMETERS",
    "Card",
    "CardError",
    "ConvergenceError",
    "InputError",
    "Parameter",
    "RramError",
    "SimulationError",
    "__version__",
    "default_card",
    "load_card",
    "make_card",
]
