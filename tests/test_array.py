"""Arrays: interconnect against closed forms, the native engine's physics trends, the
spec's validation and the netlist round trip (no simulator needed)."""

from __future__ import annotations

import numpy as np
import pytest

from rram.array.build import build, line_circuit
from rram.array.cells import States, cell_parameters, pattern_states
from rram.array.circuit import from_netlist, to_netlist
from rram.array.export import render
from rram.array.rc import step_response
from rram.array.read import read, vmm
from rram.array.solve import operating_point
from rram.array.spec import ArraySpec, Metal, Selector
from rram.errors import InputError
from rram.variation import default_variation

METAL = Metal()


@pytest.mark.parametrize("segments,kind", [(1, "pi"), (3, "pi"), (2, "t"), (2, "l")])
def test_uniform_line_with_uniform_loads_matches_the_closed_form(segments, kind):
    """A line of N pitches (R each) driven at V0 with a load g at every pitch point has
    V_k = V0·cosh((N + ½ − k)·θ)/cosh((N + ½)·θ), cosh θ = 1 + g·R/2."""
    spec = ArraySpec(segments=segments, segment_kind=kind)
    n, r_load = 64, 2e3
    c, taps = line_circuit(spec, METAL, n, v=0.5, r_load=r_load)
    v = operating_point(c).v[taps[1:]]
    theta = np.arccosh(1 + METAL.resistance(spec.pitch) / r_load / 2)
    k = np.arange(1, n + 1)
    want = 0.5 * np.cosh((n + 0.5 - k) * theta) / np.cosh((n + 0.5) * theta)
    drop, want_drop = 0.5 - v, 0.5 - want
    assert want_drop[-1] > 0.01  # a visible IR drop
    assert np.max(np.abs(drop / want_drop - 1)) < 1e-3


def _delay(kind: str, sections: int) -> tuple[float, float]:
    """(50 % delay, Elmore delay) of one line, in units of its total R·C."""
    length = 100 * 200e-9
    spec = ArraySpec(segments=sections, segment_kind=kind, pitch=length)
    c, taps = line_circuit(spec, METAL, 1)
    rc = METAL.resistance(length) * METAL.c_ground * length
    r = step_response(c, int(taps[-1]))
    return r.delay(0.5) / rc, r.elmore / rc


def test_pi_sections_converge_fast_and_l_sections_slowly():
    ref = _delay("pi", 64)[0]
    assert abs(ref - 0.3787) < 1e-3  # the distributed line's 0.38 RC
    err = {(k, n): abs(_delay(k, n)[0] / ref - 1) for k in ("pi", "t", "l")
           for n in (1, 2, 4, 8)}
    assert err["pi", 4] < 0.01 and err["t", 4] < 0.01
    assert err["l", 4] > 0.1  # L sections: 24 % off at 4
    for n in (1, 2, 4):
        assert err["l", 2 * n] < err["l", n]  # converging, first order
        assert err["l", n] > 5 * err["pi", n]


def test_elmore_delay_of_sectioned_lines():
    """Elmore (first moment): RC/2 for Pi and T at any count; RC·(N + 1)/(2N) for L."""
    for n in (1, 3, 8):
        assert _delay("pi", n)[1] == pytest.approx(0.5, rel=1e-9)
        assert _delay("t", n)[1] == pytest.approx(0.5, rel=1e-9)
        assert _delay("l", n)[1] == pytest.approx((n + 1) / (2 * n), rel=1e-9)


def _all_lrs(n: int) -> States:
    return pattern_states(np.ones((n, n), bool))


def test_ir_drop_grows_with_array_size_and_resistivity():
    drops = [read(ArraySpec(rows=n, cols=n), 0.2, _all_lrs(n)).worst_drop for n in (4, 8, 16)]
    assert drops[0] < drops[1] < drops[2]
    thick = read(ArraySpec(rows=8, cols=8, row_metal=Metal(rho=2e-7),
                           col_metal=Metal(rho=2e-7)), 0.2, _all_lrs(8)).worst_drop
    assert thick > 3 * drops[1]


def test_ideal_wires_drop_nothing():
    spec = ArraySpec(rows=4, cols=4, row_metal=Metal(rho=0.0), col_metal=Metal(rho=0.0))
    r = read(spec, 0.2, _all_lrs(4))
    assert np.max(np.abs(r.line_drop)) < 1e-12
    assert np.allclose(r.v_cell, 0.2, atol=1e-12)
    assert np.allclose(r.i_col, r.i_cell.sum(0), rtol=1e-9)


