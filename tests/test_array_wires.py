"""The wires of an array read: segment currents (KCL), electromigration flags, and
self-heating to a fixed point."""

from __future__ import annotations

import numpy as np
import pytest

from rram.array.cells import pattern_states
from rram.array.read import read
from rram.array.spec import ArraySpec, Metal
from rram.array.wires import (
    TEMP_TOL,
    EmLimit,
    WireHeating,
    heated_read,
    wire_currents,
)
from rram.errors import InputError

METAL = Metal(rho=1e-7)


def _read(spec: ArraySpec, v: float = 0.2):
    p = np.random.default_rng(3).random(spec.shape) < 0.7
    return read(spec, v, pattern_states(p))


@pytest.mark.parametrize("topology", ["1r", "1t1r"])
def test_section_currents_obey_kirchhoff_at_every_tap(topology):
    spec = ArraySpec(topology, 5, 4, row_metal=METAL, col_metal=METAL, gate_metal=METAL,
                     segments=2, segment_kind="t", r_driver=50.0, r_sense=20.0)
    r = _read(spec)
    w = wire_currents(spec, r.circuit, r.v_nets)
    m, n, s = spec.rows, spec.cols, spec.segments
    assert w.current.size == (m * n + n * m + (m * n if topology == "1t1r" else 0)) * s

    def line(kind: str, k: int) -> np.ndarray:
        sel = (w.kind == kind) & (w.line == k)
        return w.current[sel][np.argsort(w.section[sel])]

    for i in range(m):
        row = line("row", i)
        # into the tap of column j (section (j+1)s - 1) minus out of it = the cell's current
        for j in range(n - 1):
            assert row[(j + 1) * s - 1] - row[(j + 1) * s] == pytest.approx(
                r.i_cell[i, j], rel=1e-6, abs=1e-15)
        assert row[-1] == pytest.approx(r.i_cell[i, -1], rel=1e-6)
        assert row[0] == pytest.approx(r.i_cell[i].sum(), rel=1e-6)
        if topology == "1t1r":
            assert np.max(np.abs(line("gate", i))) < 1e-15  # gates draw no DC current
    for j in range(n):
        col = line("col", j)
        assert col[s - 1] == pytest.approx(r.i_cell[0, j], rel=1e-6)
        for i in range(1, m):
            assert col[(i + 1) * s - 1] - col[i * s - 1] == pytest.approx(
                r.i_cell[i, j], rel=1e-6, abs=1e-15)
        assert col[-1] == pytest.approx(r.i_col[j], rel=1e-9)
    area = METAL.width * METAL.thickness
    np.testing.assert_allclose(w.j, w.current / area)


def test_a_section_above_the_limit_is_flagged_and_one_below_is_not():
    spec = ArraySpec("1r", 6, 6, row_metal=METAL, col_metal=METAL)
    r = _read(spec)
    w = wire_currents(spec, r.circuit, r.v_nets)
    top = float(np.max(np.abs(w.current)))
    per_width = top / METAL.width  # the rule that the largest current just meets
    below = wire_currents(spec, r.circuit, r.v_nets, EmLimit(1.01 * per_width))
    assert not below.flagged.any() and below.worst_ratio == pytest.approx(1 / 1.01)
    above = wire_currents(spec, r.circuit, r.v_nets, EmLimit(0.99 * per_width))
    assert above.flagged.sum() >= 1
    assert np.all(np.abs(above.current[above.flagged]) > 0.99 * top)
    flagged = above.table(flagged_only=True)
    assert len(flagged) == above.flagged.sum() and flagged.ratio.iloc[0] == above.worst_ratio
    # a current density limit; with both, the smaller holds
    j_top = top / (METAL.width * METAL.thickness)
    assert not wire_currents(spec, r.circuit, r.v_nets,
                             EmLimit(None, 1.01 * j_top)).flagged.any()
    both = wire_currents(spec, r.circuit, r.v_nets, EmLimit(1e9, 0.99 * j_top))
    assert both.flagged.sum() == above.flagged.sum()
    # the default rule, 1 mA/um: a 50 nm line carries 50 uA
    assert wire_currents(spec, r.circuit, r.v_nets).i_max[0] == pytest.approx(50e-6)


