"""What leaves the model's range of validity is reported, never silent (issue 36).

A 1R SET with 10 mA available up to 4 V heats the CF to 3100 K, past the oxide's melting
point, and fills the cell: before, nothing said so.  Every cycle table now carries the
column ``out_of_range`` (rram/validity.py), and the Monte Carlo and the CLI count it.
"""

from __future__ import annotations

from rram.card import default_card
from rram.engine.run import simulate
from rram.engine.stimulus import dc_loops
from rram.metrics import loop_metrics
from rram.phenomena.common import set_sign
from rram.validity import OUT_OF_RANGE, count_out_of_range


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
