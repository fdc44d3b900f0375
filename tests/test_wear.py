"""Wear-out (issue 39): the optional block, its endurance runs (every cycle and with cycle
jumps), the closure its parameters set, its failure modes, its fit, and its renderings."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rram.card import Card, default_card, load_card
from rram.engine.run import simulate
from rram.engine.stimulus import PulseCycle, dc_loops
from rram.errors import CardError, InputError
from rram.fit.endurance_fit import EnduranceRecord, fit_endurance
from rram.mc.endurance import (
    NO_WINDOW,
    STUCK_HRS,
    STUCK_LRS,
    Endurance,
    closure_cycle,
    cycled_in_one_run,
    failure_of,
    run_endurance,
)
from rram.mc.run import MonteCarlo, run_devices
from rram.model import wearing_model
from rram.variation import VariationSpec


def wearing(**values) -> Card:
    return Card.of(wearing_model(), values)


def test_wear_off_is_the_default_model():
    """kwear = 0 at wear0 = 0 and xres = l0: a DC loop's current is the default model's."""
    st = dc_loops(2.0, -2.0, 1e3, 1)
    a = simulate("compliance", st, cards=default_card()).device_arrays(0)
    b = simulate("compliance", st, cards=wearing()).device_arrays(0)
    assert np.allclose(a["current_A"], b["current_A"], rtol=1e-9, atol=1e-15)
    assert np.all(b["wear"] == 0.0)


def test_the_reservoir_cannot_exceed_the_layer():
    with pytest.raises(CardError, match="xres"):
        wearing(xres=4e-9)


def test_window_closes_at_the_cycle_its_parameters_set():
    """Every cycle simulated: R_HRS falls to R_LRS at the law's cycle, R_LRS stays."""
    card = wearing(kwear=3e6)
    law = closure_cycle(card)
    result = run_endurance(Endurance(card=card, cycles=600, skip=False))
    failure = result.failures().iloc[0]
    assert failure["mode"] == STUCK_LRS
    assert failure["closure_cycle"] == pytest.approx(law["closure_cycle"], rel=0.2)
    t = result.table
    before = t[t["cycle"] < 0.8 * law["onset_cycle"]]
    assert before["window"].min() > 10  # the window holds until the onset
    assert t["r_lrs_ohm"].max() / t["r_lrs_ohm"].min() < 1.15  # the LRS stays
    assert t["r_hrs_ohm"].iloc[-1] < t["r_hrs_ohm"].iloc[5] / 5  # the HRS falls to it


@pytest.mark.slow
def test_cycle_jumps_agree_with_every_cycle():
    """The jumps over 2000 cycles: the closure cycle within 2 %, the window within 5 % at
    every cycle the jumps simulated."""
    card = wearing(kwear=1e6)
    full = run_endurance(Endurance(card=card, cycles=2000, skip=False))
    jumps = run_endurance(Endurance(card=card, cycles=2000))
    assert len(jumps.table) < len(full.table) / 4
    closure = [r.failures()["closure_cycle"].iloc[0] for r in (full, jumps)]
    assert closure[1] == pytest.approx(closure[0], rel=0.02)
    ref = full.table.set_index("cycle")["window"]
    got = jumps.table.set_index("cycle")["window"]
    assert np.allclose(got, ref.loc[got.index], rtol=0.05)


def test_ews_ends_stuck_in_the_hrs():
    """A SET barrier that the depletion raises fails the SET before the window closes."""
    hrs = run_endurance(Endurance(card=wearing(kwear=3e7, ews=4.0), cycles=30, skip=False))
    lrs = run_endurance(Endurance(card=wearing(kwear=3e7), cycles=60, skip=False))
    f_hrs, f_lrs = hrs.failures().iloc[0], lrs.failures().iloc[0]
    assert f_hrs["mode"] == STUCK_HRS and f_lrs["mode"] == STUCK_LRS
    assert f_hrs["closure_cycle"] < f_lrs["closure_cycle"]
    stuck = hrs.table[hrs.table["cycle"] >= f_hrs["closure_cycle"]]
    assert (stuck["r_lrs_ohm"] > 20 * hrs.table["r_lrs_ohm"].iloc[0]).all()


def test_a_million_cycles_and_the_variation():
    """Jumps make 1e6 cycles a few hundred simulated ones; D2D variation of kwear spreads
    the closure, reproducibly from the seed."""
    card = wearing(kwear=3e4)
    one = run_endurance(Endurance(card=card, cycles=10**6))
    assert one.table["cycle"].max() < 10**6 <= one.table["cycle"].max() + one.table["jump"].iloc[-1]
    assert len(one.table) < 2000
    law = closure_cycle(card)["closure_cycle"]
    assert one.failures()["closure_cycle"].iloc[0] == pytest.approx(law, rel=0.05)
    spec = VariationSpec.from_json(
        '{"variations": [{"parameter": "kwear", "kind": "d2d", "distribution": '
        '"lognormal", "sigma": 0.3}]}', model=card.model)
    study = Endurance(card=card, cycles=3 * 10**5, devices=4, spec=spec, seed=3)
    a, b = run_endurance(study), run_endurance(study)
    pd.testing.assert_frame_equal(a.table, b.table)
    closures = a.failures()["closure_cycle"]
    assert closures.notna().all() and closures.max() > 1.2 * closures.min()


