"""Strict input loaders: every bad file, entry or value is a typed error that names it.

Each test builds its inputs in ``tmp_path`` and runs no simulation (fast, xdist-safe).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rram.card import default_card, load_card, make_card
from rram.errors import CardError, InputError
from rram.fit.cycles import load_scatter, scatter_sigmas
from rram.fit.data import IVCurve, load_distribution, load_iv
from rram.fit.iv import MAX_RMS_DEC, LoopFit, fit_loop
from rram.fit.loop import MeasuredLoop, build_loops
from rram.fit.matching import Evaluator
from rram.fit.recipe import Recipe, Stage, default_recipe, load_recipe
from rram.fit.variation import target_of
from rram.model import MODEL
from rram.variation import Variation, VariationSpec, default_variation, load_variation

SWEEP = [0.0, -0.5, -1.0, -1.5, -1.0, -0.5, 0.0]
IV_HEADER = "cycle,time,V,I\n"
DIST_HEADER = "device,cycle,state,resistance_ohm,v_set_V,v_reset_V\n"
SCATTER_HEADER = "cycle,ea,eh,kth,x0,rms_dec,v_set_V,v_reset_V,error\n"


def iv_rows(volts, amps, cycle=1, t0=0.0) -> str:
    return "".join(f"{cycle},{t0 + k},{v},{i}\n" for k, (v, i) in enumerate(
        zip(volts, amps, strict=True)))


def dist_rows(n: int = 30, v_reset=lambda k: 0.5 + 0.01 * (k % 7)) -> str:
    """``n`` cycles of one device, both states; V_set and V_reset vary unless told."""
    out = []
    for k in range(1, n + 1):
        for state, r in (("LRS", 1e3 * (1 + 0.03 * (k % 5))), ("HRS", 1e5 * (1 + 0.1 * (k % 3)))):
            out.append(f"A,{k},{state},{r},{-1.0 - 0.02 * (k % 4)},{v_reset(k)}\n")
    return "".join(out)


def write(tmp_path, name: str, data: str | bytes):
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def the_default_card_json() -> str:
    return default_card().to_json()


# 1. every loader reads through one strict reader --------------------------------------

GOOD = {
    "card": ("card.json", the_default_card_json(), load_card),
    "variation": ("var.json", default_variation().to_json(), load_variation),
    "recipe": ("recipe.json", default_recipe().to_json(), load_recipe),
    "scatter": ("cycles.csv", SCATTER_HEADER + "1,1.6,1.4,3000,2e-9,0.1,-1.2,0.9,\n",
                load_scatter),
    "distribution": ("dist.csv", DIST_HEADER + dist_rows(2), load_distribution),
    "iv": ("iv.csv", IV_HEADER + iv_rows(SWEEP, [1e-6] * 7), load_iv),
}


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_non_utf8_files_name_the_file_and_the_byte_offset(tmp_path, kind):
    name, text, load = GOOD[kind]
    load(write(tmp_path, "ok_" + name, text))  # the good file loads
    raw = text.encode()
    cut = raw.index(b"\n") + 1  # a Latin-1 byte (é) at the start of line 2
    path = write(tmp_path, name, raw[:cut] + b"\xe9" + raw[cut:])
    with pytest.raises(InputError) as err:
        load(path)
    message = str(err.value)
    assert str(path) in message and "not UTF-8" in message
    assert f"byte offset {cut}" in message and "line 2" in message


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_unreadable_paths_are_input_errors_naming_path_and_reason(tmp_path, kind):
    _, _, load = GOOD[kind]
    for path, reason in ((tmp_path / "absent.txt", "No such file"),
                         (tmp_path, "Is a directory")):
        with pytest.raises(InputError) as err:
            load(path)
        assert str(path) in str(err.value) and reason in str(err.value)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + (IV_HEADER + iv_rows(
        SWEEP, [1e-6] * 7)).encode())
    (curve,) = load_iv(path)
    assert curve.cycle == 1


# 2. empty CSV files ----------------------------------------------------------------

CSV_LOADERS = {"iv": (load_iv, IV_HEADER), "distribution": (load_distribution, DIST_HEADER),
               "scatter": (load_scatter, SCATTER_HEADER)}


@pytest.mark.parametrize("kind", sorted(CSV_LOADERS))
@pytest.mark.parametrize(("body", "message"), [("", "is empty"), ("\n\n", "is empty"),
                                               (None, "has a header but no data rows")])
def test_empty_csv_files_are_refused_naming_the_file(tmp_path, kind, body, message):
    load, header = CSV_LOADERS[kind]
    path = write(tmp_path, f"{kind}.csv", header if body is None else body)
    with pytest.raises(InputError) as err:
        load(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_a_repeated_csv_column_is_refused_not_renamed(tmp_path):
    path = write(tmp_path, "iv.csv", "cycle,time,V,I,I\n1,0,0,0,0\n")
    with pytest.raises(InputError, match="column\\(s\\) I appear more than once"):
        load_iv(path)


# 3. --scatter ----------------------------------------------------------------------

def test_scatter_loader_names_the_missing_columns_of_an_iv_file(tmp_path):
    path = write(tmp_path, "iv.csv", IV_HEADER + iv_rows(SWEEP, [1e-6] * 7))
    with pytest.raises(InputError) as err:
        load_scatter(path)
    assert str(path) in str(err.value)
    assert "missing column(s) ea, eh, kth, error" in str(err.value)


def test_scatter_loader_reads_fit_cycles_tables_and_refuses_bad_rows(tmp_path):
    good = write(tmp_path, "c.csv", SCATTER_HEADER
                 + "1,1.6,1.4,3000,2e-9,0.1,-1.2,0.9,\n"
                 + "2,,,,,,,,InputError: no SET\n"
                 + "3,1.7,1.5,2000,2e-9,0.1,-1.2,0.9,\n")
    table = load_scatter(good)
    assert list(table["error"]) == ["", "InputError: no SET", ""]
    sigmas = scatter_sigmas(table)
    assert sigmas["dea"] == pytest.approx(0.05 / 1.349)
    for row, message in (("4,1.6,garbage,3000,2e-9,0.1,-1.2,0.9,\n", "'garbage' is not"),
                         ("4,1.6,,3000,2e-9,0.1,-1.2,0.9,\n", "'eh' is empty"),
                         ("4,1.6,1.4,0,2e-9,0.1,-1.2,0.9,\n", "'kth': 0 must be > 0"),
                         ("4.5,1.6,1.4,1,2e-9,0.1,-1.2,0.9,\n", "'4.5' is not an integer")):
        bad = write(tmp_path, "bad.csv", SCATTER_HEADER + row)
        with pytest.raises(InputError, match=f"bad.csv, line 2: .*{message}"):
            load_scatter(bad)


def test_scatter_sigmas_refuse_tables_without_enough_fits_or_with_kth_zero():
    iv = pd.DataFrame({"cycle": [1], "time": [0.0], "V": [0.0], "I": [0.0]})
    with pytest.raises(InputError, match=r"missing column\(s\) ea, eh, kth, error"):
        scatter_sigmas(iv)
    failed = pd.DataFrame({"cycle": [1, 2], "ea": [np.nan] * 2, "eh": [np.nan] * 2,
                           "kth": [np.nan] * 2, "error": ["RuntimeError: x"] * 2})
    with pytest.raises(InputError, match="0 successful per-cycle fit"):
        scatter_sigmas(failed)
    zero = pd.DataFrame({"cycle": [1, 2], "ea": [1.6, 1.7], "eh": [1.4, 1.5],
                         "kth": [0.0, 1e3], "error": ["", ""]})
    with pytest.raises(InputError, match="'kth'"):
        scatter_sigmas(zero)


# 4. zero measured spreads ----------------------------------------------------------

def test_a_constant_metric_is_refused_naming_it_and_the_skip(tmp_path):
    path = write(tmp_path, "d.csv", DIST_HEADER + dist_rows(30, v_reset=lambda k: 0.5))
    frame = load_distribution(path)
    with pytest.raises(InputError) as err:
        target_of(frame)
    message = str(err.value)
    assert "v_reset_V has zero spread" in message and str(path) in message
    assert "--skip v_reset_V" in message
    assert "v_reset_V" not in target_of(frame, skip=("v_reset_V",)).metrics


def test_a_tie_heavy_metric_is_floored_at_its_resolution_and_fits_without_crashing(
        tmp_path):
    # rounded to 0.1 V, three quarters of the values tie: the IQR is zero
    path = write(tmp_path, "d.csv", DIST_HEADER + dist_rows(
        40, v_reset=lambda k: 0.6 if k % 4 == 0 else 0.5))
    target = target_of(load_distribution(path))
    spread = target.stats()["v_reset_V"]["spread"]
    assert spread == pytest.approx(0.1 / math.sqrt(12))
    ev = Evaluator(target, {}, default_card(), None, 1, 1, 1, None)
    model = {m: {"median": s["median"] * 1.1, "spread": s["spread"] * 2,
                 "quantiles": [q + 0.1 for q in s["quantiles"]]}
             for m, s in target.stats().items()}
    model["ranks"] = {k: 0.0 for k, _ in target.ranks}
    assert np.all(np.isfinite(ev.residual(model)))


# 5. recipes ------------------------------------------------------------------------

@pytest.mark.parametrize(("change", "message"), [
    ({"stages": []}, "no stages"),
    ({"stages": [{"name": "a", "parameters": []}]}, "fits no parameters"),
    ({"stages": [{"name": "a", "parameters": ["dea"]}]}, "'dea' is not a fittable"),
    ({"stages": [{"name": "a", "parameters": ["ea", "ea"]}]}, "lists ea twice"),
    ({"stages": [{"name": "a", "parameters": ["ea"]}, {"name": "a", "parameters": ["eh"]}]},
     "'a' used twice"),
    ({"stages": [{"name": "a", "parameters": ["ea"], "max_nfev": True}]}, "max_nfev"),
    ({"stages": [{"name": "a", "parameters": ["ea"], "max_nfev": 2.5}]}, "max_nfev"),
    ({"stages": [{"name": "a", "parameters": ["ea"], "voltage_weight": "1"}]},
     "voltage_weight"),
    ({"bounds": {"ea": [0.0, 2.0]}}, "bounds of ea must satisfy 0.1 <= lo"),
    ({"bounds": {"ea": ["a", 2.0]}}, "bounds of ea must be two finite numbers"),
    ({"bounds": {"ea": [True, 2.0]}}, "two finite numbers"),
    ({"start": {"ea": 9.0}}, "start value of ea: 9 is outside"),
    ({"start": {"ea": True}}, "start value of ea: True is not a number"),
    ({"start": {"polarity": -1}}, "cannot set polarity"),
    ({"log_parameters": ["dea"]}, "dea can be negative"),
    ({"icc_reset": 5.0}, "icc_reset must be within [1e-09, 0.1] A"),
    ({"voltage_scale": False}, "voltage_scale"),
    ({"bogus": 1}, "unexpected keyword argument 'bogus'"),
])
def test_recipes_are_validated_at_load(tmp_path, change, message):
    data = json.loads(default_recipe().to_json())
    data.update(change)
    path = write(tmp_path, "recipe.json", json.dumps(data))
    with pytest.raises(InputError) as err:
        load_recipe(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_a_recipe_must_be_a_json_object_with_a_stage_list(tmp_path):
    for text in ("[]", '"x"', '{"stages": "ea"}', '{"stages": ["ea"]}', "{"):
        path = write(tmp_path, "r.json", text)
        with pytest.raises(InputError, match=r"r\.json"):
            load_recipe(path)


# 6. units and plausibility; a failed fit is a failure -------------------------------

def test_currents_in_another_unit_are_refused_naming_the_column(tmp_path):
    path = write(tmp_path, "iv.csv", IV_HEADER + iv_rows(SWEEP, [3e26 * abs(v) / 1.5
                                                                 for v in SWEEP]))
    with pytest.raises(InputError) as err:
        load_iv(path)
    message = str(err.value)
    assert "current column 'I' peaks at 3e+26 A" in message and str(path) in message
    assert "expected amperes below 1 A" in message and "another unit" in message
    volts = write(tmp_path, "v.csv", IV_HEADER + iv_rows([1000 * v for v in SWEEP],
                                                         [1e-6] * 7))
    with pytest.raises(InputError, match=r"voltage column 'V' peaks at 1\.5e\+03 V"):
        load_iv(volts)


def test_compliances_above_100_mA_are_refused_given_or_inferred(tmp_path):
    path = write(tmp_path, "iv.csv", IV_HEADER + iv_rows(SWEEP, [1e-6] * 7))
    with pytest.raises(InputError,
                       match=r"compliance must be within \[1e-09, 0\.1\] A, got .* unit"):
        load_iv(path, compliance=0.5)
    volts = [*SWEEP, 0.5, 1.0, 1.5, 1.0, 0.5, 0.0]
    amps = [0, 1e-3, 0.5, 0.5, 0.5, 0.5, 1e-2, 0.2, 0.4, 1e-2, 5e-3, 2e-3, 0]  # mA as A
    curves = load_iv(write(tmp_path, "loop.csv", IV_HEADER + iv_rows(volts, amps)))
    with pytest.raises(InputError, match=r"icc_set .* got 0\.5 — is it in another unit"):
        build_loops(curves)


def test_a_fit_beyond_one_decade_reports_why_it_failed():
    def fit(rms: float) -> LoopFit:
        pair = (1.0, 1.0)
        return LoopFit(default_card(), [], rms, pair, pair, pair, pair, np.zeros(1), 0.0)

    assert MAX_RMS_DEC == 1.0
    assert fit(0.2).failed_reason() is None
    assert "RMS log10 error 26.4 decades exceeds 1" in fit(26.4).failed_reason()
    assert fit(float("nan")).failed_reason() is not None


# 7. silent leniency -----------------------------------------------------------------

def test_a_card_entry_in_another_unit_is_refused(tmp_path):
    path = write(tmp_path, "card.json", json.dumps(
        {"parameters": {"ea": {"value": 1.4, "unit": "J"}}}))
    with pytest.raises(CardError) as err:
        load_card(path)
    assert "parameter ea: unit 'J' is not its unit 'eV'" in str(err.value)
    assert str(path) in str(err.value)
    aliases = write(tmp_path, "ok.json", json.dumps({"parameters": {
        "rtop": {"value": 30, "unit": "\u03a9"}, "rho0": {"value": 2e-5, "unit": " ohm*m "},
        "kw": {"value": 1.0, "unit": "-"}, "ea": {"value": 1.5}}}))
    assert load_card(aliases)["rtop"] == 30
    typo = write(tmp_path, "typo.json", json.dumps(
        {"parameters": {"ea": {"value": 1.4, "units": "eV"}}}))
    with pytest.raises(CardError, match="parameter ea: unknown key\\(s\\) 'units'"):
        load_card(typo)


@pytest.mark.parametrize("value", [True, "1.6"])
def test_a_card_value_must_be_a_number(tmp_path, value):
    path = write(tmp_path, "card.json", json.dumps({"parameters": {"ea": {"value": value}}}))
    with pytest.raises(CardError, match=r"parameter ea: .* is not a number"):
        load_card(path)


def spec_file(tmp_path, entries: list[dict]):
    return write(tmp_path, "spec.json", json.dumps({"variations": entries}))


@pytest.mark.parametrize("sigma", [True, False, "0.1", None])
def test_a_variation_sigma_must_be_a_number(tmp_path, sigma):
    path = spec_file(tmp_path, [{"parameter": "dea", "kind": "d2d",
                                 "distribution": "normal", "sigma": sigma}])
    with pytest.raises(InputError) as err:
        load_variation(path)
    assert "variation 0: sigma of dea must be a finite number" in str(err.value)
    assert str(path) in str(err.value)


def test_duplicate_and_mixed_variation_entries_are_refused(tmp_path):
    d2d = {"parameter": "kth", "kind": "d2d", "distribution": "lognormal", "sigma": 0.1}
    with pytest.raises(InputError, match="variations 0 and 1: two d2d entries for kth"):
        load_variation(spec_file(tmp_path, [d2d, d2d]))
    c2c = {**d2d, "kind": "c2c", "distribution": "normal", "sigma": 100.0}
    with pytest.raises(InputError) as err:
        load_variation(spec_file(tmp_path, [d2d, c2c]))
    assert "kth is lognormal (d2d) and normal (c2c)" in str(err.value)
    with pytest.raises(InputError, match="two c2c entries for dea"):
        VariationSpec((Variation("dea", "c2c", "normal", 0.1),
                       Variation("dea", "c2c", "normal", 0.2)))


@pytest.mark.parametrize(("line", "message"), [
    ("A,0.5,LRS,1000,-1.0,0.5", "line 2: column 'cycle': '0.5' is not an integer"),
    ("A,x,LRS,1000,-1.0,0.5", "line 2: column 'cycle': 'x' is not a finite number"),
    ("A,1,LRS,1000,garbage,0.5", "line 2: column 'v_set_V': 'garbage' is not a finite"),
    ("A,1,LRS,1000,-1.0,inf", "line 2: column 'v_reset_V': 'inf' is not a finite"),
    (",1,LRS,1000,-1.0,0.5", "line 2: column 'device' is empty"),
    ("A,1,LRS,1000,-1.0,500", "voltage column 'v_reset_V' peaks at 500 V"),
])
def test_distribution_values_are_numbers_and_cycles_integers(tmp_path, line, message):
    path = write(tmp_path, "d.csv", DIST_HEADER + line + "\n" + dist_rows(2))
    with pytest.raises(InputError) as err:
        load_distribution(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_an_empty_voltage_cell_is_not_measured_not_an_error(tmp_path):
    frame = load_distribution(write(tmp_path, "d.csv", DIST_HEADER + "A,1,LRS,1000,,0.5\n"))
    assert math.isnan(frame["v_set_V"].iloc[0]) and frame["v_reset_V"].iloc[0] == 0.5


def test_every_advertised_range_end_is_reachable():
    """A parameter bounded by another (x0 <= l0, w0 <= wcf, wmin < wcf) advertises only
    values some valid card takes."""
    by = {p.name: p for p in MODEL.parameters}
    for name, partner in (("x0", "l0"), ("w0", "wcf")):
        assert by[name].upper <= by[partner].upper, name
        make_card({name: by[name].upper, partner: by[partner].upper})
        make_card({name: by[name].lower, partner: by[partner].lower})
    assert by["wmin"].lower < by["wcf"].lower and by["wmin"].upper < by["wcf"].upper
    make_card(wmin=by["wmin"].upper, wcf=by["wcf"].upper, w0=by["wmin"].upper)
    make_card(wmin=by["wmin"].lower, wcf=by["wcf"].lower, w0=by["w0"].lower)
    for p in MODEL.parameters:  # the others are bounded by nothing else
        if p.name not in ("x0", "l0", "w0", "wcf", "wmin") and not p.choices:
            make_card({p.name: p.lower})
            make_card({p.name: p.upper})


# 8. a fit that ends on a card constraint ---------------------------------------------

def handmade_loop() -> MeasuredLoop:
    """A compliance-limited SET at −1 V (100 µA) and a RESET at +0.8 V, no simulation."""
    up = np.round(np.arange(0, 1.51, 0.1), 2)
    v = np.r_[up, up[-2::-1]]
    t = np.arange(v.size, dtype=float)
    i_set = np.where(np.arange(v.size) < 10, v * 1e-6, np.minimum(v / 1e3, 1e-4))
    i_reset = np.where(np.arange(v.size) <= 8, v / 1e4, v / 1e6)
    return MeasuredLoop(IVCurve(1, t, -v, -i_set, "set"), IVCurve(1, t, v, i_reset, "reset"),
                        icc_set=1e-4)


def test_a_fit_whose_every_trial_violates_a_card_constraint_says_so():
    card = default_card().replace(w0=0.5e-9, wcf=2e-9)
    recipe = Recipe(stages=(Stage("w", ("w0",), "all", 0.0, 3),),
                    bounds={"w0": (5e-9, 10e-9)})  # every w0 exceeds the cell, wcf
    with pytest.raises(InputError, match="stage w: the fitted values violate a card "
                                         "constraint"):
        fit_loop(handmade_loop(), card, recipe, progress=False)


TUD_SUMMARY = (Path(__file__).resolve().parents[1] / "fitting" / "data" / "tud_H16248L_M12"
               / "tud_H16248L_M12_endurance_summary_1000cyc.txt")


def test_the_tud_hrs_is_read_after_the_reset_that_left_it():
    """A cycle's HRS is the one the previous RESET left, read at +0.2 V right after it
    (as the Monte Carlo reads it); the instrument reads the same state again at -0.2 V
    before the SET, 1.38x higher (HRS relaxation or rectification, which the model has
    neither of), while its two reads of the LRS agree to 1 %."""
    from rram.fit.data import load_tud_summary, summary_to_distribution

    after = load_tud_summary(TUD_SUMMARY)
    before = load_tud_summary(TUD_SUMMARY, hrs_read="before-set")
    assert len(after) == len(before) == 1000
    assert math.isnan(after["r_hrs_ohm"].iloc[0])  # cycle 1: no RESET before it
    first = TUD_SUMMARY.read_text(encoding="utf-8-sig").splitlines()[2].split("\t")
    assert after["r_hrs_ohm"].iloc[1] == pytest.approx(0.2 / float(first[15]))
    ratio = np.log(before["r_hrs_ohm"] / after["r_hrs_ohm"]).dropna()
    assert np.exp(np.median(ratio)) == pytest.approx(1.38, abs=0.01)
    from scipy.stats import spearmanr

    ok = after["r_hrs_ohm"].notna()
    assert spearmanr(after["r_hrs_ohm"][ok], before["r_hrs_ohm"][ok]).statistic > 0.9
    assert (after[["cycle", "v_set_V", "v_reset_V", "r_lrs_ohm"]]
            .equals(before[["cycle", "v_set_V", "v_reset_V", "r_lrs_ohm"]]))
    rows = summary_to_distribution(after)
    assert len(rows) == 1999 and not rows["resistance_ohm"].isna().any()
    with pytest.raises(InputError, match=r"hrs_read 'later'.*after-reset, before-set"):
        load_tud_summary(TUD_SUMMARY, hrs_read="later")
