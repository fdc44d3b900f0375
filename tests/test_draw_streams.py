"""The vectorised seeding of the draw streams is numpy's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from rram.card import default_card
from rram.mc.draws import _apply, _generators, _stream, draw, draw_d2d
from rram.variation import Variation, VariationSpec, default_variation


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 + 7, 2**70 + 3])
@pytest.mark.parametrize("cycle,event", [(0, "d2d"), (0, "set"), (41, "reset")])
def test_each_generator_is_numpys_stream(seed, cycle, event):
    devices = [0, 1, 2, 999, 123456, 2**32 - 1]
    for dev, rng in zip(devices, _generators(seed, devices, cycle, event), strict=True):
        ref = _stream(seed, dev, cycle, event)
        assert np.array_equal(rng.standard_normal(6), ref.standard_normal(6)), dev


def slow_draw(spec, base, seed, devices, cycle, event):
    """The draws one normal at a time from numpy's own streams (the definition)."""
    from rram.card import PARAMETERS

    by = {p.name: p for p in PARAMETERS}
    out = {}
    for kind, cyc, ev in (("d2d", 0, "d2d"), ("c2c", cycle, event)):
        for i, dev in enumerate(devices):
            rng = _stream(seed, dev, cyc, ev)
            for v in spec.of_kind(kind):
                row = out.setdefault(v.parameter, np.full(len(devices), base[v.parameter]))
                while True:
                    value = _apply(v, row[i], float(rng.standard_normal()))
                    if by[v.parameter].lower <= value <= by[v.parameter].upper:
                        row[i] = value
                        break
    return out


def test_draws_equal_the_one_at_a_time_definition_with_redraws():
    base = dict(default_card().values)
    # dei's σ of 0.4 eV against its ±0.5 eV range: many draws are redrawn
    spec = VariationSpec((*(v for v in default_variation().variations
                            if (v.parameter, v.kind) != ("dei", "d2d")),
                          Variation("dei", "d2d", "normal", 0.4, "wide"),
                          Variation("kw", "c2c", "lognormal", 3.0, "wide")))
    devices = list(range(0, 300, 3))
    fast = draw(spec, base, 7, devices, 5, "set")
    slow = slow_draw(spec, base, 7, devices, 5, "set")
    assert fast.keys() == slow.keys()
    for k in fast:
        assert np.array_equal(fast[k], slow[k]), k
    d2d = draw_d2d(spec, base, 7, devices)
    assert np.array_equal(d2d["dei"], slow_draw(
        VariationSpec(spec.of_kind("d2d")), base, 7, devices, 0, "set")["dei"])
