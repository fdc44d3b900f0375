"""The expression IR: interning, simplification, derivatives and the numpy printer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rram import expr as E
from rram.printers.base import Schedule
from rram.printers.numpy_printer import NUMPY


def test_nodes_are_interned():
    x = E.sym("x")
    assert (x * 2 + 1) is (x * 2 + 1)
    assert E.sym("x") is x


def test_local_simplification():
    x = E.sym("x")
    assert x + 0 is x
    assert x * 1 is x
    assert x * 0 is E.ZERO
    assert -(-x) is x  # noqa: B002
    assert (x - x) is E.ZERO
    assert E.num(2) * 3 is E.num(6.0)


def test_expressions_have_no_truth_value_and_reject_non_finite():
    x = E.sym("x")
    with pytest.raises(TypeError):
        bool(x)
    with pytest.raises(ValueError):
        E.num(float("nan"))


FUNCS = [
    ("safe_exp", E.safe_exp, [-50.0, 0.3, 79.0, 80.5, 120.0]),
    ("sqrt", E.sqrt, [0.01, 2.0, 1e6]),
    ("ln", E.ln, [1e-3, 1.0, 50.0]),
    ("tanh", E.tanh, [-3.0, 0.1, 4.0]),
    ("asinh", E.asinh, [-30.0, 0.2, 1e3]),
    ("softplus", E.softplus, [-800.0, -2.0, 0.0, 3.0, 800.0]),
    ("pos_sq", E.pos_sq, [-1.0, -1e-3, 1e-3, 2.0]),
]


@pytest.mark.parametrize("name,fn,points", FUNCS)
def test_derivatives_match_finite_differences(name, fn, points):
    u = E.sym("u")
    f = fn(u)
    df = E.diff(f, "u")
    for x in points:
        h = 1e-6 * max(1.0, abs(x))
        fd = (E.evaluate([f], {"u": x + h})[0] - E.evaluate([f], {"u": x - h})[0]) / (2 * h)
        an = E.evaluate([df], {"u": x})[0]
        assert an == pytest.approx(fd, rel=1e-5, abs=1e-7), (name, x)


def test_safe_exp_is_c1_at_the_limit_and_never_overflows():
    lim = E.EXP_LIMIT
    f = E.FUNCTIONS["safe_exp"].evaluate
    assert f(lim - 1e-9) == pytest.approx(f(lim + 1e-9), rel=1e-8)
    assert math.isfinite(f(1e6))
    slope_left = (f(lim) - f(lim - 1e-6)) / 1e-6
    slope_right = (f(lim + 1e-6) - f(lim)) / 1e-6
    assert slope_left == pytest.approx(slope_right, rel=1e-5)


def test_polarity_weight_is_zero_on_the_other_side_and_c1():
    v = E.sym("v")
    w = E.polarity_weight(v, 0.01)
    dw = E.diff(w, "v")
    assert E.evaluate([w], {"v": -0.5})[0] == 0.0
    assert E.evaluate([w], {"v": 0.0})[0] == 0.0
    assert E.evaluate([w], {"v": 1.0})[0] == pytest.approx(1.0, abs=1e-3)
    assert E.evaluate([dw], {"v": 1e-12})[0] == pytest.approx(0.0, abs=1e-6)
    assert E.evaluate([dw], {"v": -1e-12})[0] == 0.0


def test_numpy_rendering_matches_the_interpreter():
    a, b = E.sym("a"), E.sym("b")
    shared = E.let("shared", E.safe_exp(a / b))
    f = shared * E.tanh(a - b) + E.softplus(shared - 3.0) / (1.0 + E.pos_sq(a))
    sched = Schedule([f])
    lines = [f"{s.name} = {sched.render(s.node, NUMPY, top=True)}" for s in sched.assignments]
    code = "\n".join([*lines, f"out = {sched.render(f, NUMPY)}"])
    from rram import _kernels as k

    env = {"np": np, "safe_exp": k.safe_exp, "softplus": k.softplus, "pos_sq": k.pos_sq}
    for av, bv in [(1.0, 2.0), (-3.0, 0.5), (10.0, 0.2)]:
        scope = dict(env, a=av, b=bv)
        exec(code, scope)
        assert scope["out"] == pytest.approx(E.evaluate([f], {"a": av, "b": bv})[0], rel=1e-14)
    assert "shared = " in code


def test_internal_helpers_cannot_reach_spice_or_veriloga():
    with pytest.raises(ValueError, match="internal helper"):
        from rram.printers.base import Dialect

        Dialect("spice", str, str).call("exp_clip", "x")


def test_soft_bounds_are_recognised_and_near_misses_are_not():
    u, lo, hi, w = E.sym("u"), E.sym("lo"), E.sym("hi"), E.sym("w")
    assert E.soft_floor_parts(E.soft_floor(u, lo, w)) == (u, lo, w)
    assert E.soft_floor_parts(E.soft_floor(u, -lo, w)) == (u, -lo, w)  # u − (−lo) is u + lo
    assert E.soft_floor_parts(E.soft_floor(u, 0.0, w)) == (u, E.ZERO, w)
    assert E.soft_ceil_parts(E.soft_ceil(u, hi, w)) == (u, hi, w)
    clip = E.soft_clip(u, lo, hi, w)
    floored, ceil, width = E.soft_ceil_parts(clip)
    assert (ceil, width) == (hi, w) and E.soft_floor_parts(floored) == (u, lo, w)
    assert E.soft_cap_parts(u - E.softplus(u - hi)) == (u, hi)
    # near misses: another width inside, another bound, other operations
    assert E.soft_floor_parts(lo + w * E.softplus((u - lo) / hi)) is None
    assert E.soft_floor_parts(lo + w * E.softplus((u - hi) / w)) is None
    assert E.soft_ceil_parts(hi - w * E.softplus((lo - u) / w)) is None
    assert E.soft_ceil_parts(E.soft_floor(u, lo, w)) is None
    assert E.soft_cap_parts(u - E.softplus(lo - hi)) is None
    assert E.soft_cap_parts(u - E.safe_exp(u - hi)) is None


def test_compiled_softplus_fast_path_is_exact_to_the_last_bit():
    """The kernels' softplus skips log1p beyond ±SOFTPLUS_EXACT: the same doubles."""
    from rram import _kernels as k

    rng = np.random.default_rng(3)
    limit = E.SOFTPLUS_EXACT
    us = np.concatenate([rng.uniform(-800.0, 800.0, 20_000),
                         np.linspace(limit - 0.5, limit + 0.5, 2001),
                         -np.linspace(limit - 0.5, limit + 0.5, 2001), [-745.5, 709.0]])
    # the full formula in libm's scalar functions, as the compiled kernel calls them
    full = [max(u, 0.0) + math.log1p(math.exp(-abs(u))) for u in us]
    assert [k.softplus(u) for u in us] == full


