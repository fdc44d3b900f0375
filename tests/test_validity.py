"""What leaves the model's range of validity is reported, never silent (issue 36).

A 1R SET with 10 mA available up to 4 V heats the CF to 3100 K, past the oxide's melting
point, and fills the cell: before, nothing said so.  Every cycle table now carries the
column ``out_of_range`` (rram/validity.py), and the Monte Carlo and the CLI count it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rram.card import default_card
from rram.engine.run import simulate
from rram.engine.stimulus import dc_loops
from rram.metrics import loop_metrics
from rram.phenomena.common import set_sign
from rram.validity import CELL_FILL, OUT_OF_RANGE, STATE_TOLERANCE_NM, count_out_of_range


def test_a_10ma_set_to_4v_is_reported_outside_the_range():
    card = default_card()
    s = set_sign(card)
    res = simulate("compliance", [dc_loops(icc_set=10e-3, cycles=1, v_set=s * 4.0,
                                           v_reset=-s * 2.0)], cards=card)
    res.raise_on_failure()
    a = res.device_arrays(0)
    m = loop_metrics(res)
    filled = a["width_nm"].max() > 0.8 * card["wcf"] * 1e9
    hot = a["temperature_K"].max() > card["tvalid"]
    assert filled or hot
    assert count_out_of_range(m) == 1 and "tvalid" in m[OUT_OF_RANGE].iloc[0]


@pytest.mark.parametrize("v_set", [1.0, 1.5])
def test_an_lrs_that_a_10ma_set_grows_into_its_cell_is_reported_below_tvalid(v_set):
    """From the LRS, 10 mA at 1-1.5 V over-SETs the CF to the cell wall at 1081-1598 K:
    below tvalid, a hard breakdown all the same (the saturation does not stop a growth
    that fast)."""
    card = default_card().replace(x0=0.0, w0=6.31e-9)
    s = set_sign(card)
    res = simulate("compliance", [dc_loops(icc_set=10e-3, cycles=1, v_set=s * v_set,
                                           v_reset=-s * 2.0)], cards=card)
    res.raise_on_failure()
    a = res.device_arrays(0)
    assert a["temperature_K"].max() < card["tvalid"]
    assert a["width_nm"].max() > CELL_FILL * card["wcf"] * 1e9
    reason = loop_metrics(res)[OUT_OF_RANGE].iloc[0]
    assert "fills its cell" in reason and "tvalid" not in reason


def test_a_loop_inside_the_range_reports_nothing():
    res = simulate("compliance", [dc_loops(icc_set=100e-6, cycles=2)], cards=default_card())
    assert count_out_of_range(loop_metrics(res)) == 0


def test_the_monte_carlo_counts_the_device_cycles_out_of_range(tmp_path):
    from rram.mc import MonteCarlo
    from rram.mc.backend import run_mc
    from rram.mc.report import load_table
    from rram.validity import summary_line

    card = default_card().replace(tvalid=500.0)  # every SET runs above 500 K
    info = run_mc(MonteCarlo(card=card, devices=3, cycles=2, seed=1), tmp_path / "a.parquet",
                  progress=False)
    frame = load_table(info.out)
    assert count_out_of_range(frame) == len(frame) == 6
    assert "tvalid 500 K" in summary_line(frame)
    # judged once per cycle, at its hottest: the SET and the RESET both run above 500 K
    assert (frame[OUT_OF_RANGE].str.count("tvalid") == 1).all()
    # and the count is in the run's provenance
    sidecar = json.loads(info.out.with_name(info.out.name + ".json").read_text())
    assert sidecar["out_of_range_rows"] == 6 and sidecar["rows"] == 6


@pytest.mark.slow
def test_no_device_cycle_outside_the_range_goes_unreported():
    """Issue 36: 200 random DC loops within the ranges ``rram sweep`` accepts (|V| up to
    10 V, compliances 1 µA–100 mA, 1e2–1e6 V/s; before, 50 of them heated the CF above
    2000 K, up to 18 300 K, unreported).  Every converged device-cycle whose trace runs
    hotter than ``tvalid``, or whose phases end with a state beyond its bounds, carries
    the reason in ``out_of_range``; and none is reported that did not leave the range.
    The gap and the width stay within their bounds to 1e-3 nm all along the traces."""
    rng = np.random.default_rng(36)
    card = default_card()
    n = 200
    v_set = np.exp(rng.uniform(np.log(0.5), np.log(10.0), n))
    v_reset = -np.exp(rng.uniform(np.log(0.5), np.log(10.0), n))
    icc = np.exp(rng.uniform(np.log(1e-6), np.log(0.1), n))
    rate = np.exp(rng.uniform(np.log(1e2), np.log(1e6), n))
    stimuli = [dc_loops(float(a), float(b), float(r), 1, icc_set=float(i))
               for a, b, r, i in zip(v_set, v_reset, rate, icc, strict=True)]
    res = simulate("compliance", stimuli, cards=card)
    m = loop_metrics(res).set_index("device")
    tol = STATE_TOLERANCE_NM
    hot = outside = 0
    for d in m.index:
        a = res.device_arrays(d)
        ev_gap, ev_width = res.events["gap_end"][d], res.events["width_end"][d]
        too_hot = a["temperature_K"].max() > card["tvalid"]
        beyond = (np.any(ev_gap < -tol) or np.any(ev_gap > card["l0"] * 1e9 + tol)
                  or np.any(ev_width < card["wmin"] * 1e9 - tol)
                  or np.any(ev_width > CELL_FILL * card["wcf"] * 1e9))
        # the integrator's own peak (between output samples too)
        step_hot = card["tamb"] + res.events["dtmax"][d].max() > card["tvalid"]
        reason = m.loc[d, OUT_OF_RANGE]
        assert not too_hot or "tvalid" in reason, (d, reason)  # nothing unreported
        assert not beyond or "outside" in reason or "fills" in reason, (d, reason)
        assert bool(reason) == bool(step_hot or beyond), (d, reason)  # no false alarm
        hot += bool(too_hot)
        outside += bool(reason)
        # every kinetic rate holds its state on its bound (before: SETs parked the gap
        # at -0.0241 nm, RESETs of >= 7 V the width 0.0056 nm below wmin)
        gaps = np.r_[a["gap_nm"], ev_gap]
        widths = np.r_[a["width_nm"], ev_width]
        assert -tol <= np.nanmin(gaps) and np.nanmax(gaps) <= card["l0"] * 1e9 + tol, d
        assert card["wmin"] * 1e9 - tol <= np.nanmin(widths), d
        assert np.nanmax(widths) <= card["wcf"] * 1e9 + tol, d
    assert len(m) >= 0.95 * n  # converged
    assert hot >= 20 and outside >= hot  # the audit has cases to check


def test_sweep_strict_refuses_a_stimulus_out_of_range_and_writes_nothing(tmp_path):
    """`rram sweep --strict`: a 10 mA SET to 4 V is refused (exit 2, no file); a default
    loop passes; without --strict the rows are written with the warning."""
    from click.testing import CliRunner

    from rram.cli import main

    hot = ["sweep", "--v-set", "4", "--compliance", "0.01"]
    run = CliRunner().invoke(main, [*hot, "--strict", "--out", str(tmp_path / "a.csv")])
    assert run.exit_code == 2 and "range of validity" in run.output
    assert "tvalid" in run.output and not list(tmp_path.iterdir())
    run = CliRunner().invoke(main, [*hot, "--out", str(tmp_path / "b.csv")])
    assert run.exit_code == 0 and "warning: 1 of 1" in run.output
    assert (tmp_path / "b.csv").exists()
    run = CliRunner().invoke(main, ["sweep", "--strict", "--out", str(tmp_path / "c.csv")])
    assert run.exit_code == 0 and (tmp_path / "c.csv").exists()


def test_mc_strict_refuses_before_running_a_stimulus_its_nominal_device_leaves(tmp_path):
    """`rram mc --strict`: the nominal device is checked under the study's stimulus
    before any device runs; a 10 mA SET to 4 V is refused (exit 2, nothing written),
    the default study runs."""
    from click.testing import CliRunner

    from rram.cli import main
    from rram.experiment import DCLoop, nominal_excursion

    assert nominal_excursion(default_card(), DCLoop()) is None
    hot = DCLoop(v_set=4.0, icc_set=0.01)
    assert "tvalid" in nominal_excursion(default_card(), hot)
    study = ["mc", "--devices", "2", "--cycles", "1", "--seed", "1", "--strict"]
    run = CliRunner().invoke(main, [*study, "--v-set", "4", "--compliance", "0.01",
                                    "--out", str(tmp_path / "a.parquet")])
    assert run.exit_code == 2 and "nominal device" in run.output, run.output
    assert "tvalid" in run.output and not list(tmp_path.iterdir())
    run = CliRunner().invoke(main, [*study, "--out", str(tmp_path / "b.parquet")])
    assert run.exit_code == 0, run.output
    assert (tmp_path / "b.parquet").exists()