def test_endurance_rejects_bad_studies():
    with pytest.raises(InputError, match="cycles"):
        Endurance(card=wearing(), cycles=0)
    with pytest.raises(InputError, match="max_wear_step"):
        Endurance(card=wearing(), max_wear_step=5.0)
    with pytest.raises(InputError, match="kwear"):
        closure_cycle(default_card())


def test_the_monte_carlo_carries_the_wear():
    """DC loops in the Monte Carlo: the wear each loop leaves closes the next's window."""
    card = wearing(kwear=2e7)
    f = run_devices(MonteCarlo(card=card, spec=VariationSpec((), model=card.model),
                               devices=1, cycles=14), [0])
    assert f["r_hrs_ohm"].iloc[13] < 0.6 * f["r_hrs_ohm"].iloc[4]
    assert f["r_lrs_ohm"].iloc[13] == pytest.approx(f["r_lrs_ohm"].iloc[4], rel=0.05)


def test_fit_endurance_gives_back_a_synthetic_record():
    """kwear and xres within 15 % (a record log-spaced as instruments keep it); the fit of
    the cycles before the closure predicts the closure it never saw within 15 %."""
    truth = wearing(kwear=3e5, xres=2.5e-9)
    record = run_endurance(Endurance(card=truth, cycles=20000)).table
    closed = record[record["window"] < 2.0]["cycle"].iloc[0]
    keep = np.unique(np.geomspace(1, len(record), 60).astype(int) - 1)
    fit = fit_endurance(EnduranceRecord.of(record.iloc[keep][["cycle", "r_lrs_ohm",
                                                              "r_hrs_ohm"]]), default_card())
    assert fit.kwear == pytest.approx(3e5, rel=0.15)
    assert fit.xres == pytest.approx(2.5e-9, rel=0.15)
    assert fit.mode == STUCK_LRS
    early = record[record["cycle"] < 0.7 * closed].rename(
        columns={"r_lrs_ohm": "LRS", "r_hrs_ohm": "HRS"})
    held_out = fit_endurance(EnduranceRecord.of(early), default_card())
    assert closure_cycle(held_out.card)["closure_cycle"] == pytest.approx(closed, rel=0.15)


@pytest.mark.slow
def test_fit_endurance_finds_ews_of_a_stuck_hrs_record():
    truth = wearing(kwear=3e6, ews=4.0)
    record = run_endurance(Endurance(card=truth, cycles=200)).table
    with pytest.raises(InputError, match="kwear > 0"):  # ews alone does not set kwear
        fit_endurance(EnduranceRecord.of(record), default_card())
    fit = fit_endurance(EnduranceRecord.of(record), wearing(kwear=3e6))
    assert fit.mode == STUCK_HRS
    assert fit.ews == pytest.approx(4.0, rel=0.15)


def test_endurance_record_errors_name_the_column():
    with pytest.raises(InputError, match="r_hrs"):
        EnduranceRecord.of(pd.DataFrame({"cycle": [1], "lrs": [1e3]}))
    with pytest.raises(InputError, match="row 2"):
        EnduranceRecord.of(pd.DataFrame({"cycle": [1, 2], "lrs": [1e3, np.nan],
                                         "hrs": [1e4, 1e4]}))


def _assert_wears_alike(got: pd.DataFrame, ref: pd.DataFrame, fresh_gap: float) -> None:
    """The wear after every RESET within 1 %, its gap within 2 % of the fresh gap."""
    assert np.allclose(got["wear"], ref["wear"], rtol=0.01, atol=1e-4)
    assert np.max(np.abs(got["gap_hrs_nm"].to_numpy() - ref["gap_hrs_nm"].to_numpy())) \
        < 0.02 * fresh_gap


#: The fresh LRS a cycled cell starts from; at kwear 3e6 /m its window closes (R_HRS/R_LRS
#: below rram.mc.endurance.CLOSED_WINDOW) near cycle 360.
FRESH = {"x0": 0.0, "w0": 5.7e-9}


@pytest.mark.slow
def test_the_osdi_module_wears_as_the_python_engine_over_1000_cycles():
    """1000 pulsed cycles in one deck, through the window's closure (33 s)."""
    pytest.importorskip("PySpice")
    card = wearing(kwear=3e6, **FRESH)
    ref = cycled_in_one_run(card, 1000)
    got = cycled_in_one_run(card, 1000, "veriloga")
    _assert_wears_alike(got, ref, ref["gap_hrs_nm"][0])
    closed, mode = failure_of(ref)
    assert 100 < closed < 900 and mode == STUCK_LRS  # the window closed within the run
    assert abs(failure_of(got)[0] - closed) <= 3


