"""Loop fitting: a synthetic round trip, the real TUD loop, and the fitted card in ngspice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rram.card import default_card, load_card
from rram.fit.cycles import fit_cycles, scatter_sigmas
from rram.fit.data import IVCurve, load_iv
from rram.fit.iv import DESCENT_MARGIN, DESCENT_STEPS, fit_loop
from rram.fit.loop import (
    MeasuredLoop,
    build_loops,
    median_cycle,
    simulate_loop_spice,
    simulate_loops,
    trace_metrics,
)
from rram.fit.objective import loop_rms
from rram.fit.recipe import Recipe, Stage, default_recipe

DATA = Path(__file__).resolve().parents[1] / "fitting" / "data" / "tud_H16248L_M12"
SET_FILE = DATA / "tud_H16248L_M12_set_IV_101cyc.csv"
RESET_FILE = DATA / "tud_H16248L_M12_reset_IV_105cyc.csv"


def synthetic_loop(card, noise_dec: float, seed: int, cycle: int = 1,
                   steady: bool = True) -> MeasuredLoop:
    """A 1 kV/s DC loop of ``card`` (SET at positive V, 100 µA compliance), sampled every
    5 mV, with log-normal current noise of ``noise_dec`` decades; ``steady`` False: from
    the card's initial state (one cycle), not after a burn-in loop."""
    volts = np.r_[np.linspace(0, 2, 401), np.linspace(2, 0, 401)[1:]]
    t = np.arange(volts.size) * 5e-3 / 1e3
    empty = np.zeros_like(t)
    template = MeasuredLoop(IVCurve(1, t, volts, empty, "synthetic"),
                            IVCurve(1, t, -volts, empty, "synthetic"), 100e-6, 10e-3,
                            steady)
    current = simulate_loops(template, [card]).current[0]
    rng = np.random.default_rng(seed)
    current = current * 10 ** (noise_dec * rng.standard_normal(current.size))
    n = t.size
    return MeasuredLoop(IVCurve(cycle, t, volts, current[:n], "synthetic"),
                        IVCurve(cycle, t, -volts, current[n:], "synthetic"), 100e-6, 10e-3,
                        steady)


def test_synthetic_round_trip_recovers_the_key_parameters():
    truth = default_card().replace(ea=1.60, ei=1.55, eh=1.32, vt=0.55)
    loop = synthetic_loop(truth, noise_dec=0.02, seed=3)
    start = default_card().replace(ea=1.45, ei=1.70, eh=1.50, vt=0.45)  # 9-18 % off
    recipe = Recipe(stages=(Stage("kinetics", ("ea", "ei", "eh", "vt"), "all", 1.0, 100),))
    fit = fit_loop(loop, start, recipe, progress=False)
    final = fit.stages[-1].parameters
    for name in ("ea", "ei", "eh", "vt"):
        got, want, err = final[name]["value"], truth[name], final[name]["stderr"]
        assert abs(got / want - 1) <= 0.10 or abs(got - want) <= 2 * err, (name, got, want)
    assert fit.rms_dec < 0.03  # the noise level: 0.02 dec


def test_the_compared_loop_starts_from_the_state_the_cards_reset_leaves():
    """The loop is simulated after a burn-in loop: the initial state (x0, w0) no longer
    moves the compared loop, and the fitted card's initial state is the one its RESET
    leaves (:func:`steady_card`), so a sweep from it is already the steady loop."""
    from rram.fit.loop import steady_card

    loop = synthetic_loop(default_card(), 0.0, seed=1)
    a, b = (simulate_loops(loop, [default_card().replace(x0=x0, w0=w0)])
            for x0, w0 in ((3.4e-9, 5e-10), (1.0e-9, 5e-9)))
    # the CF's width keeps ~0.5 % of its start through one loop (5.82 against 5.85 nm)
    assert np.allclose(a.current, b.current, rtol=0.02, atol=1e-12)
    assert a.v_set == pytest.approx(b.v_set, abs=1e-3)
    steady = steady_card(loop, default_card())
    assert steady["x0"] != default_card()["x0"]
    # the steady card's own burn-in leaves it where it started
    again = steady_card(loop, steady)
    assert again["x0"] == pytest.approx(steady["x0"], rel=1e-3)
    assert again["w0"] == pytest.approx(steady["w0"], rel=1e-2)  # the width's memory


