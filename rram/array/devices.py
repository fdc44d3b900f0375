"""The access devices of a cell, in the expression IR, and their vectorised evaluation.

The selector and the access transistor are written once as IR expressions of node
voltages (:mod:`rram.expr`): the ngspice export prints them (a B-source; the NMOS as the
level-1 card whose square law :meth:`rram.netlist.Nmos.current` writes), the native
engine evaluates them and their symbolic derivatives over all cells at once with
:func:`evaluate`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..expr import Expr, as_expr, diff, safe_sinh, sym
from ..model import node_symbol
from ..netlist import Nmos
from ..printers.numpy_printer import evaluate_arrays as evaluate
from .spec import Selector, Transistor


def selector_current(selector: Selector, a: str, b: str) -> Expr:
    """I(a → b) = i0·sinh(V(a, b)/v0), with the safe exponential's linear tail."""
    v = sym(node_symbol(a)) - sym(node_symbol(b))
    return as_expr(selector.i0) * safe_sinh(v / as_expr(selector.v0))


def nmos_current(t: Transistor, d: str, g: str, s: str) -> Expr:
    """Drain current d → s of the square-law NMOS (:class:`rram.netlist.Nmos`)."""
    return Nmos("t", d, g, s, t.kp, t.wl, t.vto).current()


class Device:
    """A current expression between ``terminals`` (IR nodes), compiled to its value and
    its derivatives by each terminal voltage: :meth:`evaluate` over arrays of cells."""

    def __init__(self, current: Expr, terminals: Sequence[str]) -> None:
        self.terminals = tuple(terminals)
        self.current = current
        self.derivatives = [diff(current, node_symbol(t)) for t in self.terminals]

    def evaluate(self, voltages: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        env = {node_symbol(t): v for t, v in zip(self.terminals, voltages, strict=True)}
        out = evaluate([self.current, *self.derivatives], env)
        shape = np.shape(voltages[0])
        return (np.broadcast_to(out[0], shape),
                [np.broadcast_to(d, shape) for d in out[1:]])
