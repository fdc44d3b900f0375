"""SET-failure episodes (issue 38: failures come in runs, and their share and run length
are fitted): the spec's entry, its draws, the runs of a record and the fit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from rram.card import default_card
from rram.episodes import Episodes
from rram.errors import InputError
from rram.fit.carriers import protocol_of
from rram.fit.episodes import failing_raise, failure_runs, fit_episodes
from rram.mc import MonteCarlo, run_devices
from rram.mc.draws import draw, slow_paths
from rram.variation import Variation, VariationSpec, default_variation


def _spec(episodes: Episodes | None = None) -> VariationSpec:
    return VariationSpec((Variation("dea", "c2c", "normal", 0.05),), episodes=episodes)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"share": 0.0, "length": 5}, r"share must be a number within \(0, 1\), got 0"),
    ({"share": 1.2, "length": 5}, r"share must be"),
    ({"share": 0.1, "length": 0.5}, r"length must be a number of cycles within \[1, "),
    ({"share": 0.1, "length": 5, "step": 0}, r"step must be a finite number other than 0"),
    ({"share": 0.1, "length": 5, "step": float("inf")}, r"step must be"),
    ({"share": 0.9, "length": 1, "step": 1.0}, r"entry probability of 9 per cycle"),
])
def test_episodes_refuse_what_no_record_can_be(kwargs, match):
    with pytest.raises(InputError, match=match):
        Episodes(**{"parameter": "dea", "step": 0.5, **kwargs})


def test_a_spec_s_episodes_raise_a_parameter_it_redraws_at_each_set():
    with pytest.raises(InputError, match=r"'kth' is no parameter the spec redraws at each "
                                         r"SET \(valid: dea\)"):
        _spec(Episodes(0.05, 5.0, "kth", 0.5))
    with pytest.raises(InputError, match=r"'l0' is no parameter .* \(valid: dea, rtop\)"):
        VariationSpec((Variation("dea", "c2c", "normal", 0.05),
                       Variation("rtop", "c2c", "lognormal", 0.1),
                       Variation("l0", "c2c", "normal", 1e-11)),
                      episodes=Episodes(0.05, 5.0, "l0", 1e-10))
    spec = _spec(Episodes(0.05, 5.0, "dea", 0.5))
    assert VariationSpec.from_json(spec.to_json()) == spec
    bad = spec.to_json().replace('"length": 5.0', '"length": "long"')
    with pytest.raises(InputError, match=r"spec: episodes: length must be a number"):
        VariationSpec.from_json(bad, "spec")


def test_episodes_last_their_length_and_fill_their_share():
    spec = _spec(Episodes(0.04, 8.0, "dea", 0.5))
    inside = slow_paths(spec, 3, range(300), 2000)[:, :, -1] > 0.5
    assert inside.mean() == pytest.approx(0.04, rel=0.08)
    frame = pd.DataFrame({"device": np.repeat(np.arange(300), 2000),
                          "cycle": np.tile(np.arange(2000), 300),
                          "reason": np.where(inside.ravel(), "no_set", "")})
    runs = failure_runs(frame)
    assert np.mean(runs) == pytest.approx(8.0, rel=0.08)


def test_only_the_sets_inside_an_episode_draw_the_raised_barrier():
    spec = _spec(Episodes(0.3, 4.0, "dea", 0.5))
    paths = slow_paths(spec, 1, range(400), 3)
    inside = paths[:, 2, -1] > 0.5
    plain = draw(_spec(), {"dea": 0.0}, 1, range(400), 2, "set")
    sets = draw(spec, {"dea": 0.0}, 1, range(400), 2, "set", slow=paths[:, 2])
    resets = draw(spec, {"dea": 0.0}, 1, range(400), 2, "reset", slow=paths[:, 2])
    assert 50 < inside.sum() < 200
    np.testing.assert_allclose(sets["dea"][inside], 0.5)  # the centre (0) raised
    assert np.ptp(plain["dea"][inside]) > 0.05  # where the draws scatter
    np.testing.assert_array_equal(sets["dea"][~inside], plain["dea"][~inside])
    np.testing.assert_array_equal(resets["dea"],
                                  draw(_spec(), {"dea": 0.0}, 1, range(400), 2, "reset")["dea"])


def test_failure_runs_follow_each_device_in_cycle_order():
    frame = pd.DataFrame({
        "device": ["a"] * 8 + ["b"] * 4,
        "cycle": [3, 1, 2, 4, 5, 6, 7, 8, 1, 2, 3, 4],
        "reason": ["no_set", "", "no_set", "no_set+no_reset", "", "no_reset", "no_set",
                   "no_set", "no_set", "", "", "no_set"]})
    assert failure_runs(frame) == [3, 2, 1, 1]
    assert failure_runs(frame.drop(columns="reason")) == []


def _loop(v_set: float):
    return dataclasses.replace(protocol_of(default_card()), v_set=v_set)


def _hrs_card():
    """The default card, its cell formed into the HRS (below ~1.5 V the pristine cell of
    the default card does not form)."""
    return default_card().replace(state=2)


def test_the_raise_that_fails_a_cycled_set_is_found_within_the_barrier_s_range():
    """The default card's median device SETs at 0.83 V and its V_set rises 0.70 V/eV
    with dea: a 1.2 V SET fails from ~+0.53 eV; at 2 V it would need +1.7 eV, beyond
    dea's range (0.7 eV)."""
    card, spec = _hrs_card(), default_variation()
    assert failing_raise(card, spec, _loop(1.2)) == pytest.approx(0.53, abs=0.03)
    assert failing_raise(card, spec, _loop(2.0)) is None
    assert failing_raise(card, spec, _loop(0.5)) == 0.0  # it never SETs