@pytest.fixture(scope="module")
def tud_fit():
    loops = build_loops(load_iv(SET_FILE) + load_iv(RESET_FILE))
    loop = median_cycle(loops)
    return loop, fit_loop(loop, default_card(), progress=False)


@pytest.mark.slow
def test_tud_median_cycle_fits_within_the_targets(tud_fit):
    loop, fit = tud_fit
    data = trace_metrics(loop)
    assert loop.polarity == -1 and loop.icc_set == pytest.approx(5e-4, rel=1e-3)
    assert fit.rms_dec <= 0.15
    assert abs(fit.v_set[1] - data["v_set_V"]) <= 0.05
    assert abs(fit.v_reset[1] - data["v_reset_V"]) <= 0.05
    assert fit.card["polarity"] == -1


@pytest.mark.slow
def test_the_loop_fit_reproduces_the_committed_tud_card(tmp_path):
    """``make fit``'s loop fit (its command, with OpenBLAS's Haswell kernels pinned as the
    Makefile pins them) ends at the committed card's identified values: a change of the
    model or the fit that moves them needs the card, its per-cycle scatter and its
    variation spec refitted together."""
    import os

    root = DATA.parents[1]
    out = tmp_path / "card.json"
    subprocess.run([sys.executable, "-m", "rram.cli", "fit", str(SET_FILE), str(RESET_FILE),
                    "--recipe", str(root / "recipes" / "default.json"), "--holdout", "0.1",
                    "--out", str(out)], check=True, capture_output=True,
                   env={**os.environ, "OPENBLAS_CORETYPE": "Haswell"})
    fit, committed = load_card(out), load_card(root / "results" / "tud_H16248L_M12.card.json")
    assert fit.meta["provenance"]["cycle"] == committed.meta["provenance"]["cycle"]
    fitted = committed.meta["fit"]["identification"]["fitted"]
    assert set(fit.meta["fit"]["identification"]["fitted"]) == set(fitted)
    for name in fitted:
        assert fit[name] == pytest.approx(committed[name], rel=0.01), name


def test_the_width_penalty_keeps_the_fitted_cf_inside_the_cell():
    """A CF wider than the recipe's fraction of wcf costs one residual unit per 2 % of
    wcf; a failed simulation costs as much as a failed point; a recipe without the bound
    adds no row."""
    import dataclasses

    from rram.errors import InputError
    from rram.fit.objective import FAILED_RESIDUAL, LoopMeasurement, width_penalty

    wcf = 30e-9
    assert width_penalty(0.4 * wcf / 1e-9, wcf, 0.45) == 0.0
    assert width_penalty(0.45 * wcf / 1e-9, wcf, 0.45) == 0.0
    assert width_penalty(0.49 * wcf / 1e-9, wcf, 0.45) == pytest.approx(2.0)
    assert width_penalty(float("nan"), wcf, 0.45) == FAILED_RESIDUAL
    loop = synthetic_loop(default_card(), 0.0, seed=1)
    stage = Stage("kinetics", ("ea",), "all", 1.0, 5)
    free = Recipe(stages=(stage,))
    bounded = dataclasses.replace(free, max_width_fraction=0.1)  # 3 nm: the LRS is wider
    m = LoopMeasurement(loop)
    rows = {name: m.rows([default_card()], m.point_mask("all"), stage, recipe, None)[0]
            for name, recipe in (("free", free), ("bounded", bounded))}
    assert rows["bounded"].size == rows["free"].size + 1
    assert np.array_equal(rows["bounded"][:-1], rows["free"])
    assert rows["bounded"][-1] > 1.0
    with pytest.raises(InputError, match="max_width_fraction"):
        dataclasses.replace(free, max_width_fraction=1.5)