def _sneak_share(spec: ArraySpec, v: float) -> float:
    """V/2 read of cell (0, 0): the share of column 0's current not from that cell."""
    m, n = spec.shape
    rows = np.full(m, v / 2)
    rows[0] = v
    cols = np.full(n, v / 2)
    cols[0] = 0.0
    r = read(spec, rows, _all_lrs(m), v_cols=cols)
    return float((r.i_col[0] - r.i_cell[0, 0]) / r.i_col[0])


def test_a_selector_suppresses_sneak_currents():
    one_r = _sneak_share(ArraySpec(rows=8, cols=8), 0.4)
    one_s = _sneak_share(ArraySpec("1s1r", 8, 8, selector=Selector(1e-9, 0.1)), 1.4)
    assert one_r > 0.5
    assert one_s < one_r / 5  # measured: 0.11 against 0.78


def test_linear_vmm_matches_the_nonlinear_read_near_its_reference():
    spec = ArraySpec(rows=16, cols=16, row_metal=Metal(rho=1e-7))
    states = pattern_states(np.random.default_rng(4).random((16, 16)) < 0.5)
    lin = vmm(spec, np.full((1, 16), 0.2), states, v_ref=0.2)
    nl = read(spec, 0.2, states)
    # measured 5.2e-3 with the card's programmed LRS (4.2 kOhm; the wires leave the cells
    # 2-6 % below v_ref); 1.4e-3 with the softer 10 kOhm LRS the arrays used before
    assert np.max(np.abs(lin.outputs[0] / nl.i_col - 1)) < 1e-2
    assert 0 < lin.relative_error < 0.2  # the wires lose current against the ideal


def test_netlist_round_trip_solves_identically():
    spec = ArraySpec("1s1r", 4, 5, r_driver=50.0, r_sense=20.0, segments=2,
                     segment_kind="t", variation=default_variation(), seed=5)
    c = build(spec, 1.2, pattern_states(np.eye(4, 5, dtype=bool)))
    a, b = operating_point(c), operating_point(from_netlist(to_netlist(c)))
    assert np.allclose(a.i_cell, b.i_cell, rtol=1e-9, atol=0)
    assert np.allclose(a.v_cell, b.v_cell, rtol=0, atol=1e-9)


def test_the_deck_is_deterministic_and_names_no_time():
    spec = ArraySpec("1t1r", 3, 3, variation=default_variation(), seed=2)
    one = render(build(spec, 0.2, v_gates=1.8))
    two = render(build(spec, 0.2, v_gates=1.8))
    assert one == two
    assert "Date" not in one and "date" not in one
    assert one.count("\nXc") == 9 and one.count("\nMt") == 9


def test_device_to_device_draws_come_from_the_seed():
    spec = ArraySpec(rows=3, cols=4, variation=default_variation(), seed=11)
    a, b = cell_parameters(spec).values, cell_parameters(spec).values
    c = cell_parameters(ArraySpec(rows=3, cols=4, variation=default_variation(), seed=12)).values
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert len({tuple(row) for row in a}) == 12


@pytest.mark.parametrize("kwargs,words", [
    ({"rows": 0}, ["rows", "[1, 4096]"]),
    ({"topology": "2r"}, ["topology", "1r, 1s1r, 1t1r"]),
    ({"segment_kind": "x"}, ["segment kind", "pi, t, l"]),
    ({"segments": 0}, ["segments per cell pitch", "[1, 256]"]),
    ({"pitch": -1e-9}, ["cell pitch", "(0, 0.001]"]),
    ({"r_sense": -1.0}, ["r_sense", "[0, 1e+09]"]),
])
def test_bad_specs_name_the_input_and_its_range(kwargs, words):
    with pytest.raises(InputError) as exc:
        ArraySpec(**kwargs)
    for w in words:
        assert w in str(exc.value)


def test_bad_metal_and_states_name_the_input():
    with pytest.raises(InputError, match=r"resistivity rho.*\[0, 0.001\]"):
        Metal(rho=-1.0)
    with pytest.raises(InputError, match=r"cell \(1, 2\) gap 9 nm is out of range"):
        gap = np.full((2, 3), 1.0)
        gap[1, 2] = 9.0
        build(ArraySpec(rows=2, cols=3), 0.2, States(gap, np.full((2, 3), 3.0)))
    with pytest.raises(InputError, match="shape"):
        build(ArraySpec(rows=2, cols=3), 0.2, _all_lrs(3))


