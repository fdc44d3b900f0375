"""VMM accuracy: the target product, the error of variation and wires, Monte Carlo."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rram.array.accuracy import (
    programmed_conductance,
    sample_seed,
    score,
    vmm_accuracy,
    vmm_monte_carlo,
)
from rram.array.cells import named_pattern, pattern_states
from rram.array.spec import ArraySpec, Metal
from rram.errors import InputError
from rram.variation import Variation, VariationSpec


def gap_spread(sigma_nm: float) -> VariationSpec:
    return VariationSpec((Variation("x0", "d2d", "normal", sigma_nm * 1e-9, "gap"),))


def crossbar(n: int, rho: float = 1e-7, variation=None, seed: int = 1) -> ArraySpec:
    return ArraySpec("1r", n, n, row_metal=Metal(rho=rho), col_metal=Metal(rho=rho),
                     variation=variation, seed=seed)


def inputs(n: int, k: int = 8) -> np.ndarray:
    return np.random.default_rng(0).uniform(0.0, 0.2, (k, n))


STATES = {n: pattern_states(named_pattern("random", (n, n), 3)) for n in (8, 16, 32)}


def test_score_of_a_uniformly_scaled_output():
    t = np.arange(1.0, 13.0).reshape(3, 4)
    s = score(0.9 * t, t)
    assert s.relative_error == pytest.approx(0.1)
    assert s.snr_db == pytest.approx(20.0)
    assert s.gain == pytest.approx(0.9)
    assert s.relative_error_after_gain == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(s.column_error, 0.1)
    with pytest.raises(InputError, match="differ in shape"):
        score(t[:2], t)


def test_without_variation_the_target_is_the_array_of_ideal_wires():
    a = vmm_accuracy(crossbar(8, rho=1e-12), inputs(8), STATES[8])
    assert a.variation.relative_error == 0.0
    assert a.wires.relative_error < 1e-6
    assert np.array_equal(a.g_nominal, a.g_drawn)


def test_wire_error_grows_with_size_and_resistivity_and_is_mostly_a_gain():
    err = {(n, rho): vmm_accuracy(crossbar(n, rho), inputs(n), STATES[n]).wires
           for n in (8, 32) for rho in (2e-8, 1e-7)}
    assert err[32, 1e-7].relative_error > err[8, 1e-7].relative_error
    assert err[32, 1e-7].relative_error > err[32, 2e-8].relative_error
    # IR drop lowers every output: the gain is below 1, and calibrating it out leaves less
    big = err[32, 1e-7]
    assert big.gain < 1 and big.relative_error_after_gain < big.relative_error
    # the far columns lose most
    assert big.column_error[-1] > big.column_error[0]


def test_variation_error_follows_the_spread_of_the_programmed_state():
    rel = [vmm_accuracy(crossbar(16, 1e-12, gap_spread(s)), inputs(16), STATES[16]
                        ).variation.relative_error for s in (0.05, 0.1, 0.2)]
    assert 0 < rel[0] < rel[1] < rel[2]
    # the drawn conductances scatter around the nominal ones, not off them
    spec = crossbar(16, 1e-12, gap_spread(0.1))
    g = programmed_conductance(spec, STATES[16], 0.2)
    g0 = programmed_conductance(dataclasses.replace(spec, variation=None), STATES[16], 0.2)
    ratio = np.log(g / g0)
    assert abs(np.median(ratio)) < 0.1 and np.std(ratio) > 0.05


def test_the_monte_carlo_depends_only_on_its_seed_and_the_sample():
    spec = crossbar(8, variation=gap_spread(0.1))
    x = inputs(8, 4)
    a = vmm_monte_carlo(spec, x, 6, seed=2, states=STATES[8], chunk=4, progress=False)
    b = vmm_monte_carlo(spec, x, 6, seed=2, states=STATES[8], chunk=1, progress=False)
    assert a.frame.equals(b.frame)
    assert a.frame["seed"].tolist() == [sample_seed(2, k) for k in range(6)]
    # sample 4 alone: its own seed on the array spec
    alone = vmm_accuracy(dataclasses.replace(spec, seed=sample_seed(2, 4)), x, STATES[8])
    assert a.frame["relative_error"][4] == pytest.approx(alone.both.relative_error, rel=1e-12)
    other = vmm_monte_carlo(spec, x, 6, seed=3, states=STATES[8], progress=False)
    assert not np.allclose(other.frame["relative_error"], a.frame["relative_error"])
    assert a.provenance["study_seed"] == 2 and len(a.provenance["inputs_sha256"]) == 64


@pytest.mark.slow
def test_the_monte_carlo_on_dask_workers_equals_the_one_in_process():
    spec = crossbar(8, variation=gap_spread(0.1))
    x = inputs(8, 4)
    a = vmm_monte_carlo(spec, x, 8, seed=5, states=STATES[8], chunk=3, progress=False)
    b = vmm_monte_carlo(spec, x, 8, seed=5, states=STATES[8], chunk=3, workers=2,
                        progress=False)
    assert a.frame.equals(b.frame)


def test_a_monte_carlo_needs_device_to_device_variation():
    with pytest.raises(InputError, match="device-to-device entries"):
        vmm_monte_carlo(crossbar(4), inputs(4), 3, progress=False)
    with pytest.raises(InputError, match="samples 0"):
        vmm_monte_carlo(crossbar(4, variation=gap_spread(0.1)), inputs(4), 0, progress=False)
