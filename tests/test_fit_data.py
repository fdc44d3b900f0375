"""Measured-data loaders: strict errors that name the file, the line and the problem."""

from __future__ import annotations

import numpy as np
import pytest

from rram.errors import InputError
from rram.fit.data import load_distribution, load_iv
from rram.fit.loop import build_loops, median_cycle

SWEEP = [0.0, -0.5, -1.0, -1.5, -1.0, -0.5, 0.0]


def write(tmp_path, text: str, name: str = "iv.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def rows(volts, amps, cycle=1, t0=0.0):
    return "".join(f"{cycle},{t0 + k},{v},{i}\n" for k, (v, i) in enumerate(
        zip(volts, amps, strict=True)))


def test_columns_are_found_by_common_names_and_units_converted(tmp_path):
    path = write(tmp_path, "cycle,time_ms,V_mV,I_uA\n" + rows(
        [1000 * v for v in SWEEP], [10.0 * abs(v) for v in SWEEP]))
    (curve,) = load_iv(path)
    assert curve.cycle == 1
    assert np.allclose(curve.voltage, SWEEP)
    assert np.allclose(curve.current, [1e-5 * abs(v) for v in SWEEP])
    assert np.allclose(np.diff(curve.time), 1e-3)


@pytest.mark.parametrize(("text", "message"), [
    ("cycle,time,U,I\n1,0,0,0\n", "no voltage column"),
    ("cycle,time,V,I_pA\n1,0,0,0\n", "unknown current unit 'pa'"),
    ("cycle,time,V,I\n" + rows(SWEEP, [1e-6] * 7).replace("-1.5,", "-1.5x,"),
     "line 5: column 'V': '-1.5x' is not a finite number"),
    ("cycle,time,V,I\n" + rows(SWEEP, [1e-6] * 6 + [float("nan")]),
     "line 8: column 'I': nan is not a finite number"),
    ("cycle,time,V,I\n" + rows([0.0, -0.5, -1.0, -1.5, -1.5], [1e-6] * 5),
     "not a sweep with both branches"),
    ("cycle,time,V,I\n" + rows(SWEEP, [1e-6, 1e-6, 1e-6, 2e-3, 1e-6, 1e-6, 1e-6]),
     "line 5: |I| = 0.002 A exceeds the compliance 0.0005 A"),
    ("cycle,time,V,I\n" + rows(SWEEP, [1e-6] * 7).replace("1,3.0,", "1,0.5,"),
     "time does not increase"),
])
def test_bad_input_names_file_line_and_problem(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_iv(path, compliance=5e-4)
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_a_file_without_times_needs_the_sweep_rate(tmp_path):
    """The rate sets the kinetics, so a time-less file is never given one by default
    (it once was 1 s a point: a 1T1R loop swept at 1 kV/s then fitted its SET barrier
    at 2.28 eV for the 1.60 eV that made it); with the rate each point lasts its
    voltage step over it, a repeated voltage one median step."""
    volts = [0.0, -0.5, -1.0, -1.5, -1.5, -1.0, -0.5, 0.0]
    text = "cycle,V,I\n" + "".join(f"1,{v},{1e-6 * abs(v)}\n" for v in volts)
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_iv(path)
    assert str(path) in str(err.value) and "--sweep-rate" in str(err.value)
    (curve,) = load_iv(path, sweep_rate=1e3)
    assert np.allclose(np.diff(curve.time), 0.5e-3)
    with pytest.raises(InputError, match="sweep rate must be within"):
        load_iv(path, sweep_rate=1e12)
    timed = write(tmp_path, "cycle,time,V,I\n" + rows(SWEEP, [1e-6] * 7), "timed.csv")
    with pytest.raises(InputError, match="drop --sweep-rate"):
        load_iv(timed, sweep_rate=1e3)


def test_a_cycle_holding_a_whole_loop_gives_its_two_sweeps_and_the_set_polarity(tmp_path):
    volts = [*SWEEP, 0.5, 1.0, 1.5, 1.0, 0.5, 0.0]
    amps = [0, 1e-6, 5e-4, 5e-4, 5e-4, 5e-4, 1e-5, 2e-4, 4e-4, 1e-5, 5e-6, 2e-6, 0]
    path = write(tmp_path, "cycle,time,V,I\n" + rows(volts, amps, 1)
                 + rows(volts, amps, 2, t0=100))
    curves = load_iv(path)
    assert [(c.cycle, np.sign(c.v_peak)) for c in curves] == [(1, -1), (1, 1), (2, -1),
                                                            (2, 1)]
    loops = build_loops(curves)
    assert [lp.cycle for lp in loops] == [1, 2]
    assert loops[0].polarity == -1 and loops[0].icc_set == pytest.approx(5e-4)
    assert median_cycle(loops).cycle in (1, 2)


def test_distribution_loader_checks_states_and_values(tmp_path):
    good = write(tmp_path, "device,cycle,state,resistance_ohm\nA,1,LRS,1000\nA,1,hrs,1e5\n",
                 "d.csv")
    frame = load_distribution(good)
    assert list(frame["state"]) == ["LRS", "HRS"]
    bad = write(tmp_path, "device,cycle,state,resistance_ohm\nA,1,ON,1000\n", "b.csv")
    with pytest.raises(InputError, match="line 2: state 'ON'"):
        load_distribution(bad)
    twice = write(tmp_path, "device,cycle,state,resistance_ohm\nA,1,LRS,1000\nA,1,HRS,1e5\n"
                  "A,1,lrs,900\n", "t.csv")
    with pytest.raises(InputError, match="line 4: device 'A', cycle 1, LRS is given twice"):
        load_distribution(twice)
    missing = write(tmp_path, "device,cycle,resistance_ohm\nA,1,1000\n", "m.csv")
    with pytest.raises(InputError, match="missing column"):
        load_distribution(missing)


def test_measured_cycles_that_did_not_switch_carry_no_switching_voltage(tmp_path):
    """The Monte Carlo's rule on measured rows: the HRS on a cycle's row is the state its
    SET starts from, the next cycle's HRS the one its RESET leaves.  A SET that left the
    resistance within 2x reports its sweep end, no V_set; likewise a RESET.  Where a read
    is missing (the last cycle's RESET, another device) the operation counts as switched."""
    text = ("device,cycle,state,resistance_ohm,v_set_V,v_reset_V\n"
            "A,1,HRS,1e5,-1.0,0.8\nA,1,LRS,1e3,-1.0,0.8\n"      # switched
            "A,2,HRS,1.2e6,-2.5,2.5\nA,2,LRS,1.5e6,-2.5,2.5\n"  # SET failed, RESET no rise
            "A,3,HRS,1.4e6,-1.1,0.9\nA,3,LRS,2e3,-1.1,0.9\n"    # SET ok, RESET: last cycle
            "B,1,LRS,1e3,-0.9,0.7\nB,2,HRS,3e3,-0.9,0.7\n")     # B1 RESET: 3x, switched
    frame = load_distribution(write(tmp_path, text, "d.csv")).set_index(["device", "cycle",
                                                                        "state"])
    assert frame.loc[("A", 1, "LRS"), "reason"] == ""
    assert frame.loc[("A", 2, "LRS"), "reason"] == "no_set+no_reset"
    assert np.isnan(frame.loc[("A", 2, "LRS"), "v_set_V"])
    assert np.isnan(frame.loc[("A", 2, "HRS"), "v_reset_V"])
    assert frame.loc[("A", 3, "LRS"), "v_set_V"] == -1.1
    assert frame.loc[("A", 3, "HRS"), "v_reset_V"] == 0.9
    assert frame.loc[("B", 1, "LRS"), "reason"] == ""  # 3e3 >= 2 x 1e3; no HRS before it
    assert frame.loc[("B", 2, "HRS"), "v_reset_V"] == 0.7
