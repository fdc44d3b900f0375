"""Variation fitting: a distribution simulated from a known spec is reproduced."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rram.card import default_card, load_card
from rram.fit.data import load_distribution
from rram.fit.variation import fit_variation, protocol_of, target_of
from rram.mc import MonteCarlo, run_devices
from rram.variation import Variation, VariationSpec, load_variation

TRUE_SPEC = VariationSpec((
    Variation("kth", "c2c", "lognormal", 0.3, shift=0.1),
    Variation("deh", "c2c", "normal", 0.05),
    Variation("dea", "c2c", "normal", 0.04, shift=-0.02),
    Variation("dei", "c2c", "normal", 0.05),
))


def as_distribution(frame: pd.DataFrame) -> pd.DataFrame:
    """A Monte Carlo frame as a measured table: an HRS row holds the state its cycle's
    SET starts from (the previous cycle's RESET left it; the first cycle has none)."""
    frame = frame.sort_values(["device", "cycle"])
    before = frame.groupby("device")["r_hrs_ohm"].shift(1)
    rows = []
    for state, r in (("LRS", frame["r_lrs_ohm"]), ("HRS", before)):
        rows.append(pd.DataFrame({"device": frame["device"].astype(str),
                                  "cycle": frame["cycle"], "state": state,
                                  "resistance_ohm": r,
                                  "v_set_V": frame["v_set_V"],
                                  "v_reset_V": frame["v_reset_V"]}))
    return pd.concat(rows, ignore_index=True).dropna(subset=["resistance_ohm"])


#: A formed device in its steady cycle (the default loop's HRS), so every simulated
#: cycle is like the next (the pristine cell's forming SET is another distribution).
FORMED = default_card().replace(x0=1.94e-9, w0=5.8e-9)


@pytest.mark.slow
def test_a_simulated_distribution_is_reproduced_within_ten_percent():
    measured = run_devices(MonteCarlo(card=FORMED, spec=TRUE_SPEC, devices=150, cycles=2,
                                      seed=11, burn_in=1), range(150))
    target = target_of(as_distribution(measured[measured["converged"]]))
    fit = fit_variation(target, FORMED, devices=100, cycles=2, seed=1, rounds=6,
                        polish_nfev=0)
    for m in target.metrics:
        d, s = fit.data_stats[m], fit.model_stats[m]
        if m.startswith("r_"):
            assert abs(s["median"] / d["median"] - 1) <= 0.10, m
        else:
            assert abs(s["median"] - d["median"]) <= 0.10 * d["spread"], m
        assert abs(s["spread"] / d["spread"] - 1) <= 0.10, (m, s["spread"], d["spread"])
    # the whole distributions, not only two moments, agree
    assert max(fit.ks().values()) < 0.2


TUD = Path(__file__).resolve().parents[1] / "fitting"
TUD_DIST = TUD / "data" / "tud_H16248L_M12" / "tud_H16248L_M12_distribution.csv"
TUD_CARD = TUD / "results" / "tud_H16248L_M12.card.json"
TUD_SPEC = TUD / "results" / "tud_H16248L_M12.variation.json"


@functools.cache
def _committed_sample():
    """The committed TUD spec on a seed other than the fit's, 1000 devices x 2 cycles
    after one burn-in cycle, with the data it was fitted to."""
    from rram.fit.variation import simulate_metrics

    card = load_card(TUD_CARD)
    spec = load_variation(TUD_SPEC)
    target = target_of(load_distribution(TUD_DIST))
    return card, spec, target, simulate_metrics(card, spec, protocol_of(card), 1000, 2, 7)


def test_the_fitted_tud_spec_stays_in_the_range_of_validity():
    """Issue 36: none of the 2000 device-cycles of the committed spec outside the model's
    range of validity (measured on seeds 7-11: none of 10 000, the hottest CF 866-950 K;
    a card whose LRS CF filled 26 of its 30 nm ran 7.6 % out, and a narrowed cell in the
    upper configuration 28-30 %); the four carriers are the physical ones, and any
    geometry of the upper configuration a path through the layer (``l0``) that no
    cycle's spread carries; every sample converges, <= 3 % failed SETs, and
    Spearman(R_HRS, next |V_set|) within 0.2 of the data's."""
    from rram.fit.target import rank_correlations
    from rram.validity import count_out_of_range

    card, spec, target, frame = _committed_sample()
    saved = json.loads(TUD_SPEC.read_text())
    assert saved["provenance"]["card_sha256"] == card.digest
    assert {v.parameter for v in spec.variations if v.sigma} == {"rtop", "deh", "dea", "dei"}
    assert {v.parameter for v in spec.variations if not v.sigma} <= {"l0"}
    assert len(frame) == 2000  # every device converged in every cycle
    assert count_out_of_range(frame) == 0
    data_rank = dict(target.ranks)["r_hrs_ohm~|v_set_V|"]
    assert abs(rank_correlations(frame)["r_hrs_ohm~|v_set_V|"] - data_rank) <= 0.2
    assert (frame["reason"] == "no_set").mean() <= 0.03


@pytest.mark.xfail(strict=True, reason=(
    "issue 38, open: the committed spec fails 0.56 % of its RESETs after a SET that "
    "switched (seed 7; 0.51-0.66 % on seeds 7-11), the device none of 987: its contact's "
    "lognormal tail holds their current below the switch (all 11 of seed 7 have a "
    "contact of 2.4-15 kOhm, beyond its 93rd percentile)"))
def test_the_fitted_tud_spec_resets_as_the_device_does():
    """Issue 38: none of the record's RESETs after a SET that switched failed; the
    modelled share is within the verdict's floor (0.5 %)."""
    from rram.fit.verdict import FAILURE_FLOOR
    from rram.metrics import failed_reset_share

    _, _, target, frame = _committed_sample()
    assert target.failed_resets == 0.0
    assert failed_reset_share(frame["reason"]) <= FAILURE_FLOOR


def test_the_fitted_tud_spec_sets_reach_the_compliance_as_measured():
    """Issue 38: every one of the 101 stored measured SET curves reaches the 500 uA
    compliance (none of them is of the record's failed SETs, cycles 977-989); the
    modelled share of the SETs that switched that reach it (95 % of the limit) is within
    2 points of that (measured on seed 7: 99.35 % before the spec's SET-failure
    episodes; the others are cycles whose drawn contact, tens of kOhm in the spec's wide
    lognormal tail, holds the current below)."""
    from rram.metrics import did_not_switch

    card, _, _, frame = _committed_sample()
    icc = protocol_of(card).icc_set
    switched = frame[~did_not_switch(frame["reason"])]
    assert (switched["i_peak_A"] >= 0.95 * icc).mean() >= 0.98


def test_the_fitted_tud_spec_reproduces_the_measured_distributions():
    """On another seed than the fit's, the verdict's figures (rram.fit.verdict, issue 38):
    the medians of R_LRS and R_HRS within 10 %, every spread within 15 %, KS <= 0.10 for
    each metric.  Issue 14 asked the resistances' spreads within 10 %, which the spec
    fitted on the width-bounded card misses: measured on seeds 7-11, medians -3.5 to
    -8.1 %, spreads of R_LRS 0.90-0.92 and of R_HRS 1.07-1.17 of the data's (1.119 on
    this seed), KS <= 0.096."""
    from rram.fit.holdout import distribution_errors
    from rram.fit.verdict import KS_MAX, MEDIAN_MAX, SPREAD_MAX

    _, _, target, frame = _committed_sample()
    errors = distribution_errors({"data": target}, frame).set_index("metric")
    for m, median, spread in (("r_lrs_ohm", MEDIAN_MAX, SPREAD_MAX),
                              ("r_hrs_ohm", MEDIAN_MAX, SPREAD_MAX),
                              ("v_set_V", math.inf, SPREAD_MAX),
                              ("v_reset_V", math.inf, SPREAD_MAX)):
        e = errors.loc[m]
        assert abs(e.median_error) <= median, (m, e.to_dict())
        assert abs(e.spread_ratio - 1) <= spread, (m, e.to_dict())
        assert e.ks <= KS_MAX, (m, e.to_dict())


@functools.cache
def _as_the_device_ran():
    """The committed spec run as the device ran: 20 devices x 500 cycles after a
    burn-in cycle, at the card's protocol (about a minute)."""
    card, spec = load_card(TUD_CARD), load_variation(TUD_SPEC)
    return run_devices(MonteCarlo(card=card, spec=spec, devices=20, cycles=500, seed=1,
                                  protocol=protocol_of(card), burn_in=1), range(20))


def _robust_ln_spread(values) -> float:
    x = np.log(np.asarray(values, float)[np.isfinite(values)])
    q25, q75 = np.percentile(x, [25, 75])
    return float((q75 - q25) / 1.349)


@pytest.mark.slow
def test_the_fitted_tud_spec_run_as_the_device_ran_keeps_its_spreads():
    """Issue 38: the spec was fitted to the device's 1000 cycles; run as 20 devices x
    500 cycles its robust spreads of ln R_LRS and ln R_HRS are within 15 % of the
    record's (measured: 0.688 against 0.652, 0.724 against 0.742; the spec before the
    refit of issue 36 gave 0.37 against 0.65)."""
    frame = _as_the_device_ran()
    data = load_distribution(TUD_DIST)
    for state, column in (("LRS", "r_lrs_ohm"), ("HRS", "r_hrs_ohm")):
        model = _robust_ln_spread(frame[column])
        measured = _robust_ln_spread(data.loc[data["state"] == state, "resistance_ohm"])
        assert abs(model / measured - 1) <= 0.15, (state, model, measured)


@pytest.mark.slow
def test_the_fitted_tud_spec_fails_sets_as_the_device_did():
    """Issue 38: the record fails 1.3 % of its SETs, all in one run of 13 cycles
    (977-989); the spec run as the device ran fails within a factor 2 of that share
    (0.94 %), and in runs (its SET-failure episodes, rram.episodes: before them 0.22 %
    in runs of at most 2)."""
    from rram.fit.episodes import failure_runs

    frame = _as_the_device_ran()
    data = load_distribution(TUD_DIST)
    modelled = frame["reason"].str.contains("no_set").mean()
    measured = data["reason"].str.contains("no_set").mean()
    assert 0.5 <= modelled / measured <= 2.0, (modelled, measured)
    runs = np.array(failure_runs(frame))
    # failures in runs of many cycles (measured: 0.94 % failed, runs of up to 20 cycles
    # holding 53 % of them; the barriers' tails add single ones)
    assert runs.max() >= 10 and runs[runs >= 3].sum() >= 0.4 * runs.sum(), runs


def test_the_fitted_tud_spec_gives_the_same_samples_in_ngspice():
    """The held draws (the contact ``rtop`` from SET to RESET) reach ngspice as they
    reach the Python engine: the same samples, within 1 % (V) and 2 % (R)."""
    card = load_card(TUD_CARD)
    spec = load_variation(TUD_SPEC)
    frames = [run_devices(MonteCarlo(card=card, spec=spec, devices=4, cycles=2, seed=3,
                                     protocol=protocol_of(card), engine=engine), range(4))
              for engine in ("python", "veriloga")]
    py, sp = frames
    assert py["converged"].all() and sp["converged"].all()
    drawn = [c for c in py.columns if c.endswith(("_set", "_reset"))]
    assert py[drawn].equals(sp[drawn])  # the same draws
    # An HRS above 10 MOhm (here 37 MOhm: deh -0.95 eV, one sample of the refitted spec)
    # hangs on its RESET's end gap through exp(x/xt): the engines, each at its default
    # tolerances, read it 7 % apart (a gap 0.03 nm apart); they are compared below it.
    shallow = py["r_hrs_ohm"].to_numpy(float) < 1e7
    for col, tol in (("v_set_V", 0.01), ("v_reset_V", 0.01), ("r_lrs_ohm", 0.02),
                     ("r_hrs_ohm", 0.02)):
        a, b = py[col].to_numpy(float), sp[col].to_numpy(float)
        assert np.array_equal(np.isnan(a), np.isnan(b)), col
        ok = ~np.isnan(a) & (shallow if col == "r_hrs_ohm" else True)
        assert np.all(np.abs(b[ok] / a[ok] - 1) <= tol), (col, a, b)
    assert shallow.sum() >= 7


def test_fit_variation_holdout_reports_held_out_errors(tmp_path):
    """`rram fit-variation --holdout 0.1`: every 10th cycle is left out of the fit and
    the model's errors on it are reported and written beside the training errors."""
    import json

    from click.testing import CliRunner

    from rram.cli import main

    out = tmp_path / "v.json"
    run = CliRunner().invoke(main, [
        "fit-variation", str(TUD_DIST), "--card", str(TUD_CARD), "--devices", "20",
        "--refine-devices", "0", "--cycles", "1", "--rounds", "1", "--polish", "0",
        "--holdout", "0.1", "--no-memory", "--accept", "--out", str(out)])
    assert run.exit_code == 0, run.output
    hold = json.loads(out.read_text())["holdout"]
    rows = {(r["data"], r["metric"]): r for r in hold["errors"]}
    metrics = ("r_lrs_ohm", "r_hrs_ohm", "v_set_V", "v_reset_V")
    assert {m for _, m in rows} == set(metrics)
    # 1000 measured cycles: 900 train the fit, 100 are held out.  Cycle 1 has no HRS read
    # after a RESET (V_reset rides on the HRS rows); cycles 977-989 neither SET nor RESET
    # (no switching voltage): 12 in training, cycle 980 held out.
    n = {"r_lrs_ohm": (900, 100), "r_hrs_ohm": (899, 100), "v_set_V": (888, 99),
         "v_reset_V": (887, 99)}
    for m in metrics:
        assert (rows["training", m]["n"], rows["held out", m]["n"]) == n[m], m
        assert 0 <= rows["held out", m]["ks"] <= 1
    assert hold["rows_held_out"] == 200  # an LRS and an HRS row per cycle
    assert "held out" in run.output
    fitted = json.loads(out.read_text())["fit"]
    assert fitted["failed_sets"]["data"] == pytest.approx(12 / 900)  # cycles 977-989
    assert "failed SETs: data 1.3 %" in run.output
    drift = json.loads(out.read_text())["drift"]  # of all the measured cycles
    assert drift["r_lrs_ohm"]["n"] == 1000 and drift["r_lrs_ohm"]["drifts"] is True
    assert "drift" in run.output


def _record(phi: float, devices: int, cycles: int, seed: int, slow: float = 1.0
            ) -> pd.DataFrame:
    """A distribution table whose ln R and V are a ``slow`` share of an AR(1) path in the
    cycle with coefficient ``phi`` (0: independent cycles) plus independent noise, each
    device around its own centre."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(devices):
        z = np.empty((cycles, 4))
        z[0] = rng.standard_normal(4)
        for k in range(1, cycles):
            z[k] = phi * z[k - 1] + np.sqrt(1 - phi**2) * rng.standard_normal(4)
        z = np.sqrt(slow) * z + np.sqrt(1 - slow) * rng.standard_normal(z.shape)
        centre = rng.normal(0, 0.1, 4)
        for k in range(cycles):
            v = centre + z[k] * (0.3, 0.5, 0.15, 0.1)
            for state, r in (("LRS", 2e3 * np.exp(v[0])), ("HRS", 1e5 * np.exp(v[1]))):
                rows.append((f"d{d}", k + 1, state, r, -1 + v[2], 0.9 + v[3]))
    return pd.DataFrame(rows, columns=["device", "cycle", "state", "resistance_ohm",
                                       "v_set_V", "v_reset_V"])


def test_the_drift_statistics_tell_independent_cycles_from_a_wandering_record():
    """Independent cycles: lag-1 ρ ≈ 0, halves within the i.i.d. bound.  An AR(1)
    record (φ = 0.9): ρ ≈ 0.9 and an effective sample of n·(1 − ρ)/(1 + ρ).  The TUD
    device: every metric drifts (its R_LRS steps from ~1.3 to ~3.2 kΩ after cycle 600)."""
    from rram.fit.drift import drift_lines, drift_stats

    iid = drift_stats(_record(0.0, 8, 200, seed=1))  # halves of 800: bound 0.068
    for m, s in iid.items():
        assert abs(s["lag1"]) < 0.08 and s["n"] == 1600, (m, s)
        assert not s["drifts"] and s["ks_halves"] < s["ks_bound"] < 0.07, (m, s)
        assert s["n_effective"] > 1300
    slow = drift_stats(_record(0.9, 8, 200, seed=2))
    for m, s in slow.items():
        assert 0.82 < s["lag1"] < 0.95, (m, s)
        assert s["n_effective"] == pytest.approx(1600 * (1 - s["lag1"]) / (1 + s["lag1"]))
    lrs_only = _record(0.0, 2, 40, seed=5)
    only = drift_stats(lrs_only[lrs_only["state"] == "LRS"])
    assert set(only) == {"r_lrs_ohm", "v_set_V"}  # no HRS rows: no HRS metrics
    tud = drift_stats(load_distribution(TUD_DIST))
    assert all(s["drifts"] for s in tud.values())
    assert tud["r_lrs_ohm"]["lag1"] > 0.7 and tud["r_lrs_ohm"]["ks_halves"] > 0.6
    assert tud["r_lrs_ohm"]["ks_bound"] == pytest.approx(1.358 * np.sqrt(2 / 500))
    assert "warning: r_lrs_ohm, r_hrs_ohm, v_set_V, v_reset_V drift" in drift_lines(tud)[-1]
    assert "warning" not in "\n".join(drift_lines(iid))


def test_rank_correlations_pair_each_hrs_with_the_next_set():
    """A simulated cycle is SET then RESET: the HRS a RESET leaves is the gap the *next*
    cycle's SET closes, so R_HRS pairs with V_set one cycle later (a measured cycle reads
    the HRS before its SET: one row)."""
    from rram.fit.target import pair_name, rank_correlations

    rng = np.random.default_rng(3)
    devices, cycles = 20, 6
    gap = rng.normal(size=(devices, cycles + 1))  # gap before each cycle's SET
    frame = pd.DataFrame({
        "device": np.repeat(np.arange(devices), cycles),
        "cycle": np.tile(np.arange(cycles), devices),
        "r_hrs_ohm": np.exp(gap[:, 1:]).ravel(),  # left by this cycle's RESET
        "v_set_V": -(1 + 0.1 * gap[:, :-1]).ravel(),  # this cycle's SET closes the old gap
        "r_lrs_ohm": rng.lognormal(size=devices * cycles),
        "v_reset_V": rng.normal(1, 0.1, devices * cycles),
    })
    ranks = rank_correlations(frame)
    assert ranks[pair_name("r_hrs_ohm", "v_set_V")] == pytest.approx(1.0)
    # the same cycle's V_set belongs to the HRS before: no relation
    same = frame.assign(v_set_V=frame.groupby("device")["v_set_V"].shift(-1))
    assert abs(rank_correlations(same.dropna())[pair_name("r_hrs_ohm", "v_set_V")]) < 0.3


def test_the_target_measures_quantiles_and_rank_correlations_on_one_row():
    from rram.fit.target import QUANTILES, pair_name

    target = target_of(load_distribution(TUD_DIST))
    ranks = dict(target.ranks)
    # cycles 977-989 did not switch: their sweep-end voltages are no V_set or V_reset
    # (with them, 0.570 and 0.661)
    assert ranks[pair_name("r_hrs_ohm", "v_set_V")] == pytest.approx(0.552, abs=0.005)
    assert ranks[pair_name("r_lrs_ohm", "v_reset_V")] == pytest.approx(0.647, abs=0.005)
    lrs = target.stats()["r_lrs_ohm"]
    x = np.log(target.values["r_lrs_ohm"])
    assert lrs["quantiles"] == pytest.approx(np.quantile(x, QUANTILES))


def test_the_variation_residual_sees_a_tail_the_moments_miss():
    """Two models with the measured median and spread but different tails: only the
    quantile rows tell them apart."""
    from rram.fit.matching import Evaluator

    target = target_of(load_distribution(TUD_DIST))
    ev = Evaluator(target, {}, FORMED, None, 1, 1, 1, None)
    same = {**{m: dict(s) for m, s in ev.data.items()}, "ranks": dict(target.ranks)}
    assert np.abs(ev.residual(same)).max() == pytest.approx(0.0, abs=1e-9)
    tail = {**same, "r_lrs_ohm": dict(same["r_lrs_ohm"])}
    q = list(tail["r_lrs_ohm"]["quantiles"])
    q[-1] += 0.5  # a longer upper tail, the same median and interquartile spread
    tail["r_lrs_ohm"]["quantiles"] = q
    assert np.abs(ev.residual(tail)).max() > 1.0
    worse_rank = {**same, "ranks": {k: 0.0 for k in same["ranks"]}}
    assert np.abs(ev.residual(worse_rank)).max() >= 0.5 / 0.05


def test_a_contact_carrier_gives_the_lrs_a_floor_and_a_long_upper_tail():
    """R_LRS = R_CF + rtop: the compliance sets the CF's own resistance, so a lognormal
    contact adds a tail above a floor (ln R_LRS skewed right, unlike the lognormal
    kth's symmetric spread), and its series drop raises V_reset with R_LRS."""
    from scipy.stats import skew, spearmanr

    def run(spec):
        f = run_devices(MonteCarlo(card=FORMED, spec=spec, devices=60, cycles=2, seed=5),
                        range(60))
        return f[f["converged"]]

    bare = run(VariationSpec(()))
    r_cf = float(np.median(bare["r_lrs_ohm"]))
    shift = float(np.log(r_cf / FORMED["rtop"]))  # contacts about as large as the CF
    frame = run(VariationSpec((Variation("rtop", "c2c", "lognormal", 1.0, shift=shift),)))
    ln_r = np.log(frame["r_lrs_ohm"].to_numpy())
    assert np.quantile(frame["r_lrs_ohm"], 0.05) >= 0.95 * r_cf  # the floor: the CF
    assert skew(ln_r) > 0.3
    reset = np.isfinite(frame["v_reset_V"]).to_numpy()
    assert reset.mean() > 0.8
    assert spearmanr(frame["r_lrs_ohm"][reset], frame["v_reset_V"].abs()[reset]).statistic > 0.5


def test_the_slow_share_and_memory_of_a_record_are_recovered():
    """A record of 70 % slow AR(1) variance (correlation time 60 cycles) and 30 %
    independent noise: :func:`rram.fit.drift.slow_part` finds both from the
    autocorrelation; independent cycles have none."""
    from rram.fit.drift import slow_part
    from rram.fit.target import LOG_METRICS, metric_rows

    rows = metric_rows(_record(np.exp(-1 / 60), 4, 1000, seed=3, slow=0.7))
    for m, r in rows.items():
        share, memory = slow_part(r, m in LOG_METRICS)
        assert share == pytest.approx(0.7, abs=0.1), m
        assert memory == pytest.approx(60, rel=0.35), m
    flat = metric_rows(_record(0.0, 4, 1000, seed=4))
    assert all(slow_part(r, False) == (0.0, 0.0) for r in flat.values())


@pytest.mark.slow
def test_fit_variation_gives_a_drifting_record_its_slow_parts(tmp_path):
    """A simulated record (2 devices x 200 cycles) whose kth and deh wander (90 % slow,
    40 cycles): `rram fit-variation` finds the slow parts of their carriers and matches
    the lag-1 correlation of every drifting metric; --no-memory leaves them out."""
    import json

    from click.testing import CliRunner

    from rram.cli import main

    truth = VariationSpec((
        Variation("kth", "c2c", "lognormal", 0.3, slow=0.9, memory=40.0),
        Variation("deh", "c2c", "normal", 0.05, slow=0.9, memory=40.0),
        Variation("dea", "c2c", "normal", 0.04), Variation("dei", "c2c", "normal", 0.05)))
    record = run_devices(MonteCarlo(card=FORMED, spec=truth, devices=2, cycles=200, seed=11),
                         range(2))
    path = tmp_path / "record.csv"
    as_distribution(record[record["converged"]]).to_csv(path, index=False)
    quick = ["--devices", "20", "--cycles", "2", "--rounds", "1", "--polish", "0"]
    run = CliRunner().invoke(main, ["fit-variation", str(path), *quick, "--out",
                                    str(tmp_path / "s.json")])
    assert run.exit_code == 0, run.output
    saved = json.loads((tmp_path / "s.json").read_text())
    slow = {v["parameter"]: v for v in saved["variations"] if v.get("slow")}
    carriers = dict(saved["fit"]["carriers"])
    for m in ("r_lrs_ohm", "r_hrs_ohm"):  # kth and deh's metrics: found slow
        assert slow[carriers[m]]["slow"] > 0.7 and 20 < slow[carriers[m]]["memory"] < 80
    for m, d in saved["drift"].items():
        if d["drifts"]:
            assert abs(saved["model_drift"][m]["lag1"] - d["lag1"]) <= 0.1, m
    assert "slow C2C parts" in run.output
    run = CliRunner().invoke(main, ["fit-variation", str(path), *quick, "--no-memory",
                                    "--out", str(tmp_path / "n.json")])
    saved = json.loads((tmp_path / "n.json").read_text())
    assert not any(v.get("slow") for v in saved["variations"]) and "model_drift" not in saved


@functools.cache
def _committed_drift():
    from rram.fit.drift import drift_stats
    from rram.fit.slow import record_drift, simulated_record

    card, spec = load_card(TUD_CARD), load_variation(TUD_SPEC)
    data = drift_stats(load_distribution(TUD_DIST))
    return data, record_drift(simulated_record(card, spec, protocol_of(card), 1000, seed=5))


@pytest.mark.slow
def test_the_committed_tud_spec_drifts_like_the_record():
    """The committed spec's slow parts, run with another seed than the fit's: four
    simulated devices of 1000 cycles have the measured lag-1 correlation of R_LRS, R_HRS
    and V_set (within 0.1) and drift (their halves differ beyond the i.i.d. bound in
    R_LRS, R_HRS and V_reset, as the record does)."""
    data, model = _committed_drift()
    for m in ("r_lrs_ohm", "r_hrs_ohm", "v_set_V"):
        assert abs(model[m]["lag1"] - data[m]["lag1"]) <= 0.1, (m, model[m], data[m])
    for m in ("r_lrs_ohm", "r_hrs_ohm", "v_reset_V"):
        assert model[m]["drifts"], (m, model[m])


@pytest.mark.slow
def test_the_committed_tud_spec_has_the_measured_v_reset_memory():
    """V_reset's lag-1 within 0.1 of the record's 0.772: measured 0.710 (the spec fitted
    on the width-bounded card; 0.62-0.69 on earlier specs, whose contact's fast part
    moved V_reset from cycle to cycle)."""
    data, model = _committed_drift()
    m = "v_reset_V"
    assert abs(model[m]["lag1"] - data[m]["lag1"]) <= 0.1, (m, model[m], data[m])


def test_the_moment_step_is_stable_where_two_carriers_move_the_medians_alike():
    """Two carriers whose sensitivities differ by a few per cent (the TUD fit with the
    generation barrier bounded: a 2 % change in one probe flipped the exact step and the
    fit diverged, KS 0.38): the damped step changes by < 3 % with a 2 % probe change,
    where the exact least-squares step moves by 40 % and is 15x longer; on a
    well-conditioned system it is the exact step within the damping."""
    from rram.fit.matching import RIDGE, damped_lstsq

    a = np.array([[1.0, 1.0], [1.0, 1.02], [0.5, 0.49]])
    b = np.array([1.0, 0.9, 0.6])
    probed = a.copy()
    probed[1, 1] *= 1.02
    exact = [np.linalg.lstsq(m, b, rcond=None)[0] for m in (a, probed)]
    damped = [damped_lstsq(m, b) for m in (a, probed)]
    assert np.max(np.abs(exact[1] - exact[0])) >= 0.3 * np.max(np.abs(exact[0]))
    assert np.max(np.abs(damped[1] - damped[0])) <= 0.03 * np.max(np.abs(damped[0]))
    assert np.linalg.norm(a @ damped[0] - b) <= 0.15 * np.linalg.norm(b)  # most of the miss
    well = np.eye(2)
    assert np.allclose(damped_lstsq(well, np.array([1.0, -2.0])),
                       np.array([1.0, -2.0]) / (1 + RIDGE))