def test_the_default_rule_flags_the_feed_of_a_large_all_lrs_read():
    spec = ArraySpec("1r", 16, 16, row_metal=METAL, col_metal=METAL)
    r = read(spec, 0.2, pattern_states(np.ones(spec.shape, bool)))
    w = wire_currents(spec, r.circuit, r.v_nets)
    em = w.cell_map(spec)
    # each row's first section carries the whole row (16 cells of ~20 uA): flagged
    assert em[:, 0].min() > 5 and em[0, -1] < 1
    assert w.worst_ratio == pytest.approx(em.max())


def test_beta_zero_is_the_plain_read_and_heating_raises_the_ir_drop():
    spec = ArraySpec("1r", 8, 8, row_metal=METAL, col_metal=METAL)
    states = pattern_states(np.ones(spec.shape, bool))
    plain = read(spec, 0.2, states)
    cold = heated_read(spec, 0.2, states, WireHeating(beta=0.0))
    np.testing.assert_array_equal(cold.read.v_cell, plain.v_cell)
    np.testing.assert_array_equal(cold.read.i_col, plain.i_col)
    assert cold.max_delta_t == 0.0
    # a poor thermal path (1 um of a 0.6 W/m/K dielectric under the card's 4.2 kOhm
    # LRS; 0.1 under the 10 kOhm LRS the arrays used before): tens of kelvin
    heating = WireHeating(beta=3.9e-3, k_dielectric=0.6, t_dielectric=1e-6)
    hot = heated_read(spec, 0.2, states, heating)
    assert 1 < hot.iterations < 50 and hot.max_delta_t > 10
    assert hot.read.worst_drop > 1.05 * plain.worst_drop
    assert np.all(hot.read.i_col < plain.i_col)
    # the fixed point: the temperatures the final currents give are the ones used
    c, v = hot.read.circuit, np.append(hot.read.v_nets, 0.0)
    current = (v[c.res[:, 0]] - v[c.res[:, 1]]) / c.ohms
    r0 = c.ohms / (1 + heating.beta * hot.delta_t)
    length = r0 * METAL.width * METAL.thickness / METAL.rho
    rise = heating.t_dielectric / (heating.k_dielectric * METAL.width * length) \
        * current**2 * c.ohms
    np.testing.assert_allclose(rise, hot.delta_t, atol=10 * TEMP_TOL)
    # more heating, more drop
    hotter = heated_read(spec, 0.2, states, WireHeating(beta=3.9e-3, k_dielectric=0.3,
                                                        t_dielectric=1e-6))
    assert hotter.read.worst_drop > hot.read.worst_drop


def test_bad_wire_inputs():
    with pytest.raises(InputError, match="needs i_per_width or j_max"):
        EmLimit(None, None)
    with pytest.raises(InputError, match="j_max"):
        EmLimit(j_max=-1.0)
    with pytest.raises(InputError, match="beta = -1"):
        WireHeating(beta=-1.0)
    with pytest.raises(InputError, match="t_dielectric"):
        WireHeating(t_dielectric=0.0)


def test_strong_heating_settles_and_a_runaway_is_reported():
    from rram.errors import ConvergenceError

    spec = ArraySpec("1r", 16, 16, row_metal=METAL, col_metal=METAL)
    states = pattern_states(np.ones(spec.shape, bool))
    # hundreds of kelvin, where plain substitution (a·β near 1) crawls or diverges (the
    # dielectric x6 against the 10 kOhm LRS the arrays used before: the card's 4.2 kOhm
    # LRS carries 2.4x the current)
    hot = heated_read(spec, 0.3, states, WireHeating(k_dielectric=3.0, t_dielectric=1e-6))
    assert 200 < hot.max_delta_t < 1000 and hot.iterations < 30
    c, v = hot.read.circuit, np.append(hot.read.v_nets, 0.0)
    current = (v[c.res[:, 0]] - v[c.res[:, 1]]) / c.ohms
    r0 = c.ohms / (1 + 3.9e-3 * hot.delta_t)
    length = r0 * METAL.width * METAL.thickness / METAL.rho
    rise = 1e-6 / (3.0 * METAL.width * length) * current**2 * c.ohms
    np.testing.assert_allclose(rise, hot.delta_t, atol=1e-5)
    with pytest.raises(ConvergenceError, match="thermal runaway of the wires"):
        heated_read(spec, 0.3, states, WireHeating(k_dielectric=0.3, t_dielectric=1e-6))
