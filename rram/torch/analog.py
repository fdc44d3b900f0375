"""``AnalogLinear``: a linear layer whose weights live in a simulated 1R crossbar.

weights → differential conductance pairs within the card's programmable range →
programmed into the cells (write-verify to the target: each cell's gap set so that it
reads its target at the read voltage, with that cell's card, the verify leaving a
residual error within a tolerance) → read through the crossbar (:class:`Crossbar`:
nonlinear cells, wire IR drop, sneak paths) at inputs encoded as row voltages → ADC
quantisation of the column currents → output.  The forward pass is the simulated
hardware; the backward pass is the ideal layer's (straight-through), so a network can
be trained with the hardware in its forward passes.

A card with traps (``ntrap`` > 0, :mod:`rram.noise`) gives each read its read noise:
every input vector is a read far from the last, each cell's CF path scaled by what its
traps block at that read (a Poisson number of traps, each occupied with probability ½),
drawn on the layer's device from its seed and the read's index.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch
from torch import nn

from ..array.build import build, output_sources
from ..array.cells import States, cell_parameters
from ..array.read import chord_conductance
from ..array.solve import LinearSolver
from ..array.spec import ArraySpec
from ..card import CardBatch
from ..constants import NM
from ..engine.static import read_resistance
from ..errors import InputError
from ..noise import trap_blocked, trap_count_mean, with_trap_factor
from ..states import programmed
from .crossbar import Crossbar

#: Bisection steps of the programming (the gap interval halves each step).
PROGRAM_STEPS = 60
#: How a layer reads its array (:class:`AnalogLinear`).
ENGINES = ("crossbar", "linear")
#: The spawn key's tag of a layer's read-noise draws: (read, READ_NOISE).
READ_NOISE = 8


def conductance_range(spec: ArraySpec, v_read: float) -> tuple[float, float]:
    """(G_min, G_max) (S): the nominal card's programmed HRS and LRS read at
    ``v_read``: the range a weight pair is mapped into."""
    card = spec.card
    states = [programmed(card, w) for w in ("hrs", "lrs")]
    r = read_resistance([card, card], np.array([s[0] for s in states]),
                        np.array([s[1] for s in states]), v_read)
    return float(1.0 / r[0]), float(1.0 / r[1])


def program(cards: CardBatch, g_target: np.ndarray, v_read: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """The states (gap, width in nm; flat, one per card) in which each cell reads
    ``g_target`` (S) at ``v_read``: the width of its card's programmed LRS, the gap by
    bisection between the LRS gap and the layer's thickness (conductance falls with the
    gap).  A target beyond what the cell reaches ends at that end."""
    width = np.asarray(cards["wlrs"]) / NM
    lo = np.asarray(cards["xlrs"]) / NM
    hi = np.asarray(cards["l0"]) / NM
    for _ in range(PROGRAM_STEPS):
        mid = 0.5 * (lo + hi)
        g = 1.0 / read_resistance(cards, mid, width, v_read)
        high = g > g_target  # still too conductive: a wider gap
        lo = np.where(high, mid, lo)
        hi = np.where(high, hi, mid)
    return 0.5 * (lo + hi), width


class AnalogLinear(nn.Module):
    """``y = W·x + b`` computed by a crossbar of ``spec``'s wires and cells.

    ``weight`` (out, in) is mapped to pairs of columns: G± = G_min + (G_max − G_min)·
    max(±W/w_max, 0), w_max = max |W|.  Inputs in [−x_max, x_max] become row voltages
    up to ``v_read`` (two reads for signed inputs).  ``adc_bits`` quantise each column
    current over [0, the largest current a column can carry].  ``verify_tolerance``:
    the relative error write-verify leaves, drawn per cell from ``seed``.
    ``ideal=True`` reads linear devices through ideal wires (the mapping and the ADC
    alone).  ``engine``: ``"crossbar"`` reads the nonlinear cells through the wires in
    torch (:class:`Crossbar`, dense: tiles of up to ~32 x 16 outputs);
    ``"linear"`` each cell at its chord conductance at ``v_read`` through the wires by
    the native array engine's sparse solver (:func:`rram.array.vmm`'s, factorised once:
    any size, CPU; with read noise it factorises again at every read).  ``read_noise``:
    each read meets the cells' traps (default: when the card has traps)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, *,
                 spec: ArraySpec | None = None, v_read: float = 0.1, x_max: float = 1.0,
                 adc_bits: int = 8, verify_tolerance: float = 0.02, seed: int = 0,
                 ideal: bool = False, engine: str = "crossbar",
                 read_noise: bool | None = None):
        super().__init__()
        w = weight.detach().to(torch.float64)
        if w.ndim != 2:
            raise InputError(f"weight must be (out, in), got shape {tuple(w.shape)}")
        out_f, in_f = w.shape
        spec = replace(spec or ArraySpec(), rows=in_f, cols=2 * out_f)
        if not (0 < v_read <= 0.3 and x_max > 0 and 1 <= adc_bits <= 24
                and 0 <= verify_tolerance < 0.5):
            raise InputError("AnalogLinear needs 0 < v_read <= 0.3 V (a read, not a write), "
                             "x_max > 0, 1 <= adc_bits <= 24 and 0 <= verify_tolerance < 0.5")
        if engine not in ENGINES:
            raise InputError(f"engine {engine!r}: valid are {', '.join(ENGINES)}")
        self.v_read, self.x_max, self.adc_bits, self.ideal = v_read, x_max, adc_bits, ideal
        self.engine = engine
        # trained by the straight-through backward; program() moves them into the cells
        self.weight = nn.Parameter(w.clone())
        self.bias = None if bias is None else nn.Parameter(bias.detach().to(w.dtype).clone())
        self.spec, self.seed, self.verify_tolerance = spec, seed, verify_tolerance
        self.read_noise = bool(spec.card["ntrap"] > 0) if read_noise is None else read_noise
        self.reads = 0
        self.g_min, self.g_max = conductance_range(spec, v_read)
        self.program()

    def program(self) -> None:
        """Write the current weights into the cells (write-verify to each target)."""
        w = self.weight.detach()
        self.w_max = float(w.abs().max()) or 1.0
        span = (self.g_max - self.g_min) / self.w_max
        pos, neg = (self.g_min + span * torch.clamp(s * w, min=0) for s in (1.0, -1.0))
        # columns 2j and 2j+1: the pair of output j; rows: inputs
        target = torch.stack([pos, neg], dim=1).reshape(-1, w.shape[1]).T.contiguous()
        rng = np.random.default_rng(self.seed)
        verify = 1.0 + self.verify_tolerance * rng.uniform(-1.0, 1.0, target.shape)
        g_cells = target.numpy() * verify
        # the mapping's targets, and what write-verify left in the cells
        self.register_buffer("target", target.clone())
        self.register_buffer("conductance", torch.as_tensor(g_cells))
        self.i_full = float(self.v_read * g_cells.sum(axis=0).max())
        cards = self._cards = cell_parameters(self.spec)
        if self.read_noise or not self.ideal:
            gap, width = program(cards, g_cells.reshape(-1), self.v_read)
        if self.read_noise:
            # each cell's traps: their mean number and the share of its CF one blocks
            self.register_buffer("trap_mean", torch.as_tensor(np.broadcast_to(
                np.asarray(trap_count_mean(cards), float), (len(cards),)).copy()))
            self.register_buffer("trap_blocked", torch.as_tensor(
                np.array(trap_blocked(cards, gap, width), float)))
        if not self.ideal:
            # cells whose target lies beyond the conductance their own card reaches
            # (a D2D draw): they end at their LRS
            lrs = np.asarray(cards["xlrs"]) / NM
            self.unreached = int(np.sum(np.isclose(gap, lrs, rtol=0, atol=1e-9)))
            self.states = States(gap.reshape(self.spec.shape), width.reshape(self.spec.shape))
            if self.engine == "crossbar":
                self.crossbar = Crossbar(self.spec, self.states, params=cards)
            else:
                c = build(self.spec, 0.0, self.states, params=cards)
                g = chord_conductance(self.spec, self.states, self.v_read, params=cards)
                self.solver, self._outputs = LinearSolver(c, g), output_sources(self.spec)
                self._sources = len(c.src)

    def path_factor(self) -> torch.Tensor:
        """The next read's conductance factor of every cell's CF path (rows × cols,
        flattened), drawn on the layer's device from its seed and the read's index."""
        key = np.random.SeedSequence(self.seed, spawn_key=(self.reads, READ_NOISE))
        self.reads += 1
        device = self.trap_blocked.device
        gen = torch.Generator(device=device)
        gen.manual_seed(int(key.generate_state(1, np.uint64)[0] >> np.uint64(1)))
        count = torch.poisson(self.trap_mean, generator=gen)
        occupied = torch.binomial(count, torch.full_like(count, 0.5), generator=gen)
        return torch.exp(-self.trap_blocked * (occupied - 0.5 * count))

    def _read(self, v: torch.Tensor) -> torch.Tensor:
        """The column currents of one read of the input vector ``v`` (rows,)."""
        factor = self.path_factor() if self.read_noise else None
        if self.ideal:
            g = self.conductance if factor is None else \
                self.conductance * factor.to(self.conductance).reshape(self.conductance.shape)
            return v @ g
        if self.engine == "crossbar":
            if factor is not None:
                self.crossbar.cells.path_factor = factor.to(self.crossbar.cells.path_factor)
            return self.crossbar(v)
        solver = self.solver
        if factor is not None:
            cards = with_trap_factor(self._cards, factor.cpu().numpy())
            g = chord_conductance(self.spec, self.states, self.v_read, params=cards)
            solver = LinearSolver(build(self.spec, 0.0, self.states, params=cards), g)
        volts = np.zeros((self._sources, 1))
        volts[: self.spec.rows, 0] = v.detach().cpu().numpy()
        _, i_src = solver.solve(volts)
        return torch.as_tensor(-i_src[self._outputs, 0], dtype=v.dtype, device=v.device)

    def _columns(self, v_rows: torch.Tensor) -> torch.Tensor:
        if self.read_noise or (not self.ideal and self.engine == "crossbar"):
            return torch.stack([self._read(v) for v in v_rows])  # a read per vector
        if self.ideal:
            return v_rows @ self.conductance
        volts = np.zeros((self._sources, v_rows.shape[0]))
        volts[: self.spec.rows] = v_rows.detach().cpu().numpy().T
        _, i_src = self.solver.solve(volts)
        return torch.as_tensor(-i_src[self._outputs].T, dtype=v_rows.dtype,
                               device=v_rows.device)

    def _adc(self, i_col: torch.Tensor) -> torch.Tensor:
        lsb = self.i_full / (2 ** self.adc_bits - 1)
        return torch.clamp(torch.round(i_col / lsb), 0, 2 ** self.adc_bits - 1) * lsb

    def hardware(self, x: torch.Tensor) -> torch.Tensor:
        """The simulated layer's output for inputs ``x`` (batch, in), no gradient."""
        with torch.no_grad():
            x = torch.clamp(x.to(torch.float64), -self.x_max, self.x_max) / self.x_max
            out = 0.0
            for sign in (1.0, -1.0):  # signed inputs: a read of each part
                part = torch.clamp(sign * x, min=0) * self.v_read
                if not bool(part.any()):
                    continue
                i = self._adc(self._columns(part))
                diff = i[:, 0::2] - i[:, 1::2]
                out = out + sign * diff
            y = out * self.w_max * self.x_max / (self.v_read * (self.g_max - self.g_min))
            if self.bias is not None:
                y = y + self.bias
            return y

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ideal = nn.functional.linear(x.to(torch.float64), self.weight, self.bias)
        return ideal + (self.hardware(x) - ideal).detach()