@pytest.mark.slow
def test_the_subcircuit_wears_as_the_python_engine_over_1000_cycles():
    """The subcircuit costs ~1.4 s a pulsed cycle, so it runs three stretches of 1000 cycles
    of the Python engine, fresh, through the window's closure and at the end: 6 consecutive
    cycles in one deck each, started from the engine's state after the RESET before the
    stretch.  benchmarks/bench_wear_renderings.py runs all 1000."""
    pytest.importorskip("PySpice")
    card = wearing(kwear=3e6, **FRESH)
    ref = cycled_in_one_run(card, 1000)
    fresh_gap = ref["gap_hrs_nm"][0]
    closed = int(failure_of(ref)[0])
    assert 100 < closed < 994
    for first in (0, closed - 3, 994):
        before = ref.iloc[first - 1]
        start = card if first == 0 else card.replace(
            x0=before["gap_hrs_nm"] * 1e-9, w0=before["width_hrs_nm"] * 1e-9,
            wear0=float(before["wear"]))
        got = cycled_in_one_run(start, 6, "ngspice")
        _assert_wears_alike(got, ref.iloc[first:first + 6].reset_index(drop=True), fresh_gap)


def test_an_array_of_cycled_cells_reads_its_closed_window():
    """A 2x2 1R crossbar read in the states its cells reached after 2000 cycles: the LRS
    and HRS columns read within 2x of each other, against 10x fresh."""
    from rram.array import ArraySpec, read
    from rram.array.cells import cycled_states, pattern_states

    pattern = np.array([[True, False], [True, False]])
    spec = ArraySpec(rows=2, cols=2)
    run = run_endurance(Endurance(card=wearing(kwear=3e6), cycles=2000, devices=4))
    fresh = read(spec, [0.1, 0.0], pattern_states(pattern, spec.card)).i_col
    worn = read(spec, [0.1, 0.0], cycled_states(pattern, run, 1999)).i_col
    assert fresh[0] / fresh[1] > 10
    assert worn[0] / worn[1] < 2
    with pytest.raises(InputError, match="one device per cell"):
        cycled_states(np.ones((3, 3), bool), run, 10)



TUD = Path(__file__).resolve().parents[1] / "fitting/results/tud_H16248L_M12.card.json"
#: Pulses that switch the fitted TUD cell: its 13 nm CF needs a strong RESET (the default
#: 1.28 V word line passes too little current to open its gap in 80 ns).
TUD_PULSES = {"v_set": 1.5, "v_reset": -3.0, "width": 1e-6, "v_gate": 5.0}


@pytest.mark.slow
def test_the_fitted_tud_card_wears_through_the_command_line(tmp_path):
    """A user's fitted card: the default pulses do not switch it (said, not fitted); its
    endurance record (a CSV as instruments keep it) fitted with its own pulses gives
    back kwear within 15 %, and ``rram endurance`` on the fitted card, with no pulse
    option, runs those pulses and closes the window where the record did."""
    import click

    from rram.cli import main

    tud = load_card(TUD)
    values = {p.name: tud[p.name] for p in tud.model.parameters if p.kind != "environment"}
    truth = Card.of(wearing_model(), {**values, "kwear": 3e5, "xres": 2.0e-9})
    pulses = PulseCycle(**TUD_PULSES)
    run = run_endurance(Endurance(card=truth, cycles=6000, protocol=pulses))
    closed = run.failures()["closure_cycle"].iloc[0]
    keep = np.unique(np.geomspace(1, len(run.table), 50).astype(int) - 1)
    record = tmp_path / "endurance.csv"
    run.table.iloc[keep][["cycle", "r_lrs_ohm", "r_hrs_ohm"]].set_axis(
        ["cycle", "lrs", "hrs"], axis=1).to_csv(record, index=False)

    with pytest.raises(click.UsageError, match="does not switch"):
        main(["fit-endurance", str(record), "--card", str(TUD), "--out",
              str(tmp_path / "no.json")], standalone_mode=False)
    plain = run_endurance(Endurance(card=truth, cycles=10))
    assert plain.failures()["mode"].iloc[0] == NO_WINDOW

    fitted = tmp_path / "tud_worn.json"
    options = [f"--{k.replace('_', '-')}={v:g}" for k, v in TUD_PULSES.items()]
    main(["fit-endurance", str(record), "--card", str(TUD), *options, "--out", str(fitted)],
         standalone_mode=False)
    card = load_card(fitted)
    assert card["kwear"] == pytest.approx(3e5, rel=0.15)  # 3.09e5
    # its reservoir bounds the RESET from the first cycle (xres below the fresh gap)
    assert card["xres"] == pytest.approx(2.0e-9, rel=0.15)  # 1.98 nm
    assert PulseCycle.from_meta(card.meta) == pulses
    out = tmp_path / "e.csv"
    main(["endurance", "--card", str(fitted), "--cycles", "6000", "--out", str(out)],
         standalone_mode=False)
    side = json.loads((tmp_path / "e.csv.json").read_text())
    assert side["provenance"]["protocol"] == asdict(pulses)
    failure = side["failures"][0]
    assert failure["mode"] == STUCK_LRS
    assert failure["closure_cycle"] == pytest.approx(closed, rel=0.15)
