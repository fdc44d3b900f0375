"""Monte Carlo: reproducible draws, physical mapping of the spreads, engine agreement,
resume after a kill, failures recorded without stopping the run."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rram.card import default_card
from rram.mc import MonteCarlo, run_devices
from rram.mc.backend import run_mc
from rram.mc.draws import draw
from rram.mc.report import summary
from rram.variation import Variation, VariationSpec, default_variation


def spec_with(**sigmas) -> VariationSpec:
    """The default spec with the σ of some (parameter, kind) entries replaced."""
    out = []
    for v in default_variation().variations:
        key = f"{v.parameter}_{v.kind}"
        out.append(Variation(v.parameter, v.kind, v.distribution, sigmas.get(key, v.sigma)))
    return VariationSpec(tuple(out))


def test_same_seed_same_rows_for_any_workers_and_chunks(tmp_path):
    mc = MonteCarlo(devices=24, cycles=3, seed=11)
    a = run_mc(mc, tmp_path / "a.parquet", workers=1, chunk=5, progress=False)
    b = run_mc(mc, tmp_path / "b.parquet", workers=2, chunk=13, progress=False)
    fa, fb = pd.read_parquet(a.out), pd.read_parquet(b.out)
    assert len(fa) == 24 * 3 and fa.equals(fb)
    other = run_mc(MonteCarlo(devices=24, cycles=3, seed=12), tmp_path / "c.csv",
                   workers=1, progress=False)
    assert not pd.read_csv(other.out)["r_hrs_ohm"].equals(fa["r_hrs_ohm"])


def test_burn_in_cycles_run_but_are_not_recorded():
    """``burn_in`` cycles are simulated first and left out; the recorded ones are those
    of the longer run, numbered as there (the same draws, the same state carried)."""
    long = run_devices(MonteCarlo(devices=3, cycles=3, seed=5), range(3))
    short = run_devices(MonteCarlo(devices=3, cycles=2, seed=5, burn_in=1), range(3))
    assert sorted(short["cycle"].unique()) == [1, 2]
    assert short.reset_index(drop=True).equals(
        long[long["cycle"] >= 1].reset_index(drop=True))
    with pytest.raises(Exception, match="burn_in"):
        MonteCarlo(burn_in=-1)


def test_drawn_parameters_follow_the_spec():
    spec = default_variation()
    base = default_card().values
    devices = range(3000)
    values = draw(spec, base, 1, devices, cycle=4, event="set")
    for name in ("dea", "dei", "deh"):
        dist, sigma = spec.total_sigma(name)
        assert dist == "normal"
        assert stats.kstest(values[name] - base[name], "norm", args=(0, sigma)).pvalue > 1e-3
    _, sigma = spec.total_sigma("kth")
    assert stats.kstest(np.log(values["kth"] / base["kth"]), "norm",
                        args=(0, sigma)).pvalue > 1e-3
    # D2D is the same in every cycle and event; C2C is not
    again = draw(spec, base, 5, [7, 8], cycle=9, event="reset")
    first = draw(spec, base, 5, [7, 8], cycle=0, event="set")
    assert np.array_equal(again["x0"], first["x0"])
    assert not np.array_equal(again["dea"], first["dea"])


def _stats(spec: VariationSpec, seed: int = 3) -> pd.DataFrame:
    frame = run_devices(MonteCarlo(spec=spec, devices=60, cycles=3, seed=seed), range(60))
    assert frame["converged"].all()
    # cycle 0 starts from the formed state (higher V_set): the steady cycles only
    return summary(frame[frame["cycle"] > 0])


@pytest.mark.slow
def test_each_spread_widens_its_own_distribution():
    base = _stats(default_variation())
    wide_cf = _stats(spec_with(kth_d2d=0.3, kth_c2c=0.6))
    assert wide_cf.loc["r_lrs_ohm", "ln_sigma"] > 1.5 * base.loc["r_lrs_ohm", "ln_sigma"]
    assert abs(math.log(wide_cf.loc["r_hrs_ohm", "median"] / base.loc["r_hrs_ohm", "median"])) \
        < 0.5 * base.loc["r_hrs_ohm", "ln_sigma"] + 0.05
    wide_gap = _stats(spec_with(deh_d2d=0.1, deh_c2c=0.3))
    assert wide_gap.loc["r_hrs_ohm", "ln_sigma"] > 1.5 * base.loc["r_hrs_ohm", "ln_sigma"]
    wide_barrier = _stats(spec_with(dea_d2d=0.1, dea_c2c=0.15, dei_d2d=0.15, dei_c2c=0.25))
    assert wide_barrier.loc["v_set_V", "sigma"] > 1.5 * base.loc["v_set_V", "sigma"]
    assert wide_barrier.loc["v_reset_V", "sigma"] > 1.5 * base.loc["v_reset_V", "sigma"]


@pytest.mark.parametrize("engine", ["veriloga", "vacask"])
def test_python_and_ngspice_agree_per_sample(engine):
    """The compiled module in ngspice and in VACASK against the Python engine."""
    common = {"devices": 50, "cycles": 1, "seed": 21}
    py = run_devices(MonteCarlo(**common), range(50))
    ng = run_devices(MonteCarlo(engine=engine, **common), range(50))
    assert py["converged"].all() and ng["converged"].all()
    vset = (ng["v_set_V"] / py["v_set_V"] - 1).abs()
    for col in ("r_lrs_ohm", "r_hrs_ohm"):
        assert (ng[col] / py[col] - 1).abs().max() <= 0.02, col
    assert vset.max() <= 0.01
    # the drawn parameters are the same samples
    drawn = [c for c in py.columns if c.endswith(("_set", "_reset"))]
    assert py[drawn].equals(ng[drawn])


def test_a_failing_sample_is_recorded_and_the_rest_complete():
    # state windows far narrower than the default on ion rates 10^4 x the default: the
    # devices whose drawn xbound is below ~0.4 pm cannot be integrated (measured)
    card = default_card().replace(vcap=1e6, xbound=1e-12)
    spec = VariationSpec((*default_variation().variations,
                          Variation("xbound", "d2d", "lognormal", 1.0)))
    frame = run_devices(MonteCarlo(card=card, spec=spec, devices=20, cycles=2, seed=4),
                        range(20))
    assert len(frame) == 40
    bad = frame[~frame["converged"]]
    assert 0 < bad["device"].nunique() < 20
    assert bad["error"].str.contains("time step").all()
    good = frame[frame["converged"]]
    assert good[["v_set_V", "r_lrs_ohm", "r_hrs_ohm"]].notna().all().all()


def test_killed_run_resumes_without_lost_or_duplicated_rows(tmp_path):
    out = tmp_path / "mc.parquet"
    args = [sys.executable, "-m", "rram.cli", "mc", "--devices", "60", "--cycles", "2",
            "--seed", "9", "--workers", "1", "--chunk", "6", "--out", str(out)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parts = tmp_path / "mc.parquet.parts"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(parts.glob("chunk-*.parquet"))) < 3:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    done = len(list(parts.glob("chunk-*.parquet")))
    assert 3 <= done < 10 and not out.exists()
    refused = subprocess.run(args, capture_output=True, text=True)
    assert refused.returncode == 2 and "--resume" in refused.stderr
    resumed = subprocess.run([*args, "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done} of 10 chunks already done" in resumed.stderr
    frame = pd.read_parquet(out)
    assert len(frame) == 120 and not frame.duplicated(["device", "cycle"]).any()
    fresh = run_devices(MonteCarlo(devices=60, cycles=2, seed=9), range(60))
    assert frame.equals(fresh)


def test_held_parameters_span_the_operation_that_draws_them_and_the_next():
    """``kth`` is drawn by a SET and held through its RESET; the bounds ``l0``, ``wcf``
    and ``wmin`` by a RESET and held through the next SET (the formed device's SET has
    the D2D value)."""
    base = default_card()
    spec = VariationSpec((Variation("kth", "c2c", "lognormal", 0.2),
                          Variation("wcf", "c2c", "lognormal", 0.2),
                          Variation("wmin", "c2c", "lognormal", 0.2),
                          Variation("l0", "c2c", "lognormal", 0.1),
                          Variation("dea", "c2c", "normal", 0.02)))
    frame = run_devices(MonteCarlo(spec=spec, devices=4, cycles=3, seed=5), range(4))
    assert frame["converged"].all()
    assert np.array_equal(frame["kth_set"], frame["kth_reset"])
    assert not np.array_equal(frame["dea_set"], frame["dea_reset"])  # redrawn per operation
    for p in ("wcf", "wmin", "l0"):
        by_device = frame.pivot(index="device", columns="cycle", values=[f"{p}_set", f"{p}_reset"])
        assert np.array_equal(by_device[f"{p}_set"][[1, 2]].to_numpy(),
                              by_device[f"{p}_reset"][[0, 1]].to_numpy())
        assert np.all(by_device[f"{p}_set"][0] == base[p])
        assert len(np.unique(frame[f"{p}_reset"])) == len(frame)
