"""Property tests of the model equations (vectorised numpy rendering).

No NaN or inf anywhere in the operating range; the current is odd in the bias and zero at
zero bias; the rates vanish at zero bias; first derivatives are continuous at V = 0 and at
the smooth x = 0 contact.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import cards

from rram import _kernels as K
from rram import expr as E
from rram.card import default_card
from rram.model import MODEL, node_symbol
from rram.printers.numpy_printer import engine_form

NAMES = [p.name for p in MODEL.parameters]
BRANCH = {b.name: i for i, b in enumerate(MODEL.branches)}
OUT = {o.name: i for i, o in enumerate(MODEL.outputs)}


@st.composite
def operating_points(draw):
    p = draw(cards())
    l0, wcf, wmin, tamb = (p[NAMES.index(n)] for n in ("l0", "wcf", "wmin", "tamb"))
    v = [draw(st.floats(-10, 10)) for _ in range(3)]
    gap = draw(st.floats(0, l0 * 1e9))
    width = draw(st.floats(wmin * 1e9, wcf * 1e9))
    temp = draw(st.floats(200, 600))
    x0, w0 = (p[NAMES.index(n)] * 1e9 for n in ("x0", "w0"))
    nodes = [v[0], 0.0, v[0] * 0.99, v[1] * 0.01, v[2], gap - x0, width - w0, temp - tamb]
    return nodes, p


@given(operating_points())
def test_no_nan_or_inf_anywhere_in_the_range(point):
    nodes, p = point
    flows = np.array(K.device_flows(nodes, p), float)
    outs = np.array(K.device_outputs(nodes, p), float)
    assert np.all(np.isfinite(flows)), dict(zip(BRANCH, flows, strict=True))
    assert np.all(np.isfinite(outs)), dict(zip(OUT, outs, strict=True))


@given(operating_points())
def test_current_is_odd_in_bias_and_rates_vanish_at_zero(point):
    nodes, p = point
    n = np.array(nodes)
    neg = n.copy()
    neg[:5] = -n[:5]  # terminal and electrical internal nodes
    f_pos = np.array(K.device_flows(n, p))
    f_neg = np.array(K.device_flows(neg, p))
    for name in ("br_ctop", "br_cbot", "br_leak", "br_cf", "br_gap"):
        i = BRANCH[name]
        assert f_neg[i] == pytest.approx(-f_pos[i], rel=1e-9, abs=1e-30), name
    zero = n.copy()
    zero[:5] = 0.0
    f0 = np.array(K.device_flows(zero, p))
    o0 = np.array(K.device_outputs(zero, p))
    for name in ("br_ctop", "br_cbot", "br_leak", "br_cf", "br_gap"):
        assert f0[BRANCH[name]] == 0.0
    # at zero bias only the bake's diffusion moves the states (rram.equations.retention)
    still = np.array(K.device_outputs(zero, with_parameter(p, "kdif", 0.0)))
    assert still[OUT["dxdt"]] == 0.0 and still[OUT["dwdt"]] == 0.0
    # the gap fills, the CF narrows; a state on its bound stays there (its rate 0 to
    # rounding: the clip is the identity there, to ~1e-16 nm)
    closed = abs(o0[OUT["gapm"]]) < 1e-18
    assert o0[OUT["dxdt"]] <= 0.0 or closed
    assert o0[OUT["dwdt"]] <= 0.0


def with_parameter(p, name: str, value: float) -> np.ndarray:
    q = np.array(p, float)
    q[[prm.name for prm in MODEL.parameters].index(name)] = value
    return q


def _flows_and_jacobian():
    # the engine's form: the kernels' time-stepping equations (dc_hold = 0)
    exprs = engine_form([b.flow for b in MODEL.branches] + [o.expr for o in MODEL.outputs])
    syms = [node_symbol(n) for n in MODEL.node_names]
    memo: dict = {}
    jac = [[E.diff(e, s, memo) for s in syms] for e in exprs]
    return exprs, syms, jac


@pytest.mark.parametrize("gap_nm", [3.0, 1.0, 0.03, 0.0])
def test_jacobian_is_continuous_across_zero_bias(gap_nm):
    _, syms, jac = _flows_and_jacobian()
    card = default_card()
    flat = [d for row in jac for d in row]

    def at(v):
        env = dict(card.values)
        env.update(dict(zip(syms, [v, 0.0, v * 0.99, v * 0.001, v * 0.5,
                                   gap_nm - card["x0"] * 1e9, 2.0 - card["w0"] * 1e9, 1.0],
                            strict=True)))
        return np.array(E.evaluate(flat, env))

    left, right = at(-1e-9), at(1e-9)
    scale = np.maximum(np.abs(at(-1e-3)), np.abs(at(1e-3))) + 1e-30
    assert np.all(np.isfinite(left)) and np.all(np.isfinite(right))
    assert np.max(np.abs(left - right) / scale) < 1e-3


@pytest.mark.parametrize("v", [0.5, -0.5])
def test_jacobian_is_continuous_through_the_contact(v):
    """Refining the x grid shrinks every jump of every derivative (a discontinuity would
    keep its size)."""
    _, syms, jac = _flows_and_jacobian()
    card = default_card()
    flat = [d for row in jac for d in row]

    def at(gap):
        env = dict(card.values)
        env.update(dict(zip(syms, [v, 0.0, v * 0.99, v * 0.001, v * 0.3,
                                   gap - card["x0"] * 1e9, 2.0 - card["w0"] * 1e9, 10.0],
                            strict=True)))
        return np.array(E.evaluate(flat, env))

    def max_jump(n):
        vals = np.array([at(x) for x in np.linspace(-0.02, 0.06, n)])
        assert np.all(np.isfinite(vals))
        return np.max(np.abs(np.diff(vals, axis=0)), axis=0)

    coarse, fine = max_jump(41), max_jump(401)
    big = coarse > 1e-12 * np.max(coarse)
    assert np.all(fine[big] < 0.35 * coarse[big])
