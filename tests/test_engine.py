"""The vectorised engine: output schema, per-device cards, reported failures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rram import ConvergenceError, InputError, default_card, make_card
from rram.engine.run import COLUMNS, Options, simulate
from rram.engine.stimulus import constant_stress, dc_loops, pulse_train


def test_frame_has_the_tidy_columns_and_labels_cycles():
    res = simulate("compliance", dc_loops(cycles=2, v_step=0.02))
    df = res.frame()
    assert list(df.columns) == list(COLUMNS)
    assert set(df["cycle"]) == {0, 1}
    assert df["time_s"].is_monotonic_increasing
    assert np.isfinite(df.to_numpy(float)).all()


def test_devices_are_independent_and_use_their_own_cards():
    cards = [make_card(), make_card(ea=default_card()["ea"] + 0.1)]
    res = simulate("compliance", dc_loops(), cards=cards)
    alone = simulate("compliance", dc_loops(), cards=cards[1])
    a, b = res.device_arrays(1), alone.device_arrays(0)
    np.testing.assert_allclose(a["current_A"], b["current_A"], rtol=1e-9, atol=1e-15)
    assert res.events["tcross"][1, 0] > res.events["tcross"][0, 0]  # higher barrier: later SET


def test_a_run_that_cannot_finish_says_why_and_when():
    res = simulate("compliance", dc_loops(), options=Options(max_steps=50))
    assert res.status[0] != 0
    with pytest.raises(ConvergenceError) as exc:
        res.raise_on_failure()
    assert "step limit" in str(exc.value) and "t = " in str(exc.value)
    assert exc.value.time_s > 0


def test_stop_current_ends_the_run_and_reports_the_time():
    card = make_card(x0=2.67e-9, w0=2.16e-9)
    res = simulate("resistor", constant_stress(0.6, 1e8), cards=card, stop_current=1e-6)
    assert np.isfinite(res.stop_times[0])
    a = res.device_arrays(0)
    assert a["time_s"][-1] <= res.stop_times[0]


def test_pulse_and_1t1r_circuits_run():
    st = pulse_train([2.0, -1.5], width=100e-9, v_gate=1.28)
    res = simulate("1t1r", st)
    res.raise_on_failure()
    a = res.device_arrays(0)
    assert a["gap_nm"].min() < 0.1 and a["gap_nm"][-1] > 0.5  # set, then reset


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(v_set=1.0, v_reset=1.0), "opposite signs"),
        (dict(rate=-1.0), "rate must be > 0"),
        (dict(cycles=0), "cycles must be a positive integer"),
        (dict(icc_set=float("nan")), "icc_set must be finite"),
    ],
)
def test_bad_stimuli_are_refused(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        dc_loops(**kwargs)


def test_bad_circuit_parameters_are_refused():
    with pytest.raises(InputError, match="circuit parameter rs"):
        simulate("resistor", dc_loops(), circuit_params={"rs": -5.0})
    with pytest.raises(InputError, match="unknown circuit parameter"):
        simulate("resistor", dc_loops(), circuit_params={"bogus": 1.0})
    with pytest.raises(InputError, match="unknown circuit"):
        simulate("diode", dc_loops())


def test_compiled_engines_cache_is_keyed_by_kernels_and_codegen_settings(monkeypatch):
    import hashlib

    import numba

    from rram.engine import jit

    kernels = b"".join(k.read_bytes() for k in jit.COMPILED_SOURCES)
    plain = jit.cache_dir()
    assert plain.name == hashlib.sha256(kernels).hexdigest()[:16]
    # a profiling build (perf) compiles slower code: it must not land in the same cache
    monkeypatch.setattr(numba.config, "ENABLE_PROFILING", 1)
    assert jit.cache_dir() != plain
    monkeypatch.setattr(numba.config, "ENABLE_PROFILING", 0)
    assert jit.cache_dir() == plain


def test_compiled_engines_cache_key_covers_every_module_they_import():
    """numba re-validates a cached function against its own file only: the integrator
    inlines the generated kernels and freezes status codes and event thresholds.  Each
    package module a compiled module imports must be in the key."""
    import ast
    import importlib

    from rram.engine import jit

    keyed = {k.resolve() for k in jit.COMPILED_SOURCES}
    for name in jit.COMPILED:
        path = Path(importlib.util.find_spec(name).origin).resolve()
        assert path in keyed, name
        package = name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                     package)
                origin = Path(importlib.util.find_spec(target).origin).resolve()
                assert origin in keyed, f"{name} imports {target}, not in the cache key"


def test_tightened_divides_every_error_tolerance_and_names_a_bad_factor():
    base = Options(rtol=2e-3, hfrac=0.2)
    half = base.tightened(2)
    assert (half.rtol, half.atol_v, half.atol_nm, half.atol_k, half.chgtol) == (
        1e-3, base.atol_v / 2, base.atol_nm / 2, base.atol_k / 2, base.chgtol / 2)
    assert half.hfrac == 0.2 and half.max_steps == base.max_steps  # step caps unchanged
    assert base.tightened(np.int64(4)).rtol == 5e-4
    for bad in (0, -1.0, float("nan"), "2", True):
        with pytest.raises(InputError, match="tolerance factor"):
            base.tightened(bad)


def test_packing_builds_each_distinct_card_and_stimulus_once_with_rows_in_device_order():
    from rram.card import CardBatch
    from rram.engine import run

    a, b = default_card(), default_card().replace(x0=1.2e-9)
    s1, s2 = dc_loops(), dc_loops(2.5, -1.5, cycles=2)
    cards, stimuli = [a, b, a, b, b], [s1, s2, s1, s1, s2]
    cp = run._circuit_matrix({"rs": [1e3, 2e3, 3e3, 4e3, 5e3]}, 5)
    P = run._card_matrix(CardBatch.of(cards), cp)
    names = a.model.parameter_names
    for d, card in enumerate(cards):
        assert list(P[d, : len(names)]) == [card.values[k] for k in names]
        assert list(P[d, len(names):]) == list(cp[d])
    TP, VP, ICC, VG, OUT = run._pad(stimuli)
    k = s2.times.size
    for d, s in enumerate(stimuli):
        kk = s.times.size
        assert list(TP[d, :kk]) == list(s.times) and (TP[d, kk:] == s.times[-1]).all()
        assert list(VP[d, :kk]) == list(s.volts) and list(ICC[d, : kk - 1]) == list(s.icc)
        assert list(VG[d, : kk - 1]) == list(s.gates)
        assert list(OUT[d, : s.sample_times.size]) == list(s.sample_times)
        assert np.isinf(OUT[d, s.sample_times.size:]).all()
    assert TP.shape == (5, k)
    assert run._pad(stimuli, record=False)[4].shape == (5, 0)  # no sample grid
