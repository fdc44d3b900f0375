"""Read noise in the torch rendering (issues 39, 40): an analog layer's reads meet the
cells' traps, on the layer's device, reproducibly, with the isolated reads' statistics,
and the torch crossbar scales each cell's CF path as the native array engine does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rram.array.cells import cell_parameters
from rram.array.read import solve_read
from rram.array.spec import ArraySpec
from rram.card import default_card
from rram.noise import with_trap_factor
from rram.torch.analog import AnalogLinear
from rram.torch.crossbar import Crossbar

NOISY = ArraySpec(card=default_card().replace(ntrap=10.0))


def _layer(spec, engine="crossbar", ideal=False, seed=1):
    g = torch.Generator().manual_seed(0)
    return AnalogLinear(torch.randn(3, 4, generator=g), spec=spec, seed=seed, engine=engine,
                        ideal=ideal)


@pytest.mark.parametrize(("engine", "ideal"), [("crossbar", False), ("linear", False),
                                               ("crossbar", True)])
def test_each_read_meets_the_traps_and_a_seed_repeats_them(engine, ideal):
    x = torch.rand(5, 4, generator=torch.Generator().manual_seed(1))
    layer = _layer(NOISY, engine, ideal)
    first, second = layer.hardware(x), layer.hardware(x)
    assert layer.read_noise and float((first - second).abs().max()) > 0.01
    assert torch.equal(_layer(NOISY, engine, ideal).hardware(x), first)
    quiet = _layer(ArraySpec(), engine, ideal)
    assert not quiet.read_noise and torch.equal(quiet.hardware(x), quiet.hardware(x))


def test_the_draws_have_the_isolated_reads_statistics():
    """2000 reads of a 4 x 6 layer's cells: ln of the conductance factor has mean 0 and
    σ = Δ·√(mean traps)/2 per cell, within 5 %."""
    layer = _layer(NOISY, ideal=True)
    ln_f = torch.log(torch.stack([layer.path_factor() for _ in range(2000)]))
    expected = layer.trap_blocked * torch.sqrt(layer.trap_mean) / 2
    assert float(ln_f.mean(0).abs().max()) < 0.05 * float(expected.min())
    np.testing.assert_allclose(ln_f.std(0), expected, rtol=0.05)


def test_the_torch_crossbar_scales_each_cells_path_as_the_array_engine_does():
    """The same cell-by-cell factors in the torch read (its cells' path_factor) and in
    the native array read (the cards scaled by rram.noise.with_trap_factor): the column
    currents agree to 1e-9."""
    from rram.array.cells import named_pattern, pattern_states

    spec = ArraySpec(rows=4, cols=6, card=NOISY.card)
    states = pattern_states(named_pattern("checkerboard", (4, 6)), spec.card)
    factor = np.random.default_rng(2).uniform(0.7, 1.3, 24)
    cards = cell_parameters(spec)
    bar = Crossbar(spec, states, params=cards)
    bar.cells.path_factor = torch.as_tensor(factor)
    v = torch.full((4,), 0.1, dtype=torch.float64)
    _, _, op = solve_read(spec, 0.1, states, 1.8, 0.0, with_trap_factor(cards, factor))
    from rram.array.build import output_sources

    native = -op.i_source[output_sources(spec)]
    np.testing.assert_allclose(bar(v).numpy(), native, rtol=1e-9)