class TiledLinear(nn.Module):
    """A weight matrix larger than one array, mapped onto tiles of ``tile`` = (inputs,
    outputs) each: an :class:`AnalogLinear` per tile (its own cells, scale and ADC),
    the tiles' outputs summed digitally; the backward pass is the whole ideal layer's.
    ``seed`` + the tile's index seeds each tile's draws."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, *,
                 tile: tuple[int, int] = (64, 32), seed: int = 0, **layer):
        super().__init__()
        w = weight.detach().to(torch.float64)
        rows, outs = tile
        if rows < 1 or outs < 1:
            raise InputError(f"tile must be (inputs, outputs) >= 1, got {tile}")
        self.weight = nn.Parameter(w.clone())
        self.bias = None if bias is None else nn.Parameter(bias.detach().to(w.dtype).clone())
        self.blocks = [(o, i) for o in range(0, w.shape[0], outs)
                       for i in range(0, w.shape[1], rows)]
        self.tile = tile
        self.tiles = nn.ModuleList(
            AnalogLinear(w[o:o + outs, i:i + rows], None, seed=seed + k, **layer)
            for k, (o, i) in enumerate(self.blocks))

    def program(self) -> None:
        """Write the current weights into every tile."""
        rows, outs = self.tile
        for t, (o, i) in zip(self.tiles, self.blocks, strict=True):
            with torch.no_grad():
                t.weight.copy_(self.weight[o:o + outs, i:i + rows])
            t.program()

    def hardware(self, x: torch.Tensor) -> torch.Tensor:
        rows, outs = self.tile
        y = torch.zeros(x.shape[0], self.weight.shape[0], dtype=torch.float64,
                        device=x.device)
        for t, (o, i) in zip(self.tiles, self.blocks, strict=True):
            y[:, o:o + outs] += t.hardware(x[:, i:i + rows])
        return y if self.bias is None else y + self.bias.detach()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ideal = nn.functional.linear(x.to(torch.float64), self.weight, self.bias)
        return ideal + (self.hardware(x) - ideal).detach()


__all__ = ["ENGINES", "AnalogLinear", "TiledLinear", "conductance_range", "program"]
