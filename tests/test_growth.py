"""Lateral growth saturates (issue 36): an LRS under an unlimited SET-polarity stress keeps
its resistance, while every compliance-limited loop is left as it was — on the default
card and on the fitted TUD card, and when the kinetics vary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rram.card import Card, default_card, load_card
from rram.engine.run import simulate
from rram.engine.static import read_resistance
from rram.engine.stimulus import constant_stress
from rram.experiment import DCLoop
from rram.fit.growth import MARGIN, SATURATION_OFF, calibrate_saturation, loop_hold
from rram.metrics import loop_metrics
from rram.phenomena.common import first_crossing_time

TUD = Path(__file__).resolve().parents[1] / "fitting/results/tud_H16248L_M12.card.json"
YEAR = 365.25 * 86400.0
HORIZON = 3e9  # s: ~95 years


def own_loop(card: Card) -> tuple[dict, dict]:
    """The LRS (gap, width in nm) and the metrics of the second cycle of the card's own
    protocol (its fitted one, else the default loop)."""
    p = DCLoop.from_meta(card.meta)
    res = simulate(p.circuit, p.stimulus(2), cards=card, circuit_params=p.circuit_params)
    res.raise_on_failure()
    a = res.device_arrays(0)
    last_set = (a["cycle"] == a["cycle"].max()) & (a["phase"] == "set")
    lrs = {"gap_nm": max(float(a["gap_nm"][last_set][-1]), 0.0),
           "width_nm": float(a["width_nm"][last_set][-1])}
    return lrs, loop_metrics(res).iloc[-1].to_dict()


def time_to_change_2x(card: Card, lrs: dict, volts: float) -> tuple[float, float]:
    """(Time, s, for R read at 0.1 V to change 2x either way under a constant ``volts``
    with no current limit — inf if it survives HORIZON; the widest CF reached, nm)."""
    held = card.replace(x0=lrs["gap_nm"] * 1e-9, w0=lrs["width_nm"] * 1e-9)
    res = simulate("resistor", [constant_stress(volts, HORIZON, samples_per_decade=10)],
                   cards=held)
    res.raise_on_failure()
    a = res.device_arrays(0)
    r0 = read_resistance([held], lrs["gap_nm"], lrs["width_nm"])[0]
    r = read_resistance([held] * len(a["time_s"]), a["gap_nm"], a["width_nm"])
    return first_crossing_time(a["time_s"], r / r0, 2.0), float(np.max(a["width_nm"]))


@pytest.fixture(scope="module", params=["default", "tud"])
def card(request) -> Card:
    return default_card() if request.param == "default" else load_card(TUD)


def test_an_unlimited_set_polarity_stress_keeps_the_lrs(card):
    """R within 2x, either way, for >= 1e6 s at V_set/2 and >= 10 years at V_set/3 (no
    current limit): the CF neither widens nor, self-heated (556 K at V_set/2 on the
    default card), narrows by the bake's diffusion."""
    lrs, m = own_loop(card)
    t_half_2, w_2 = time_to_change_2x(card, lrs, m["v_set_V"] / 2)
    t_half_3, w_3 = time_to_change_2x(card, lrs, m["v_set_V"] / 3)
    print(f"w_LRS {lrs['width_nm']:.3f} nm; V_set/2: t_half {t_half_2:.3g} s, widest "
          f"{w_2:.3f} nm; V_set/3: t_half {t_half_3:.3g} s, widest {w_3:.3f} nm")
    assert t_half_2 >= 1e6 and t_half_3 >= 10 * YEAR
    # the CF stops within 10 % of its LRS width, far from the cell wall
    assert max(w_2, w_3) <= MARGIN * lrs["width_nm"] < 0.8 * card["wcf"] * 1e9


def test_without_the_saturation_the_default_lrs_halves_at_v_set_over_2():
    """What the saturation stops (issue 36: R halved in 16 s)."""
    free = default_card().replace(**SATURATION_OFF)
    lrs, m = own_loop(free)
    t_half, widest = time_to_change_2x(free, lrs, m["v_set_V"] / 2)
    assert t_half < 1e3 and widest > 1.3 * lrs["width_nm"]


@pytest.mark.parametrize("change", [{"ea": 1.60}, {"dea": -0.1}, {"dea": 0.1}, {"kth": 4000.0},
                                    {"kw": 0.1}, {"fw": 1.4}, {"rtop": 60.0}])
def test_the_saturation_leaves_the_loop_alone_when_the_kinetics_vary(change):
    """A bound placed in the growth rate stays above every hold (a bound in the temperature
    did not: docs/design/self-limiting-growth.md)."""
    card = default_card().replace(**change)
    _, bound = own_loop(card)
    _, free = own_loop(card.replace(**SATURATION_OFF))
    for key in ("r_lrs_ohm", "r_hrs_ohm"):
        assert bound[key] == pytest.approx(free[key], rel=2e-3), key
    assert bound["v_set_V"] == pytest.approx(free["v_set_V"], abs=2e-3)


def test_the_default_card_follows_the_calibration_rule():
    calibrated, info = calibrate_saturation(default_card())
    d = default_card()
    assert calibrated["wsat"] == pytest.approx(d["wsat"], rel=0.01)
    assert calibrated["rsat"] == pytest.approx(d["rsat"], rel=0.01)
    assert info["wsat_m"] == pytest.approx(MARGIN * info["lrs_width_nm"] * 1e-9)


def test_the_tud_card_carries_its_own_saturation():
    tud = load_card(TUD)
    calibrated, info = calibrate_saturation(tud)
    assert tud["wsat"] == pytest.approx(calibrated["wsat"], rel=1e-6)
    assert tud["rsat"] == pytest.approx(calibrated["rsat"], rel=1e-6)
    # its fitted loop at 0.34 V/s holds ~2000x slower than the default loop
    assert info["hold_rate_m_per_s"] < 1e-3 * default_card()["rsat"]


def test_a_set_that_barely_widens_the_cf_is_held_at_its_fastest_growth():
    t = np.linspace(0.0, 1.0, 11)
    w = 5.0 + np.array([0, 0, 1, 4, 2, 0.5, 0.2, 0.1, 0, 0, 0]).cumsum() * 1e-4
    rate, widest = loop_hold(t, w)
    assert rate == pytest.approx(4e-4 * 1e-9 / 0.1) and widest == pytest.approx(w[-1])
    assert np.isnan(loop_hold(t, np.full_like(t, 5.0))[0])  # no growth: no bound
