"""The static read of a crossbar in torch (1R, 1S1R, 1T1R): nonlinear cells, access
devices, resistive wires, drivers and sense resistances, with gradients by implicit
differentiation.

The array is the one :func:`rram.array.build.build` defines (the native engines and the
ngspice deck come from the same :class:`~rram.array.circuit.Circuit`): its resistors,
its grounded sources (row drivers, column sense voltages) and its cells, each cell the
device of :class:`rram.torch.Cell` at its held state.  Newton's method solves every free
net; each cell is condensed to its current and differential conductance at the voltage
across it (the cell's own static solve, batched over the cells).  The Jacobian is dense,
so the read suits tiles (the module refuses arrays whose Jacobian would exceed
:data:`MAX_UNKNOWNS` unknowns); its gradient is that of the solution, by one Newton step
taken with the graph at the converged point, as in :meth:`rram.torch.Cell.static`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..array.build import build, output_sources
from ..array.cells import States
from ..array.circuit import GND
from ..array.read import V_GATE_ON
from ..array.spec import ArraySpec
from ..card import CardBatch
from ..constants import NM
from ..errors import ConvergenceError, InputError
from ..expr import evaluate
from ..model import node_symbol
from ..printers.torch_printer import SPELLINGS
from . import _device
from .cell import Cell

#: The IR's functions as torch callables, from the torch printer's spellings (the
#: access devices' currents are evaluated from their IR on the tensors).
TORCH_FUNCTIONS = {name: eval("lambda u: " + spelling.format("u"), {
    "torch": torch, "EXP_LIMIT": _device.EXP_LIMIT, "safe_exp": _device.safe_exp,
    "softplus": _device.softplus, "pos_sq": _device.pos_sq}) for name, spelling in
    SPELLINGS.items()}

#: Largest number of free nets of a dense Newton solve (a 4000² float64 Jacobian is
#: 128 MB): a 32 x 32 array with one wire segment per pitch has ~2 100.
MAX_UNKNOWNS = 4000
#: Newton on the nets: the largest step (V), the convergence tolerance (V), iterations.
MAX_STEP_V = 0.5
VTOL = 1e-12
MAX_ITERATIONS = 60


class Crossbar(nn.Module):
    """A crossbar of ``spec`` (1R, 1S1R or 1T1R) with its cells at ``states`` (default:
    each card's x0/w0) as a module: ``forward(v_rows, v_cols=0, v_gates=None)`` gives
    the current each column delivers into its sense amplifier (A).  ``trainable``: card
    parameters of the cells held as ``nn.Parameter``\\ s."""

    def __init__(self, spec: ArraySpec, states: States | None = None, *,
                 params: CardBatch | None = None, trainable: tuple[str, ...] = (),
                 dtype: torch.dtype = torch.float64,
                 device: torch.device | str | None = None):
        super().__init__()
        c = build(spec, 0.0, states, params=params)
        free = np.setdiff1d(np.arange(c.n_nets), c.src)
        if free.size > MAX_UNKNOWNS:
            raise InputError(f"a {spec.rows} x {spec.cols} array with {spec.segments} wire "
                             f"segment(s) per pitch has {free.size} free nets; the dense "
                             f"torch read takes at most {MAX_UNKNOWNS} (use tiles, or "
                             "rram.array.read)")
        self.spec = spec
        self.cells = Cell(c.cell_cards, trainable=trainable, dtype=dtype, device=device)

        def index(a):
            # ground (GND = -1) is the last entry of the full voltage vector
            a = np.where(np.asarray(a) == GND, c.n_nets, a)
            return torch.as_tensor(a, dtype=torch.long, device=device)

        self.register_buffer("res", index(c.res), persistent=False)
        self.register_buffer("conductance", torch.as_tensor(1.0 / c.ohms, dtype=dtype,
                                                            device=device))
        self.register_buffer("cell_nets", index(c.cells), persistent=False)
        self.register_buffer("src", index(c.src), persistent=False)
        self.register_buffer("free", index(free), persistent=False)
        self.register_buffer("gap_nm", torch.as_tensor(
            np.asarray(c.cell_cards["x0"]) / NM, dtype=dtype, device=device))
        self.register_buffer("width_nm", torch.as_tensor(
            np.asarray(c.cell_cards["w0"]) / NM, dtype=dtype, device=device))
        # access devices (selectors, transistors): one IR current per group, with its
        # derivatives by each terminal, evaluated on the tensors
        self._groups = [(g.device.current, g.device.derivatives, g.device.terminals)
                        for g in c.groups]
        for k, g in enumerate(c.groups):
            self.register_buffer(f"group{k}", index(g.nodes), persistent=False)
        sources = np.arange(c.src.size)
        self._outputs = torch.as_tensor(sources[output_sources(spec)], dtype=torch.long,
                                        device=device)
        self._n_nets = c.n_nets
        self._n_rows = spec.rows

    def _volts(self, v_rows, v_cols, v_gates) -> torch.Tensor:
        """The sources' voltages in the circuit's order: rows, gates (1T1R), columns."""
        like = self.conductance
        m, n = self.spec.rows, self.spec.cols

        def full(x, k):
            return torch.as_tensor(x, dtype=like.dtype, device=like.device).expand(k)

        gates = [full(V_GATE_ON if v_gates is None else v_gates, m)] \
            if self.spec.topology == "1t1r" else []
        return torch.cat([full(v_rows, m), *gates, full(v_cols, n)])

    def _devices(self, v: torch.Tensor, derivatives: bool = False):
        """Each group's (nodes, currents out of its first terminal into its last, and
        the currents' derivatives by each terminal if asked)."""
        out = []
        for k, (current, derivs, terminals) in enumerate(self._groups):
            nodes = getattr(self, f"group{k}")
            env = {node_symbol(t): v[nodes[:, j]] for j, t in enumerate(terminals)}
            vals = evaluate([current, *(derivs if derivatives else [])], env,
                            TORCH_FUNCTIONS, bind=lambda x: x)
            like = env[node_symbol(terminals[0])]
            out.append((nodes, like * 0 + vals[0], [like * 0 + d for d in vals[1:]]))
        return out

    def _leaving(self, v: torch.Tensor, i_cell: torch.Tensor) -> torch.Tensor:
        """The current leaving every net (and ground, last) through the resistors, the
        cells and the access devices."""
        out = torch.zeros_like(v)
        i_res = (v[self.res[:, 0]] - v[self.res[:, 1]]) * self.conductance
        out = out.index_add(0, self.res[:, 0], i_res).index_add(0, self.res[:, 1], -i_res)
        te, be = self.cell_nets[:, 0], self.cell_nets[:, 1]
        out = out.index_add(0, te, i_cell).index_add(0, be, -i_cell)
        for nodes, i_dev, _ in self._devices(v):
            out = out.index_add(0, nodes[:, 0], i_dev).index_add(0, nodes[:, -1], -i_dev)
        return out

    def _cells(self, v: torch.Tensor) -> torch.Tensor:
        v_cell = v[self.cell_nets[:, 0]] - v[self.cell_nets[:, 1]]
        return self.cells.static(v_cell, self.gap_nm, self.width_nm)["current_A"]

    def _condensed(self, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each cell's current and differential conductance at ``v`` (no graph), from
        one static solve of the cells."""
        with torch.enable_grad():
            vc = (v[self.cell_nets[:, 0]] - v[self.cell_nets[:, 1]]).detach()
            vc.requires_grad_(True)
            i = self.cells.static(vc, self.gap_nm, self.width_nm)["current_A"]
            (g_cell,) = torch.autograd.grad(i.sum(), vc)
        return i.detach(), g_cell.detach()

    def _jacobian(self, g_cell: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """d(current leaving each free net)/d(free net voltages), dense, with the cells
        at their differential conductances ``g_cell`` and the devices at ``v``."""
        like = self.conductance
        n = self._n_nets + 1
        J = torch.zeros(n, n, dtype=like.dtype, device=like.device)
        te, be = self.cell_nets[:, 0], self.cell_nets[:, 1]
        for (a, b), g in (((self.res[:, 0], self.res[:, 1]), self.conductance),
                          ((te, be), g_cell)):
            for p, q, s in ((a, a, 1.0), (b, b, 1.0), (a, b, -1.0), (b, a, -1.0)):
                J.index_put_((p, q), s * g, accumulate=True)
        for nodes, _, derivs in self._devices(v, derivatives=True):
            for t, d in enumerate(derivs):  # out of the first terminal, into the last
                J.index_put_((nodes[:, 0], nodes[:, t]), d, accumulate=True)
                J.index_put_((nodes[:, -1], nodes[:, t]), -d, accumulate=True)
        return J[self.free][:, self.free]

    def solve(self, v_rows, v_cols=0.0, v_gates=None) -> dict[str, torch.Tensor]:
        """The operating point of a read: ``v_nets`` (every net, ground last),
        ``v_cell`` and ``i_cell`` (per cell, row-major) and ``i_col`` (A, into each
        column's sense amplifier); 1T1R gates at ``v_gates`` (V, default
        :data:`rram.array.read.V_GATE_ON` on every row)."""
        like = self.conductance
        sources = self._volts(v_rows, v_cols, v_gates)
        v = torch.zeros(self._n_nets + 1, dtype=like.dtype, device=like.device)
        # VTOL, or what the dtype resolves at these voltages (float32: ~1e-5 V)
        tol = max(VTOL, 64 * torch.finfo(like.dtype).eps
                  * max(1.0, float(sources.detach().abs().max())))
        with torch.no_grad():
            v = v.index_copy(0, self.src, sources.detach())
            for _ in range(MAX_ITERATIONS):
                i_cell, g_cell = self._condensed(v)
                f = self._leaving(v, i_cell)[self.free]
                step = torch.linalg.solve(self._jacobian(g_cell, v), -f)
                v = v.index_add(0, self.free, torch.clamp(step, -MAX_STEP_V, MAX_STEP_V))
                if float(step.abs().max()) < tol:
                    break
            else:
                last = float(step.abs().max())
                raise ConvergenceError(f"crossbar read did not converge in {MAX_ITERATIONS} "
                                       f"Newton iterations (last step {last:.3g} V)",
                                       analysis="op")
            J = self._jacobian(self._condensed(v)[1], v)
        # the graph: sources and cards enter here; one Newton step at the solution
        v = v.index_copy(0, self.src, sources)
        f = self._leaving(v, self._cells(v))[self.free]
        v = v.index_add(0, self.free, -torch.linalg.solve(J, f))
        i_cell = self._cells(v)
        supplied = self._leaving(v, i_cell)[self.src]  # what each source drives in
        v_cell = v[self.cell_nets[:, 0]] - v[self.cell_nets[:, 1]]
        return {"v_nets": v, "v_cell": v_cell, "i_cell": i_cell,
                "i_col": -supplied[self._outputs]}

    def forward(self, v_rows, v_cols=0.0, v_gates=None) -> torch.Tensor:
        """The column currents (A) of a read with rows at ``v_rows`` (V)."""
        return self.solve(v_rows, v_cols, v_gates)["i_col"]


__all__ = ["MAX_UNKNOWNS", "Crossbar"]
