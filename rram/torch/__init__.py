"""PyTorch rendering of the model (optional: ``pip install rram[torch]``).

:class:`Cell` is a batch of devices as a differentiable module: the branch flows of the
generated rendering (:mod:`rram.torch._device`, printed from the same equations as the
Python engine, the ngspice subcircuit and the Verilog-A module) and the static operating
point with gradients by implicit differentiation.  :class:`Crossbar` reads a 1R array
of them through its wires, differentiably.  The core package never imports torch:
only ``import rram.torch`` does.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    from ..errors import InputError

    raise InputError("rram.torch needs PyTorch: pip install 'rram[torch]' (torch==2.13.0, "
                     "the CPU build; a CUDA build works unchanged)") from exc

from .cell import Cell
from .crossbar import Crossbar

__all__ = ["Cell", "Crossbar"]