def test_coupling_opposite_aggressors_slow_the_victim_and_same_ones_speed_it():
    """A victim line between two aggressors: the coupling capacitance counts 0x (same
    direction), 1x (quiet) or 2x (opposite) beside the ground capacitance (Miller)."""
    metal = Metal(c_ground=1e-10, c_couple=1e-10)
    spec = ArraySpec(segments=8, pitch=20e-6)
    delays, elmore = {}, {}
    for case, before, after in (("quiet", [0, 0, 0], [0, 1, 0]),
                                ("same", [0, 0, 0], [1, 1, 1]),
                                ("opposite", [1, 0, 1], [0, 1, 0])):
        c, taps = line_circuit(spec, metal, 1, v=after, lines=3)
        r = step_response(c, int(taps[1, -1]), before=np.array(before, float))
        delays[case], elmore[case] = r.delay(0.5), r.elmore
    assert delays["same"] < delays["quiet"] < delays["opposite"]
    rc = metal.resistance(spec.pitch) * spec.pitch / 2  # R·C/2 per F/m of capacitance
    for case, c_eff in (("same", 1e-10), ("quiet", 3e-10), ("opposite", 5e-10)):
        assert elmore[case] == pytest.approx(rc * c_eff, rel=1e-9)


def test_nested_dissection_orders_every_net_and_cuts_the_fill():
    from rram.array.ordering import nested_dissection
    from rram.array.solve import Factor, _assemble, _Stamp

    n = 96
    c = build(ArraySpec(rows=n, cols=n), 0.2)
    st = _Stamp(c)
    A = (st.G + _assemble(c.n_nets, c.cells[:, 0], c.cells[:, 1], np.full(n * n, 1e-4))
         )[st.free][:, st.free]
    perm = nested_dissection(A, c.xy[st.free])
    assert np.array_equal(np.sort(perm), np.arange(st.free.size))
    nd, mmd = Factor(A, perm, spd=True), Factor(A, None, spd=True)
    # measured: 0.59 M against 0.89 M
    assert nd.lu.L.nnz + nd.lu.U.nnz < 0.8 * (mmd.lu.L.nnz + mmd.lu.U.nnz)
    b = np.random.default_rng(0).random(st.free.size)
    assert np.allclose(nd.solve(b), mmd.solve(b), rtol=1e-9, atol=0)


def test_a_floating_net_is_a_clear_error():
    from rram.errors import ConvergenceError
    from rram.netlist import Netlist, Resistor, VSource

    floating = Netlist((VSource("a", "n1", "0", 1.0), Resistor("a", "n1", "n2", 1e3),
                        Resistor("b", "n3", "n4", 1e3)))
    with pytest.raises(ConvergenceError, match="DC path"):
        operating_point(from_netlist(floating))


def test_the_worst_case_read_margin_falls_with_size_and_a_selector_restores_it():
    from rram.array.read import read_margin

    one_r = [read_margin(ArraySpec(rows=n, cols=n), 0.4).margin for n in (4, 8, 16)]
    assert one_r[0] > one_r[1] > one_r[2] > 0
    one_s = read_margin(ArraySpec("1s1r", 16, 16), 1.4).margin
    assert one_s > 2 * one_r[2]


def test_a_state_a_simulator_left_just_beyond_its_bound_is_taken_at_the_bound():
    """Issue 37: ngspice left a SET's gap at -0.006 nm, which an instance's x0 refuses:
    the arrays put such a state on its bound; farther out stays an error."""
    from rram.array.cells import SNAP_NM, cell_parameters, with_states

    spec = ArraySpec(rows=1, cols=2)
    cards = cell_parameters(spec)
    l0, wcf = cards["l0"][0] / 1e-9, cards["wcf"][0] / 1e-9
    got = with_states(spec, cards, States(np.array([[-0.006, l0 + 0.004]]),
                                          np.array([[5.0, wcf + 0.009]])))
    np.testing.assert_array_equal(got["x0"] / 1e-9, [0.0, l0])
    np.testing.assert_allclose(got["w0"] / 1e-9, [5.0, wcf])
    with pytest.raises(InputError, match=r"gap -0.02 nm is out of range"):
        with_states(spec, cards, States(np.array([[-2 * SNAP_NM, 1.0]]), np.full((1, 2), 5.0)))