def test_safe_exp_spelled_with_its_derivative_gives_the_same_values():
    a, b = E.sym("a"), E.sym("b")
    f = E.let("f", E.safe_exp(a * b) + E.softplus(E.safe_exp(a - 3.0)))
    df = E.diff(f, "a")
    shared = E.exp_clip_shared([f, df])
    assert not any(n.op == "safe_exp" for n in E.walk(shared))
    # safe_exp(a*b) and its derivative share one exp_clip node
    assert sum(n.op == "exp_clip" for n in E.walk(shared)) == 2
    for av, bv in [(1.0, 2.0), (-3.0, 0.5), (10.0, 5.0), (45.0, 1.0)]:
        env = {"a": av, "b": bv}
        assert E.evaluate(shared, env) == E.evaluate([f, df], env)


def test_every_function_evaluates_on_arrays_for_the_array_engine():
    """The array engine evaluates device expressions over all cells at once."""
    from rram.array.devices import evaluate

    a = E.sym("a")
    f = E.softplus(a) + E.safe_exp(a) * E.pos_sq(a) + E.tanh(a)
    us = np.array([-50.0, -2.0, 0.0, 0.5, 3.0, 45.0])
    got = evaluate([f], {"a": us})[0]
    want = [E.evaluate([f], {"a": u})[0] for u in us]
    np.testing.assert_allclose(got, want, rtol=1e-14)