def test_the_per_cycle_fits_keep_the_recipe_the_card_was_fitted_with():
    """`rram fit-cycles` refits each loop within the card's own recipe (its provenance):
    a card fitted without the width bound gets an unbounded scatter; a card that was not
    fitted, the model's default recipe."""
    import dataclasses

    from rram.fit.cycles import scatter_recipe
    from rram.fit.recipe import recipe_of

    tud = load_card(DATA.parents[1] / "results" / "tud_H16248L_M12.card.json")
    assert recipe_of(tud).to_json() == default_recipe().to_json()
    free = dataclasses.replace(default_recipe(), max_width_fraction=None,
                               exclude_switching_samples=True)
    card = tud.with_meta(provenance={**tud.meta["provenance"],
                                     "recipe": json.loads(free.to_json())})
    scatter = scatter_recipe(recipe_of(card))
    assert scatter.max_width_fraction is None and scatter.exclude_switching_samples
    assert scatter_recipe(recipe_of(default_card())).max_width_fraction == 0.45


@pytest.mark.slow
def test_a_width_bound_keeps_the_fitted_lrs_inside_the_cell(tud_fit):
    """One compliance does not split R_LRS into the CF's resistivity and its width: the
    default recipe's ``max_width_fraction`` (0.45) keeps the fitted loop's CF within
    0.45·wcf; fitted without it, the TUD loop builds its LRS from a wider CF at the same
    RMS: 0.62·wcf here, 25.8 of 30 nm with `make fit`'s Haswell kernels (where the
    variation fit loses its R_LRS carrier: ln-spread 0.037 against 0.66, 4 of 14
    checks)."""
    import dataclasses

    loop, bounded = tud_fit
    assert default_recipe().max_width_fraction == 0.45
    free = fit_loop(loop, default_card(),
                    dataclasses.replace(default_recipe(), max_width_fraction=None),
                    progress=False)
    widest = {k: float(np.nanmax(simulate_loops(loop, [f.card]).width[0])) * 1e-9
              / f.card["wcf"] for k, f in (("bounded", bounded), ("free", free))}
    assert widest["bounded"] <= 0.46 and widest["free"] >= 0.55, widest
    assert bounded.rms_dec <= 0.145 and free.rms_dec <= 0.145


@pytest.mark.slow
def test_every_parameter_reported_as_fitted_is_identified(tud_fit):
    from rram.fit.identify import MAX_CORRELATION, MAX_RELATIVE_ERROR
    from rram.fit.recipe import default_recipe
    from rram.fit.report import fitted_card
    from rram.model import MODEL

    loop, fit = tud_fit
    ident = fit.identification
    names = {n for st in default_recipe().stages for n in st.parameters}
    assert set(ident["fitted"]) | set(ident["fixed"]) == names
    assert len(ident["fitted"]) >= 5  # the loop does determine the main ones
    for name, p in ident["fitted"].items():
        assert p["relative_error"] <= MAX_RELATIVE_ERROR, name
    assert all(abs(r) <= MAX_CORRELATION for r in ident["correlations"].values())
    for name, p in ident["fixed"].items():
        assert p["reason"] and fit.card[name] == p["value"], name
    by_name = {p.name: p for p in MODEL.parameters}
    for name in names:  # nothing outside its physical range
        assert by_name[name].lower <= fit.card[name] <= by_name[name].upper, name
    meta = fitted_card(fit, default_recipe(), "0" * 64, ["x"], loop).meta["fit"]
    assert meta["identification"]["fixed"].keys() == ident["fixed"].keys()


