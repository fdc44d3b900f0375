"""Two modes in a measured distribution (rram.fit.modes)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rram.fit.data import load_distribution
from rram.fit.modes import mixture
from rram.fit.target import target_of

TUD = "fitting/data/tud_H16248L_M12/tud_H16248L_M12_distribution.csv"


def test_a_mixture_of_two_normals_is_recovered_and_one_normal_is_not_bimodal():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(7.2, 0.2, 700), rng.normal(8.1, 0.15, 300)])
    m = mixture(x)
    assert m.share == pytest.approx(0.3, abs=0.03)
    assert m.separation == pytest.approx(0.9, abs=0.05)
    assert m.bimodal
    assert not mixture(rng.normal(0, 1, 1000)).bimodal
    # a skewed tail (a wide component under a narrow one) is not a second mode
    tail = np.concatenate([rng.normal(0, 0.6, 850), rng.normal(1.5, 0.9, 150)])
    assert not mixture(tail).bimodal
    assert mixture(np.ones(50)) is None and mixture(x[:5]) is None
    # a component collapsed onto repeated values (a clipped or rounded sample) is no mode
    one = rng.normal(0, 1, 2000)
    for sample in (np.minimum(one, np.quantile(one, 0.9)), np.round(one, 1)):
        m = mixture(sample)
        assert m is None or not m.bimodal


def test_the_tud_lrs_is_bimodal_and_the_hrs_is_not():
    """The TUD record's LRS: ~29 % of cycles ~2.5x above the main mode; V_reset too
    (0.70 against 1.05 V); R_HRS a skewed tail, V_set one mode."""
    target = target_of(load_distribution(TUD))
    lrs = mixture(np.log(target.values["r_lrs_ohm"]))
    assert lrs.bimodal and lrs.share == pytest.approx(0.29, abs=0.03)
    assert np.exp(lrs.separation) == pytest.approx(2.5, rel=0.1)
    v_reset = mixture(target.values["v_reset_V"])
    assert v_reset.bimodal and v_reset.separation == pytest.approx(0.35, abs=0.03)
    assert not mixture(np.log(target.values["r_hrs_ohm"])).bimodal
    assert not mixture(target.values["v_set_V"]).bimodal


def test_the_tud_record_has_two_configurations_that_move_every_metric():
    """Labelled by the LRS: in the upper configuration R_LRS is ~2.5x, R_HRS ~1.8x,
    V_set ~0.25 V more negative and V_reset ~0.36 V higher (the data behind
    :mod:`rram.fit.modes`); a record without drift has them with no memory."""
    from rram.fit.modes import measured_configurations
    from rram.fit.target import metric_rows

    rows = metric_rows(load_distribution(TUD))
    carriers = {"r_lrs_ohm": "rtop", "r_hrs_ohm": "deh", "v_set_V": "dea",
                "v_reset_V": "dei"}
    config = measured_configurations(rows, carriers, {"rtop": (0.9, 188.0)})
    assert config.metric == "r_lrs_ohm" and config.memory == 188.0
    assert config.modes.share == pytest.approx(0.29, abs=0.03)
    c = config.contrast
    assert np.exp(c["r_lrs_ohm"]) == pytest.approx(2.5, rel=0.1)
    assert np.exp(c["r_hrs_ohm"]) == pytest.approx(1.8, rel=0.15)
    assert c["v_set_V"] == pytest.approx(-0.25, abs=0.05)
    assert c["v_reset_V"] == pytest.approx(0.36, abs=0.05)
    assert config.stats["v_reset_V"]["spread"] < 0.2  # the lower configuration's alone
    # the cycles scatter less in the upper configuration (its mode_scale < 1)
    for m, ratio in (("r_lrs_ohm", 0.7), ("v_reset_V", 0.5)):
        assert config.stats[m]["upper_spread"] < ratio * config.stats[m]["spread"], m
    assert measured_configurations(rows, carriers, {}).memory < 1e-2
    # too few cycles (4) in the upper configuration to take its medians: none
    rng = np.random.default_rng(2)
    lrs = np.exp(np.concatenate([rng.normal(7.2, 0.1, 32), rng.normal(8.2, 0.1, 4)]))
    cycles = np.arange(36)
    few = {"r_lrs_ohm": pd.DataFrame({"device": "d", "cycle": cycles, "value": lrs}),
           "v_reset_V": pd.DataFrame({"device": "d", "cycle": cycles,
                                      "value": 0.7 + 0.4 * (lrs > 2500)})}
    assert mixture(np.log(lrs)).bimodal
    assert measured_configurations(few, carriers, {}) is None


def test_configurations_many_widths_apart_split_without_a_warning():
    """Issue 38 §4: a record whose two resistance modes lie ~40 widths apart (an
    endurance record's LRS and its stuck cycles) made ``boundary`` take the log of
    underflowed densities (divide by zero) before the fit failed."""
    import warnings

    from rram.fit.modes import Modes, boundary

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        split = boundary(Modes(0.3, 0.0, 40.0, 0.5, 1.0))
    # the equal-density point of the two weighted normals
    assert 0.0 < split < 40.0
    assert split == pytest.approx(13.36, abs=0.05)


def test_a_fitted_upper_spread_stays_within_what_a_spec_accepts():
    """Issue 38 §4: the configuration step scaled a carrier's σ 16x in the upper
    configuration, and the spec refused it with an internal message
    ("mode_scale must be a number within (0, 10]")."""
    from rram.fit.carriers import spec_from
    from rram.fit.modes import Configurations, Modes
    from rram.variation import MAX_MODE_SCALE

    target = target_of(load_distribution(TUD))
    config = Configurations("r_lrs_ohm", Modes(0.3, 7.2, 8.1, 0.2, 0.15), 1.0, {})
    values = {"shift_deh": 0.0, "sigma_deh": 0.02, "step_deh": 0.1, "scale_deh": 16.0}
    spec = spec_from(values, target, {"r_hrs_ohm": "deh"}, config=config)
    (entry,) = [v for v in spec.variations if v.parameter == "deh"]
    assert entry.mode_scale == MAX_MODE_SCALE


@pytest.mark.slow
def test_fit_variation_recovers_a_configuration_it_was_not_told(tmp_path):
    """A simulated record (8 devices x 150 cycles) of a cell in two configurations (30 %
    of the cycles with a contact e^1.5 = 4.5x higher, for tens of cycles at a time; the
    compliance takes up part of it, so R_LRS rises 1.7x): `rram fit-variation` finds
    them, fits the contact's offset within 25 % and matches the bimodal LRS (KS <= 0.1);
    with --no-modes the LRS does not match as well."""
    import json

    from click.testing import CliRunner
    from test_fit_variation import FORMED, as_distribution

    from rram.cli import main
    from rram.mc import MonteCarlo, run_devices
    from rram.variation import Mode, Variation, VariationSpec

    card = FORMED.replace(rtop=1000.0)
    truth = VariationSpec((
        Variation("rtop", "c2c", "lognormal", 0.1, slow=0.5, memory=30.0, mode_step=1.5),
        Variation("deh", "c2c", "normal", 0.05), Variation("dea", "c2c", "normal", 0.04),
        Variation("dei", "c2c", "normal", 0.05)), Mode(0.3, 30.0))
    record = run_devices(MonteCarlo(card=card, spec=truth, devices=8, cycles=150, seed=3),
                         range(8))
    path, card_path = tmp_path / "record.csv", tmp_path / "card.json"
    as_distribution(record[record["converged"]]).to_csv(path, index=False)
    card_path.write_text(card.to_json())
    # --accept: the comparison needs both specs, and the plain one fails its verdict
    quick = ["--card", str(card_path), "--devices", "100", "--cycles", "2", "--polish", "0",
             "--accept"]
    run = CliRunner().invoke(main, ["fit-variation", str(path), *quick, "--out",
                                    str(tmp_path / "s.json")])
    assert run.exit_code == 0, run.output
    assert "two configurations, seen in r_lrs_ohm" in run.output
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["mode"]["share"] == pytest.approx(0.3, abs=0.1)
    rtop = next(v for v in saved["variations"] if (v["parameter"], v["kind"]) == ("rtop", "c2c"))
    assert rtop["mode_step"] == pytest.approx(1.5, rel=0.25)
    assert saved["fit"]["ks"]["r_lrs_ohm"] <= 0.1
    run = CliRunner().invoke(main, ["fit-variation", str(path), *quick, "--no-modes",
                                    "--out", str(tmp_path / "n.json")])
    plain = json.loads((tmp_path / "n.json").read_text())
    assert "mode" not in plain
    assert plain["fit"]["ks"]["r_lrs_ohm"] > saved["fit"]["ks"]["r_lrs_ohm"] + 0.03
