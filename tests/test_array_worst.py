"""The worst data pattern of a V/2 read: the search against the brute force, the adjoint
against finite flips, and the physics of what it finds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rram.array.cells import cell_parameters, pattern_states
from rram.array.read import half_bias, read, read_margin
from rram.array.spec import ArraySpec, Metal
from rram.array.worst import _Reader, worst_pattern

RESISTIVE = Metal(rho=2e-6)  # thin, resistive wires: IR drop matters even at 3 x 3


def _brute_force(spec: ArraySpec, v: float, cell: tuple[int, int]) -> tuple[float, float]:
    """(smallest same-pattern margin, window margin) over every background."""
    rows, cols, gates = half_bias(spec, v, cell)
    on, off = [], []
    others = spec.n_cells - 1
    for bits in itertools.product((False, True), repeat=others):
        p = np.insert(np.array(bits), cell[0] * spec.cols + cell[1], True).reshape(spec.shape)
        currents = []
        for lrs in (True, False):
            p[cell] = lrs
            r = read(spec, rows, pattern_states(p), v_gates=gates, v_cols=cols)
            currents.append(float(r.i_col[cell[1]]))
        on.append(currents[0])
        off.append(currents[1])
    on_a, off_a = np.array(on), np.array(off)
    return float(np.min(1 - off_a / on_a)), (on_a.min() - off_a.max()) / on_a.min()


def _check_against_brute_force(topology: str, v: float) -> None:
    spec = ArraySpec(topology, 3, 3, row_metal=RESISTIVE, col_metal=RESISTIVE)
    cell = (0, 2)
    same, window = _brute_force(spec, v, cell)
    found = {obj: worst_pattern(spec, v, objective=obj) for obj in ("same", "window")}
    assert found["same"].margin == pytest.approx(same, abs=1e-6)
    assert found["window"].margin == pytest.approx(window, abs=1e-6)
    for w in found.values():
        assert w.cell == cell
        assert w.margin <= w.standard["all-lrs"] + 1e-12
        assert w.margin <= min(w.standard["checkerboard"], w.standard["checkerboard-inverse"])
    # the standard margins are the plain reads' margins
    assert found["same"].standard["all-lrs"] == pytest.approx(
        read_margin(spec, v, cell).margin, abs=1e-12)


def test_the_search_equals_the_brute_force_minimum_on_a_3x3_crossbar():
    _check_against_brute_force("1r", 0.4)


@pytest.mark.slow
def test_the_search_equals_the_brute_force_minimum_on_a_3x3_1s1r():
    _check_against_brute_force("1s1r", 1.4)


def test_the_adjoint_predicts_the_effect_of_flipping_a_cell():
    spec = ArraySpec("1r", 4, 4, row_metal=RESISTIVE, col_metal=RESISTIVE)
    reader = _Reader(spec, 0.4, (0, 3), True, cell_parameters(spec), lambda: None)
    p = np.random.default_rng(1).random(spec.shape) < 0.5
    i0, gain = reader.current(p)
    # the cells that matter most: the selected column (sneak) and row (IR drop)
    for k in [(1, 3), (2, 3), (3, 3), (0, 0), (0, 1)]:
        q = p.copy()
        q[k] = ~q[k]
        change = reader.current(q)[0] - i0
        # first order in the flip: 11 % at most with the card's 4.2 kOhm LRS (10 % with
        # the 10 kOhm LRS the arrays used before)
        assert gain[k] == pytest.approx(change, rel=0.15), k
    assert gain[0, 3] == 0.0


def test_the_guided_descent_finds_the_weakest_lrs_read_of_a_larger_array():
    """Without the single-flip polish (64 cells > polish_cells): the smallest LRS read
    has its row in the LRS (the row's IR drop) and its column in the HRS (no sneak
    current added), below every standard pattern's."""
    spec = ArraySpec("1r", 8, 8, row_metal=Metal(rho=1e-7), col_metal=Metal(rho=1e-7))
    w = worst_pattern(spec, 0.4, objective="window", polish_cells=0)
    assert w.on_pattern[0].all() and not w.on_pattern[1:, -1].any()
    assert w.off_pattern.all()  # the largest HRS read: every sneak path in the LRS
    assert w.margin < min(w.standard.values()) - 1.0  # no fixed reference separates
    same = worst_pattern(spec, 0.4, objective="same", polish_cells=0, random_starts=0)
    assert same.margin == pytest.approx(same.standard["all-lrs"], abs=1e-12)
    assert w.margin < same.margin
    assert w.reads < 60


def test_bad_search_inputs():
    from rram.errors import InputError

    spec = ArraySpec("1r", 3, 3)
    with pytest.raises(InputError, match="objective 'worst'"):
        worst_pattern(spec, 0.4, objective="worst")
    with pytest.raises(InputError, match="outside the 3 x 3 array"):
        worst_pattern(spec, 0.4, cell=(3, 0))


@pytest.mark.parametrize("topology, v", [("1s1r", 1.4), ("1t1r", 0.4)])
def test_the_guided_descent_alone_reaches_the_single_flip_optimum(topology, v):
    """The adjoint-guided flips reach the margin that trying every single flip by
    nonlinear reads reaches, in a fraction of the reads."""
    metal = Metal(rho=1e-6)
    spec = ArraySpec(topology, 5, 5, row_metal=metal, col_metal=metal, gate_metal=metal)
    guided = worst_pattern(spec, v, objective="window", polish_cells=0)
    polished = worst_pattern(spec, v, objective="window")
    assert guided.margin == pytest.approx(polished.margin, abs=1e-6)
    assert guided.margin < min(guided.standard.values())
    assert guided.reads < polished.reads / 3


def test_a_1t1r_word_line_shuts_the_sneak_paths_and_a_negative_read_reads_alike():
    spec = ArraySpec("1t1r", 3, 3)
    one_t = worst_pattern(spec, 0.4, objective="window")
    one_r = worst_pattern(ArraySpec("1r", 3, 3), 0.4, objective="window")
    assert one_r.margin < 0.5 < 0.95 < one_t.margin  # only the selected row's gates on
    # a negative read: the currents along the read, the window still below the same
    neg = {o: worst_pattern(ArraySpec("1r", 3, 3), -0.4, objective=o)
           for o in ("same", "window")}
    assert neg["window"].i_on > 0 and neg["window"].margin < neg["same"].margin
    assert neg["window"].i_on <= neg["same"].i_on and neg["window"].i_off >= neg["same"].i_off