@pytest.mark.slow
def test_episodes_fitted_to_a_simulated_record_give_back_its_share_and_length():
    """A round trip at a 1.2 V SET: the default card and spec with episodes (5 % of the
    cycles, 6 cycles long) simulated as 12 devices x 300 cycles; the spec without them and
    that record give back the share, the length (within the ~30 episodes' noise) and
    the step."""
    card, base, loop = _hrs_card(), default_variation(), _loop(1.2)
    step = failing_raise(card, base, loop) + 3 * 0.05
    truth = Episodes(0.05, 6.0, "dea", step)
    runs = {name: run_devices(MonteCarlo(card=card, spec=spec, devices=12, cycles=300,
                                         seed=5, burn_in=1, protocol=loop), range(12))
            for name, spec in (("record", dataclasses.replace(base, episodes=truth)),
                               ("plain", base))}
    failed, modelled = (runs[k]["reason"].str.contains("no_set").mean()
                        for k in ("record", "plain"))
    assert failed == pytest.approx(0.05, rel=0.35) and modelled < 0.005, (failed, modelled)
    got = fit_episodes(runs["record"], card, base, loop, modelled)
    assert got.share == pytest.approx(truth.share, rel=0.35)
    assert got.length == pytest.approx(truth.length, rel=0.35)
    assert got.step == pytest.approx(truth.step, abs=1e-6)


def test_the_contact_step_reads_as_the_record_s_failed_cycles():
    """The TUD record's failed cycles read 1.2–2.4 MΩ in both states: a contact raised to
    their median less the HRS median reads so; a record whose failed cycles read as its
    HRS has no contact step."""
    import math

    from rram.card import load_card
    from rram.fit.data import load_distribution
    from rram.fit.episodes import contact_step
    from rram.generate import REPO_DIR
    from rram.metrics import did_not_switch
    from rram.variation import load_variation

    card = load_card(REPO_DIR / "fitting/results/tud_H16248L_M12.card.json")
    spec = load_variation(REPO_DIR / "fitting/results/tud_H16248L_M12.variation.json")
    record = load_distribution(REPO_DIR / "fitting/data/tud_H16248L_M12/"
                               "tud_H16248L_M12_distribution.csv")
    failed = did_not_switch(record["reason"])
    r_failed = record.loc[failed, "resistance_ohm"].median()
    r_hrs = record.loc[~failed & (record["state"] == "HRS"), "resistance_ohm"].median()
    centre = card["rtop"] * math.exp(sum(v.shift for v in spec.variations
                                         if v.parameter == "rtop"))
    step = contact_step(record, card, spec)
    assert centre * math.exp(step) == pytest.approx(r_failed - r_hrs, rel=1e-9)
    assert 1e6 < r_failed - r_hrs < 2e6
    flat = record.copy()
    flat.loc[failed, "resistance_ohm"] = r_hrs
    assert contact_step(flat, card, spec) is None