@pytest.mark.slow
@pytest.mark.parametrize("model", ["osdi", "subckt"])
def test_the_fitted_card_reproduces_the_loop_in_ngspice(tud_fit, model, tmp_path):
    loop, fit = tud_fit
    path = tmp_path / "card.json"
    path.write_text(fit.card.to_json().replace("NaN", "null"))
    card = load_card(path)  # what `rram export` reads
    current = simulate_loop_spice(loop, card, model)
    assert abs(loop_rms(loop, current) - fit.rms_dec) <= 0.02


@pytest.mark.slow
def test_rram_sweep_reproduces_the_measured_loop_with_the_fitted_card(tud_fit, tmp_path):
    loop, fit = tud_fit
    card = tmp_path / "card.json"
    card.write_text(fit.card.to_json().replace("NaN", "null"))
    out = tmp_path / "sweep.csv"
    rate = fit.card.meta["fit"]["protocol"]["rate"] if "fit" in fit.card.meta else 0.3445
    run = subprocess.run([sys.executable, "-m", "rram.cli", "sweep", "--card", str(card),
                          "--v-set", "-2.5", "--v-reset", "2.5", "--compliance", "5e-4",
                          "--rate", str(rate), "--out", str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(out)
    v = frame["v_applied_V"].to_numpy()
    # loop order 0 -> v_set -> 0 -> v_reset -> 0
    assert v[np.argmin(v)] == pytest.approx(-2.5) and np.argmin(v) < np.argmax(v)
    data = trace_metrics(loop)
    i = frame["current_A"].to_numpy()
    # V_set: first |I| >= half the compliance; V_reset: first 10 % fall after V > 0
    k_set = int(np.argmax(np.abs(i) >= 2.5e-4))
    assert abs(v[k_set] - data["v_set_V"]) <= 0.05
    pos = np.flatnonzero(v > 0.05)
    ip = np.abs(i[pos])
    k_reset = pos[int(np.argmax(ip < 0.9 * np.maximum.accumulate(ip)))]
    assert abs(v[k_reset] - data["v_reset_V"]) <= 0.05


def write_synthetic_fit_inputs(folder, loops: list[MeasuredLoop]):
    """An I-V file of ``loops`` (one after another in time) and a one-stage recipe
    fitting ``ea``: (iv path, recipe path)."""
    rows = [f"{lp.cycle},{t + 10.0 * k:.9g},{v:.9g},{i:.9g}\n"
            for k, lp in enumerate(loops)
            for t, v, i in zip(lp.time, lp.voltage, lp.current, strict=True)]
    iv = folder / "iv.csv"
    iv.write_text("cycle,time_s,V_V,I_A\n" + "".join(rows))
    recipe = folder / "recipe.json"
    recipe.write_text(Recipe(stages=(Stage("k", ("ea",), "all", 1.0, 10),),
                             icc_reset=10e-3).to_json())
    return iv, recipe


def test_fit_cli_writes_a_card_with_provenance(tmp_path):
    """`rram fit` on a small synthetic file (one kinetics stage)."""
    truth = default_card().replace(ea=1.60)
    iv, recipe = write_synthetic_fit_inputs(tmp_path, [synthetic_loop(truth, 0.01, seed=5)])
    out = tmp_path / "card.json"
    run = subprocess.run([sys.executable, "-m", "rram.cli", "fit", str(iv), "--recipe",
                          str(recipe), "--out", str(out), "--plot", str(tmp_path / "f.png")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    card = json.loads(out.read_text())
    prov = card["meta"]["provenance"]
    assert len(prov["data_sha256"]) == 64 and prov["cycle"] == 1
    assert abs(card["parameters"]["ea"]["value"] / 1.60 - 1) < 0.01
    assert "RMS log10 error" in run.stdout and (tmp_path / "f.png").stat().st_size > 0
    bad = subprocess.run([sys.executable, "-m", "rram.cli", "fit", str(iv), "--cycle", "7",
                          "--out", str(tmp_path / "x.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and "cycle 7" in bad.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.slow
def test_fit_cycles_measures_the_cycle_to_cycle_scatter_of_the_kinetics():
    barriers = [1.60, 1.63, 1.66, 1.69]
    # each loop one cycle from its own initial state, as the per-cycle refits take it
    loops = [synthetic_loop(default_card().replace(ea=ea), 0.01, seed=k, cycle=k,
                            steady=False) for k, ea in enumerate(barriers)]
    table = fit_cycles(loops, default_card(), default_recipe(), progress=False)
    assert (table["error"] == "").all()
    assert np.allclose(table["ea"], barriers, rtol=0.015)  # with eh, kth and x0 free
    true = (np.percentile(barriers, 75) - np.percentile(barriers, 25)) / 1.349
    assert scatter_sigmas(table)["dea"] == pytest.approx(true, rel=0.1)


def test_the_committed_recipe_is_the_default_recipe():
    committed = Path(__file__).resolve().parents[1] / "fitting" / "recipes" / "default.json"
    assert committed.read_text() == default_recipe().to_json()


def test_holdout_rules_split_deterministically():
    from rram.errors import InputError
    from rram.fit.holdout import Holdout

    cycles = list(range(1, 101))
    train, held = Holdout.parse("0.1").split(cycles)
    assert held == list(range(10, 101, 10)) and len(train) == 90
    assert Holdout.parse("20:22").split(cycles)[1] == [20, 21, 22]
    assert Holdout.parse("3, 17,42").split(cycles)[1] == [3, 17, 42]
    for bad in ("0.0", "0.9", "-0.1", "x", "5:3"):
        with pytest.raises(InputError, match="--holdout"):
            Holdout.parse(bad)
    with pytest.raises(InputError, match="held-out"):
        Holdout.parse("200:300").split(cycles)


def test_fit_holdout_reports_errors_on_cycles_the_fit_never_saw(tmp_path):
    """Six cycles of one synthetic device; every 3rd is held out of the fit."""
    truth = default_card().replace(ea=1.60)
    iv, recipe = write_synthetic_fit_inputs(tmp_path, [
        synthetic_loop(truth, 0.01, seed=10 + cycle, cycle=cycle) for cycle in range(1, 7)])
    out = tmp_path / "card.json"
    run = subprocess.run([sys.executable, "-m", "rram.cli", "fit", str(iv), "--recipe",
                          str(recipe), "--out", str(out), "--holdout", "0.34"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    meta = json.loads(out.read_text())["meta"]
    assert meta["provenance"]["cycle"] not in (3, 6)
    assert [c["cycle"] for c in meta["holdout"]["cycles"]] == [3, 6]
    held = meta["holdout"]["held_out"]
    assert held["loops"] == 2 and held["worst_rms_dec"] < 0.05  # the noise: 0.01 dec
    assert held["voltages_within_0.1V"] == 2
    assert "held out" in run.stdout


#: Every 10th TUD cycle with both sweeps (10 loops; the committed fit used cycle 499).
EVERY_TENTH = [50, 150, 250, 350, 450, 550, 650, 750, 850, 1000]


@pytest.mark.slow
@pytest.mark.parametrize("cycle", EVERY_TENTH)
def test_any_cycle_fits_from_the_default_start(cycle, tmp_path):
    """Issue 14 acceptance, per loop (stricter than "worst <= 0.30 dec, voltages within
    100 mV in 9 of 10"): `rram fit --cycle N` with the default recipe and start."""
    from click.testing import CliRunner

    from rram.cli import main

    out = tmp_path / "card.json"
    run = CliRunner().invoke(main, ["fit", str(SET_FILE), str(RESET_FILE), "--cycle",
                                    str(cycle), "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert "verdict of the loop fit: PASS" in run.output
    fit = json.loads(out.read_text())["meta"]["fit"]
    assert fit["rms_log10_decades"] <= 0.30
    for v in ("v_set_V", "v_reset_V"):
        assert abs(fit[v]["model"] - fit[v]["data"]) <= 0.10, (v, fit[v])


def test_a_multi_start_fit_does_not_depend_on_its_start():
    """Issue 14: with screened starts, two starts far apart (and far from the truth)
    end at the same fit."""
    truth = default_card().replace(ea=1.60, eh=1.32)
    loop = synthetic_loop(truth, noise_dec=0.01, seed=4)
    recipe = Recipe(stages=(Stage("kinetics", ("ea", "eh"), "all", 1.0, 20),),
                    bounds={"ea": (1.0, 2.6), "eh": (0.8, 2.0)})
    fits = [fit_loop(loop, default_card().replace(**start), recipe, progress=False,
                     identify=False, starts=6)
            for start in ({"ea": 1.1, "eh": 1.9}, {"ea": 2.5, "eh": 0.85})]
    assert abs(fits[0].rms_dec - fits[1].rms_dec) <= 0.02
    for name in ("ea", "eh"):
        assert fits[0].card[name] == pytest.approx(fits[1].card[name], rel=0.05)
        assert fits[0].card[name] == pytest.approx(truth[name], rel=0.05)


def test_an_unidentified_parameter_is_set_to_its_documented_value_and_the_rest_refitted(
        tmp_path):
    """Issue 14: the top and bottom contacts are in series, so a loop fixes their sum
    only.  Fitted together from a start far off, they end wherever the path stops; the
    identification sets one to its documented value and refits the rest: ``ea`` lands on
    the truth and the loop on the data."""
    truth = default_card().replace(ea=1.60, rtop=100.0, rbot=100.0)
    loop = synthetic_loop(truth, noise_dec=0.01, seed=4)
    recipe = Recipe(stages=(Stage("kinetics", ("ea", "rtop", "rbot"), "all", 1.0, 20),),
                    log_parameters=("rtop", "rbot"),
                    bounds={"ea": (1.0, 2.6), "rtop": (1.0, 1e3), "rbot": (1.0, 1e3)})
    fit = fit_loop(loop, default_card().replace(ea=1.9, rtop=400.0, rbot=2.0), recipe,
                   progress=False, refit=True)
    ident = fit.identification
    (name,) = set(ident["fixed"])
    assert name in ("rtop", "rbot") and "documented value" in ident["fixed"][name]["reason"]
    assert fit.card[name] == pytest.approx(default_card()[name])
    assert ident["refit"]["kept"] and "ea" in ident["fitted"]
    assert fit.card["ea"] == pytest.approx(truth["ea"], rel=0.02)
    assert fit.rms_dec < 0.03
    # the same through `rram fit --refit`: the card's meta records the refit
    iv, _ = write_synthetic_fit_inputs(tmp_path, [loop])
    (tmp_path / "recipe.json").write_text(recipe.to_json())
    init = tmp_path / "init.json"
    init.write_text(default_card().replace(ea=1.9, rtop=400.0, rbot=2.0).to_json())
    out = tmp_path / "card.json"
    run = subprocess.run([sys.executable, "-m", "rram.cli", "fit", str(iv), "--recipe",
                          str(tmp_path / "recipe.json"), "--card", str(init), "--refit",
                          "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    meta = json.loads(out.read_text())["meta"]["fit"]["identification"]
    # either contact of the pair (the file's 9 digits may send a descent elsewhere)
    assert meta["refit"]["kept"] and len(meta["fixed"]) == 1
    ((fixed, why),) = meta["fixed"].items()
    assert fixed in ("rtop", "rbot") and "documented value" in why["reason"]
    assert load_card(out)[fixed] == pytest.approx(default_card()[fixed])
    # both descents recorded, one kept: the lowest, or the first within DESCENT_MARGIN
    descents = json.loads(out.read_text())["meta"]["fit"]["descents"]
    assert [d["jac_step"] for d in descents] == list(DESCENT_STEPS)
    (kept,) = [d for d in descents if d["kept"]]
    first = descents[0]["rms_log10_decades"]
    assert kept["rms_log10_decades"] <= first
    assert kept is descents[0] or kept["rms_log10_decades"] < first - DESCENT_MARGIN
    assert load_card(out)["ea"] == pytest.approx(truth["ea"], rel=0.02)  # the file: 9 digits


def random_start(recipe: Recipe, seed: int) -> dict[str, float]:
    """Every fitted parameter drawn uniformly within the recipe's bounds (log-uniformly
    for the parameters fitted as log₁₀); the initial gap within the layer."""
    import math

    from rram.fit.multistart import fitted_names

    rng = np.random.default_rng(seed)
    start = {}
    for name in fitted_names(recipe):
        lo, hi = recipe.bounds_of(name)
        if name in recipe.log_parameters:
            start[name] = 10 ** rng.uniform(math.log10(lo), math.log10(hi))
        else:
            start[name] = rng.uniform(lo, hi)
    if "x0" in start:
        start["x0"] = min(start["x0"], default_card()["l0"])
    return start


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "issue 38, open: with the CF's width bounded (0.45 wcf, the default recipe), the "
    "three random starts end at RMS 0.1458 dec with alphah on its upper bound (2 nm), "
    "eh 3.26 eV, ea 2.97 eV, vt 0.876; the run at halved tolerances at 0.1417 dec with "
    "alphah on its lower bound (0.1 nm), eh 1.59 eV, ea 3.62 eV, vt 0.806: two RESET "
    "basins of the eh-alphah valley, each reporting eh within 2-6 %, and both worse than "
    "the default start's 0.1376 dec (the --refit at the documented j0, rho0, kth and "
    "rtop keeps a fit up to 0.02 dec worse)"))
def test_the_loop_fit_depends_neither_on_its_start_nor_on_the_tolerances():
    """Issue 14 acceptance: the TUD median cycle fitted (``--starts 16 --refit``) from 3
    starts drawn within the recipe's bounds, and again with the integrator's tolerances
    halved: every RMS within 0.02 dec of the best, V_set and V_reset within 50 mV, the
    best-determined parameters (ea, ei, eh) identified by every fit, and every parameter
    that any fit identifies within 5 % of the best fit's value or within twice the
    largest relative standard error a fit reports for it, whichever is wider: the fits
    agree to what they claim to know.

    It passed without the CF's width bound (the random starts bit-identical, the halved
    run in the next basin of the ea-alpha-ei-rtop valley within the reported errors).
    With the bound the starts reach two basins of the eh-alphah valley (the xfail's
    figures): issue 38, open."""
    import dataclasses

    from rram.engine.run import Options

    loop = median_cycle(build_loops(load_iv(SET_FILE) + load_iv(RESET_FILE)))
    recipe = default_recipe()
    fits = [fit_loop(loop, default_card(),
                     dataclasses.replace(recipe, start=random_start(recipe, seed)),
                     progress=False, starts=16, refit=True) for seed in range(1, 4)]
    fits.append(fit_loop(loop, default_card(), recipe, progress=False, starts=16,
                         refit=True, options=Options().tightened(2)))
    best = min(fits, key=lambda f: f.rms_dec)
    assert best.rms_dec <= 0.15
    for f in fits:
        assert f.rms_dec - best.rms_dec <= 0.02
        assert abs(f.v_set[1] - f.v_set[0]) <= 0.05
        assert abs(f.v_reset[1] - f.v_reset[0]) <= 0.05
        assert {"ea", "ei", "eh"} <= set(f.identification["fitted"])
    errors: dict[str, float] = {}
    for f in fits:
        for name, entry in f.identification["fitted"].items():
            errors[name] = max(errors.get(name, 0.0), entry["relative_error"])
    for name, error in errors.items():
        rel = max(0.05, 2 * error)
        assert rel <= 0.5, name  # an identified value is known to better than ±25 %
        for f in fits:
            assert f.card[name] == pytest.approx(best.card[name], rel=rel), name
