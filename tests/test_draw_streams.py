"""The vectorised seeding of the draw streams is numpy's, bit for bit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rram.card import default_card
from rram.mc.draws import _apply, _generators, _stream, draw, draw_d2d
from rram.variation import Mode, Variation, VariationSpec, default_variation


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 + 7, 2**70 + 3])
@pytest.mark.parametrize("cycle,event", [(0, "d2d"), (0, "set"), (41, "reset")])
def test_each_generator_is_numpys_stream(seed, cycle, event):
    devices = [0, 1, 2, 999, 123456, 2**32 - 1]
    for dev, rng in zip(devices, _generators(seed, devices, cycle, event), strict=True):
        ref = _stream(seed, dev, cycle, event)
        assert np.array_equal(rng.standard_normal(6), ref.standard_normal(6)), dev


def slow_draw(spec, base, seed, devices, cycle, event):
    """The draws one normal at a time from numpy's own streams (the definition)."""
    from rram.model import MODEL

    by = {p.name: p for p in MODEL.parameters}
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
    # dei's σ of 0.8 eV against its ±1 eV range: many draws are redrawn
    spec = VariationSpec((*(v for v in default_variation().variations
                            if (v.parameter, v.kind) != ("dei", "d2d")),
                          Variation("dei", "d2d", "normal", 0.8, "wide"),
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


SLOW = VariationSpec((Variation("dea", "c2c", "normal", 0.1, slow=0.8, memory=50.0),
                      Variation("deh", "c2c", "normal", 0.1)))


def test_a_slow_part_drifts_without_changing_the_distribution():
    """z = √(1−s)·ε + √s·u with u an AR(1) path: still standard normal over devices and
    cycles, lag-1 correlation s·φ (φ = e^(−1/memory)); the entry without one stays
    independent from cycle to cycle."""
    from rram.mc.draws import slow_paths

    base = dict(default_card().values)
    paths = slow_paths(SLOW, 3, range(300), 200)
    dea = np.array([draw(SLOW, base, 3, range(300), c, "set", slow=paths[:, c])["dea"]
                    for c in range(200)]) / 0.1
    deh = np.array([draw(SLOW, base, 3, range(300), c, "set", slow=paths[:, c])["deh"]
                    for c in range(200)]) / 0.1
    assert dea.std() == pytest.approx(1.0, abs=0.03)
    lag1 = np.corrcoef(dea[:-1].ravel(), dea[1:].ravel())[0, 1]
    assert lag1 == pytest.approx(0.8 * np.exp(-1 / 50), abs=0.02)
    assert abs(np.corrcoef(deh[:-1].ravel(), deh[1:].ravel())[0, 1]) < 0.02
    assert np.all(paths[:, :, 1] == 0)  # deh has no slow part


def test_a_slow_draw_depends_on_its_own_device_and_cycle_only():
    """The path at cycle k comes from the device's cycles 0..k: a draw alone, in another
    chunk or with the paths computed for the whole run is the same value."""
    from rram.mc.draws import slow_paths

    base = dict(default_card().values)
    paths = slow_paths(SLOW, 5, range(10), 30)
    alone = draw(SLOW, base, 5, [7, 2], 29, "reset")
    chunk = draw(SLOW, base, 5, range(10), 29, "reset", slow=paths[:, 29])
    assert np.array_equal(alone["dea"], chunk["dea"][[7, 2]])
    assert np.array_equal(slow_paths(SLOW, 5, [7], 30)[0], paths[7])


def test_a_spec_without_slow_parts_reads_and_writes_as_before():
    import json

    text = default_variation().to_json()
    assert "slow" not in text and "memory" not in text
    data = json.loads(SLOW.to_json())["variations"]
    assert data[0]["slow"] == 0.8 and data[0]["memory"] == 50.0 and "slow" not in data[1]
    assert VariationSpec.from_json(SLOW.to_json()) == SLOW



MODES = VariationSpec((Variation("rtop", "c2c", "lognormal", 0.1, mode_step=1.0),
                       Variation("dei", "c2c", "normal", 0.01, mode_step=0.2),
                       Variation("dea", "c2c", "normal", 0.01)),
                      Mode(share=0.3, memory=100.0))


def test_a_mode_puts_its_share_of_cycles_in_the_upper_configuration_and_lasts():
    """30 % of the cycles are in the upper configuration: every entry with a mode_step
    moves there together (rtop by 1 in ln, dei by 0.2 eV), the others do not, and a
    device stays in it for many cycles (its configuration correlates as e^(-k/100))."""
    from rram.mc.draws import slow_paths

    base = dict(default_card().values)
    paths = slow_paths(MODES, 2, range(200), 100)
    draws = [draw(MODES, base, 2, range(200), c, "set", slow=paths[:, c]) for c in range(100)]
    ln = np.log(np.array([d["rtop"] for d in draws]) / base["rtop"])
    dei = np.array([d["dei"] for d in draws]) - base["dei"]
    dea = np.array([d["dea"] for d in draws]) - base["dea"]
    upper = ln > 0.5
    assert upper.mean() == pytest.approx(0.3, abs=0.05)
    assert np.median(ln[upper]) == pytest.approx(1.0, abs=0.03)
    assert np.median(ln[~upper]) == pytest.approx(0.0, abs=0.03)
    assert np.array_equal(upper, dei > 0.1)  # one configuration for every entry
    assert abs(np.median(dea[upper]) - np.median(dea[~upper])) < 0.005
    assert np.mean(upper[1:] != upper[:-1]) < 0.05  # independent cycles: 42 %
    # a Markov chain whose configuration correlates as exp(-k/memory)
    state = paths[:, :, -2].T  # the configuration (the episodes' column is last)
    lag = np.corrcoef(state[:-10].ravel(), state[10:].ravel())[0, 1]
    assert lag == pytest.approx(np.exp(-10 / 100), abs=0.05)
    # the one-at-a-time definition
    assert _apply(MODES.variations[0], base["rtop"], 0.0, 0.0, True) == pytest.approx(
        base["rtop"] * np.e)
    # a spec without a mode draws what it drew before the mode path existed
    assert np.all(slow_paths(SLOW, 2, range(5), 3)[:, :, -2:] == 0)


def test_a_mode_step_needs_the_specs_mode_and_a_c2c_entry():
    from rram.errors import InputError

    with pytest.raises(InputError, match="needs the spec's mode"):
        VariationSpec((Variation("rtop", "c2c", "lognormal", 0.1, mode_step=1.0),))
    with pytest.raises(InputError, match="no entry has a mode_step"):
        VariationSpec((Variation("rtop", "c2c", "lognormal", 0.1),), Mode(0.3, 10.0))
    with pytest.raises(InputError, match="only a c2c entry"):
        Variation("rtop", "d2d", "lognormal", 0.1, mode_step=1.0)
    with pytest.raises(InputError, match="shift \\+ mode_step"):
        Variation("rtop", "c2c", "lognormal", 0.1, mode_step=40.0)
    for share, memory in ((0.0, 10.0), (1.0, 10.0), (0.3, 0.0), (0.3, -1.0)):
        with pytest.raises(InputError, match="mode: "):
            Mode(share, memory)
    assert VariationSpec.from_json(MODES.to_json()) == MODES
    assert "mode" not in SLOW.to_json()
    with pytest.raises(InputError, match="mode: "):
        VariationSpec.from_json(MODES.to_json().replace('"share": 0.3', '"share": 2'))


def test_a_mode_scale_narrows_an_entry_in_the_upper_configuration_only():
    """``mode_scale`` multiplies an entry's σ in the upper configuration (the TUD cell
    scatters less there); the lower configuration draws what it drew without it."""
    from rram.errors import InputError
    from rram.mc.draws import slow_paths

    scaled = VariationSpec((Variation("rtop", "c2c", "lognormal", 0.2, mode_step=1.0,
                                      mode_scale=0.25),
                            Variation("dei", "c2c", "normal", 0.01, mode_step=0.2)),
                           Mode(share=0.3, memory=100.0))
    plain = VariationSpec((replace(scaled.variations[0], mode_scale=1.0),
                           scaled.variations[1]), scaled.mode)
    base = dict(default_card().values)
    paths = slow_paths(scaled, 3, range(400), 20)
    ln = {name: np.log(np.array([draw(spec, base, 3, range(400), c, "set",
                                      slow=paths[:, c])["rtop"] for c in range(20)])
                       / base["rtop"]) for name, spec in (("scaled", scaled), ("plain", plain))}
    upper = paths[:, :, -2].T.astype(bool)
    assert np.array_equal(ln["scaled"][~upper], ln["plain"][~upper])
    spread = {k: np.std(v[upper]) for k, v in ln.items()}
    assert spread["plain"] == pytest.approx(0.2, rel=0.1)
    assert spread["scaled"] == pytest.approx(0.05, rel=0.1)
    assert VariationSpec.from_json(scaled.to_json()) == scaled
    assert "mode_scale" not in plain.to_json()
    for bad in (0.0, -1.0, 11.0, float("nan")):
        with pytest.raises(InputError, match="mode_scale"):
            Variation("rtop", "c2c", "lognormal", 0.2, mode_scale=bad)
    with pytest.raises(InputError, match="only a c2c entry"):
        Variation("rtop", "d2d", "lognormal", 0.2, mode_scale=0.5)
    with pytest.raises(InputError, match="needs the spec's mode"):
        VariationSpec((Variation("rtop", "c2c", "lognormal", 0.2, mode_scale=0.5),))
