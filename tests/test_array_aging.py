"""Issue 39: an array read a time after it was written (rram.array.aging): the relaxation
drifts its reads in log-time at the slope its parameters set, faster in a bake, the
states carried into every array engine and the exported deck."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rram.array import ArraySpec, read
from rram.array.aging import states_after_programming
from rram.array.cells import (
    States,
    cell_parameters,
    named_pattern,
    pattern_states,
    with_states,
)
from rram.card import default_card
from rram.errors import InputError
from rram.model import relaxing_model

RELAXING = default_card(relaxing_model()).replace(urel=0.5e-9)
SPEC = ArraySpec(rows=3, cols=3, card=RELAXING)
PATTERN = named_pattern("checkerboard", SPEC.shape)
TIMES = (1.0, 10.0, 100.0, 1e3, 1e4)


@pytest.fixture(scope="module")
def aged():
    return {t: states_after_programming(SPEC, PATTERN, t) for t in (0.0, *TIMES)}


def test_the_disorder_falls_by_lrel_ln10_per_decade(aged):
    u = np.array([aged[t].carried["u0"] for t in TIMES])  # m
    per_decade = -np.diff(u, axis=0)
    # every cell, LRS and HRS, in the log-linear regime from 1 s on (docs/model.md §10)
    assert per_decade == pytest.approx(RELAXING["lrel"] * math.log(10.0), rel=0.1)
    # the write quenched it: far above what the wait leaves
    assert np.all(aged[0.0].carried["u0"] > u[-1] + 2 * per_decade.mean())


def test_the_reads_rise_with_the_time_after_programming(aged):
    cols = np.array([read(SPEC, [0.1] * 3, aged[t]).i_col for t in TIMES])
    assert np.all(np.diff(cols, axis=0) > 0)  # the gap's hopping length relaxes: R falls
    # log-linear: equal steps per decade within 20 %
    steps = np.diff(np.log(cols), axis=0)
    assert steps.max() / steps.min() < 1.2
    # the LRS/HRS pattern survives: the checkerboard's columns read apart
    fresh = read(SPEC, [0.1, 0.0, 0.0], aged[1e4]).i_col
    lrs, hrs = fresh[0], fresh[1]  # row 0: LRS at column 0, HRS at column 1
    assert lrs / hrs > 5


def test_a_bake_relaxes_sooner():
    cold = states_after_programming(SPEC, PATTERN, 100.0)
    hot = states_after_programming(SPEC, PATTERN, 100.0, bake_c=85.0)
    assert np.all(hot.carried["u0"] < cold.carried["u0"] - RELAXING["lrel"])


def test_the_default_model_holds_its_states_at_room_temperature():
    spec = ArraySpec(rows=2, cols=2)
    pattern = named_pattern("checkerboard", spec.shape)
    now = states_after_programming(spec, pattern, 0.0)
    later = states_after_programming(spec, pattern, 1e4)
    assert not now.carried and not later.carried
    np.testing.assert_allclose(later.gap_nm, now.gap_nm, atol=1e-6)
    # the writes put the pattern: LRS gaps closed, HRS gaps open
    assert np.all(now.gap_nm[pattern] < 0.1) and np.all(now.gap_nm[~pattern] > 1.0)


def test_carried_states_reach_the_cards_and_are_checked():
    states = pattern_states(PATTERN, RELAXING)
    u = np.full(SPEC.shape, 0.2e-9)
    cards = with_states(SPEC, cell_parameters(SPEC),
                        States(states.gap_nm, states.width_nm, {"u0": u}))
    assert np.all(cards["u0"] == 0.2e-9)
    with pytest.raises(InputError, match="has no state for"):
        plain = ArraySpec(rows=3, cols=3)
        with_states(plain, cell_parameters(plain),
                    States(states.gap_nm, states.width_nm, {"u0": u}))
    with pytest.raises(InputError, match="differ in shape"):
        States(states.gap_nm, states.width_nm, {"u0": np.zeros((2, 2))})


@pytest.mark.parametrize("bad, match", [({"after_s": -1.0}, "time after programming"),
                                        ({"after_s": 1e12}, "time after programming"),
                                        ({"bake_c": 900.0}, "bake temperature")])
def test_bad_waits_are_refused(bad, match):
    kw = {"after_s": 1.0, **bad}
    with pytest.raises(InputError, match=match):
        states_after_programming(SPEC, PATTERN, **kw)
    with pytest.raises(InputError, match="data pattern has shape"):
        states_after_programming(SPEC, np.ones((2, 2), bool))


def test_the_array_commands_read_after_a_wait(tmp_path):
    """``--after`` (and ``--bake``) on every array command: the read of a card that
    relaxes rises with the wait."""
    import pandas as pd

    from rram.cli import main

    card = tmp_path / "relax.json"
    card.write_text(RELAXING.to_json())
    currents = []
    for after in ("1", "10000"):
        out = tmp_path / f"r{after}.csv"
        main(["array", "read", "--rows", "2", "--cols", "2", "--pattern", "all-hrs",
              "--card", str(card), "--after", after, "--out", str(out)],
             standalone_mode=False)
        currents.append(pd.read_csv(out)["i_cell_A"].to_numpy())
    assert np.all(currents[1] > currents[0])


@pytest.mark.ngspice
@pytest.mark.parametrize("kind", ["subckt", pytest.param("osdi", marks=pytest.mark.veriloga)])
def test_the_exported_deck_reads_the_relaxed_cells_as_the_native_engine(aged, kind):
    """The frozen cell exposes every programmed state, the disorder among them: ngspice
    reads it at u0 (before, only gap and width were ports, and the .op moved the
    disorder to its equilibrium: 11 % more current)."""
    from rram.array.build import build, output_sources
    from rram.array.export import frozen_osdi, render
    from rram.array.solve import operating_point
    from rram.spice.ngspice import NgspiceSession

    c = build(SPEC, [0.1, 0.08, 0.06], aged[1e3])
    session = NgspiceSession.get()
    if kind == "osdi":
        path = frozen_osdi(RELAXING.model)
        session.load_osdi(path)
        deck = render(c, "osdi", path, in_deck_osdi=False)
    else:
        deck = render(c, "subckt")
    assert "u0=" in deck
    native = -operating_point(c).i_source[slice(output_sources(SPEC).start,
                                                output_sources(SPEC).stop)]
    vec = session.run(deck).vectors
    spice = np.array([float(vec[f"i(vout{j})"][0]) for j in range(SPEC.cols)])
    np.testing.assert_allclose(spice, native, rtol=1e-4)


def test_each_cell_drifts_at_its_own_drawn_lrel():
    """A D2D spread of lrel (the variation streams, per cell): each cell's disorder falls
    by its own lrel·ln 10 per decade (within 1 %)."""
    from rram.variation import Variation, VariationSpec

    model = RELAXING.model
    spread = VariationSpec((Variation("lrel", "d2d", "lognormal", 0.3, model=model),),
                           model=model)
    spec = ArraySpec(rows=3, cols=3, card=RELAXING, variation=spread, seed=4)
    early = states_after_programming(spec, PATTERN, 10.0).carried["u0"]
    late = states_after_programming(spec, PATTERN, 1e3).carried["u0"]
    lrel = cell_parameters(spec)["lrel"].reshape(spec.shape)
    assert np.ptp(lrel) / np.median(lrel) > 0.3  # the cells do differ
    np.testing.assert_allclose((early - late) / 2, lrel * math.log(10.0), rtol=0.01)
