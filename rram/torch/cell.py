"""The device as a differentiable torch module: a batch of cards, its branch flows, and
its static (DC) operating point with gradients by implicit differentiation.

The equations are the generated torch rendering (:mod:`rram.torch._device`, printed
from the same IR as every other rendering).  Card values live on the module as buffers,
so ``.to(device)`` and ``.to(dtype)`` move them; the names given as ``trainable`` are
``nn.Parameter``\\ s instead (calibration by gradient descent).  Nothing here assumes a
CPU: every tensor is created on the device and in the dtype of the module's values.

The static solve holds the states (gap, width) and solves the internal electrical nodes
and the CF temperature by Newton's method with SPICE-style step limiting, as
:func:`rram.engine.static.solve_static` does.  Its gradient is that of the solution, not
of the iterations: at the converged point ``y*`` one more Newton step ``y* − J⁻¹·F(y*)``
is taken with the graph attached, which leaves the value and carries the implicit
function theorem's derivative ``dy*/dθ = −J⁻¹·∂F/∂θ``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from ..card import Card, CardBatch
from ..engine.run import newton_limits
from ..engine.static import TIP_GUESSES
from ..errors import ConvergenceError, InputError
from ..model import GROUND
from . import _device

#: The unknowns of the static solve (the states dgap, dwidth are held).
UNKNOWNS = ("ti", "bi", "tip", "dtemp")
#: Newton: the convergence tolerance of each unknown, by unit (volts, kelvin), and the
#: iteration limit; the step limits and the tip voltage's first guesses are the Python
#: engine's (:func:`rram.engine.run.newton_limits`, :data:`rram.engine.static.TIP_GUESSES`).
TOLERANCE = {"V": 1e-9, "K": 1e-6}
MAX_ITERATIONS = 100


def _batch(cards: Card | Sequence[Card] | CardBatch) -> CardBatch:
    return CardBatch.of(cards) if not isinstance(cards, Card) else CardBatch.of(cards, 1)


class Cell(nn.Module):
    """A batch of RRAM devices (one per card) as a torch module.

    ``trainable``: parameter names held as ``nn.Parameter`` (the others are buffers);
    ``dtype``: float64 by default (float32 on request); ``device``: where the values
    live (``"cuda"`` where there is one)."""

    def __init__(self, cards: Card | Sequence[Card] | CardBatch, *,
                 trainable: Sequence[str] = (), dtype: torch.dtype = torch.float64,
                 device: torch.device | str | None = None):
        super().__init__()
        batch = _batch(cards)
        if tuple(batch.model.parameter_names) != _device.PARAMETERS:
            raise InputError("the cards' model is not the one rram/torch/_device.py was "
                             "generated from (run `rram generate`)")
        unknown = sorted(set(trainable) - set(_device.PARAMETERS))
        if unknown:
            raise InputError(f"trainable parameter(s) {', '.join(unknown)} are not "
                             f"parameters of the model; valid: {', '.join(_device.PARAMETERS)}")
        if dtype not in (torch.float32, torch.float64):
            raise InputError(f"dtype must be torch.float64 or torch.float32, got {dtype}")
        self.model = batch.model
        self.size = len(batch)
        layout = self.model.layout
        self._anchors = {node: layout.anchor(node) for node in ("dgap", "dwidth")}
        for name in _device.PARAMETERS:
            value = torch.tensor(np.array(batch[name], dtype=float).reshape(-1), dtype=dtype,
                                 device=device)
            if name in trainable:
                self.register_parameter(name, nn.Parameter(value))
            else:
                self.register_buffer(name, value)
        # what the traps at each CF leave of its path's conductance at this read
        # (rram.noise: 1 between reads that carry read noise)
        self.register_buffer("path_factor", torch.ones(self.size, dtype=dtype, device=device))

    @property
    def values(self) -> list[torch.Tensor]:
        """The parameters in the model's order, one tensor (batch,) each, the CF path's
        conductance times :attr:`path_factor` (:data:`rram.noise.PATH_CONDUCTANCE`)."""
        from ..noise import PATH_CONDUCTANCE

        out = []
        for n in _device.PARAMETERS:
            value = getattr(self, n)
            power = PATH_CONDUCTANCE.get(n)
            out.append(value if power is None else value * self.path_factor ** power)
        return out

    def _like(self) -> torch.Tensor:
        return self.values[0]

    def state_nodes(self, gap_nm: torch.Tensor, width_nm: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The state nodes' values (changes since x0, w0, in nm) of a gap and a width."""
        out = []
        for node, value in (("dgap", gap_nm), ("dwidth", width_nm)):
            anchor, scale = self._anchors[node]
            out.append(torch.as_tensor(value, dtype=self._like().dtype,
                                       device=self._like().device)
                       - getattr(self, anchor) / scale)
        return out[0], out[1]

    def flows(self, nodes: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Every branch's static flow at the node voltages ``nodes`` (all of
        :data:`rram.torch._device.NODES`, tensors that broadcast with the batch)."""
        return dict(zip(_device.BRANCHES, _device.device_flows(
            [nodes[n] for n in _device.NODES], self.values), strict=True))

    def outputs(self, nodes: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The operating-point outputs (power, rth, rates, ...) at ``nodes``."""
        return dict(zip(_device.OUTPUTS, _device.device_outputs(
            [nodes[n] for n in _device.NODES], self.values), strict=True))

    def _residual(self, y: torch.Tensor, fixed: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """KCL at each unknown (flows leaving it), for y (batch, 4)."""
        nodes = {**fixed, **{n: y[:, k] for k, n in enumerate(UNKNOWNS)}}
        flows = self.flows(nodes)
        out = []
        for node in UNKNOWNS:
            total = torch.zeros_like(y[:, 0])
            for b in self.model.branches:
                if b.p == node:
                    total = total + flows[b.name]
                if b.n == node and b.n != GROUND:
                    total = total - flows[b.name]
            out.append(total)
        return torch.stack(out, dim=1)

    def _jacobian(self, y: torch.Tensor, fixed: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """dF/dy per device (batch, 4, 4): devices are independent, so the gradient of
        each residual's batch sum is every device's row at once."""
        rows = []
        with torch.enable_grad():
            yg = y.detach().requires_grad_(True)
            f = self._residual(yg, {k: v.detach() for k, v in fixed.items()})
            for i in range(len(UNKNOWNS)):
                (g,) = torch.autograd.grad(f[:, i].sum(), yg, retain_graph=True)
                rows.append(g)
        return torch.stack(rows, dim=1)

    def static(self, v_cell: torch.Tensor | float, gap_nm: torch.Tensor | float,
               width_nm: torch.Tensor | float) -> dict[str, torch.Tensor]:
        """The DC operating point of each device at ``v_cell`` (te − be, V) with its
        gap and width (nm) held: ``current_A`` (into te), ``temperature_K`` and the
        solved ``nodes``; differentiable in the card values, the voltage and the states.
        Raises :class:`ConvergenceError` naming the first device Newton did not solve."""
        like = self._like()
        shape = (self.size,)

        def full(x):
            return torch.as_tensor(x, dtype=like.dtype, device=like.device).expand(shape)

        v, gap, width = full(v_cell), full(gap_nm), full(width_nm)
        dgap, dwidth = self.state_nodes(gap, width)
        fixed = {"te": v, "be": torch.zeros_like(v), "dgap": dgap, "dwidth": dwidth}
        layout = self.model.layout
        units = [layout.units[layout.unknown(n)] for n in UNKNOWNS]
        limits = newton_limits(layout)
        limit = torch.tensor([limits[layout.unknown(n)] for n in UNKNOWNS], dtype=like.dtype,
                             device=like.device)
        # the tolerances, or what the dtype resolves (float32: ~1e-5 V)
        eps = torch.finfo(like.dtype).eps
        scale = {"V": max(1.0, float(v.detach().abs().max())), "K": 1e3}
        tol = torch.tensor([max(TOLERANCE[u], 64 * eps * scale[u]) for u in units],
                           dtype=like.dtype, device=like.device)
        y = torch.zeros(self.size, len(UNKNOWNS), dtype=like.dtype, device=like.device)
        todo = torch.ones(self.size, dtype=torch.bool, device=like.device)
        with torch.no_grad():
            plain = {k: t.detach() for k, t in fixed.items()}
            for guess in TIP_GUESSES:
                if not bool(todo.any()):
                    break
                start = torch.stack([v, torch.zeros_like(v), guess * v, torch.zeros_like(v)],
                                    dim=1).detach()
                y = torch.where(todo[:, None], start, y)
                for _ in range(MAX_ITERATIONS):
                    f = self._residual(y, plain)
                    step = torch.linalg.solve(self._jacobian(y, plain), -f[..., None])[..., 0]
                    step = torch.clamp(step, -limit, limit)
                    step = torch.where(todo[:, None], step, torch.zeros_like(step))
                    step = torch.nan_to_num(step, nan=0.0)
                    y = y + step
                    small = (step.abs() <= tol).all(dim=1) & torch.isfinite(y).all(dim=1)
                    todo = todo & ~small
                    if not bool(todo.any()):
                        break
                else:
                    continue
        if bool(todo.any()):
            d = int(torch.nonzero(todo)[0])
            raise ConvergenceError(f"static solve of device {d} at {float(v[d]):g} V (gap "
                                   f"{float(gap[d]):g} nm, width {float(width[d]):g} nm) did "
                                   "not converge", analysis="op", device=d)
        # one Newton step with the graph: the same value, the implicit derivative
        f = self._residual(y, fixed)
        y = y - torch.linalg.solve(self._jacobian(y, plain), f[..., None])[..., 0]
        nodes = {**fixed, **{n: y[:, k] for k, n in enumerate(UNKNOWNS)}}
        current = self.flows(nodes)["br_ctop"]
        return {"current_A": current, "temperature_K": self.tamb + y[:, 3], "nodes": nodes}

    def read_resistance(self, v_read: float, gap_nm, width_nm) -> torch.Tensor:
        """R = v_read / I at the held state (Ω), differentiable."""
        return v_read / self.static(v_read, gap_nm, width_nm)["current_A"]


__all__ = ["MAX_ITERATIONS", "TOLERANCE", "UNKNOWNS", "Cell"]
