"""rram: a SPICE-compatible compact model of filamentary metal-oxide RRAM.

One set of equations (:mod:`rram.equations`, physics blocks assembled into a
:class:`~rram.model.Model`) rendered to a numba/numpy engine, an ngspice
subcircuit and a Verilog-A module; Monte Carlo and calibration around it.

Importing the package has no side effects; the engine compiles on first use.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rram")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

from .card import Card, CardBatch, default_card, load_card, make_card
from .errors import CardError, ConvergenceError, InputError, RramError, SimulationError
from .model import Model, assemble
from .params import Parameter

__all__ = [
    "Card",
    "CardBatch",
    "CardError",
    "ConvergenceError",
    "InputError",
    "Model",
    "Parameter",
    "RramError",
    "SimulationError",
    "__version__",
    "assemble",
    "default_card",
    "load_card",
    "make_card",
]
