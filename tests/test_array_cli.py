"""``rram array``: the commands write what they say and refuse bad input in one line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from rram.card import default_card
from rram.cli import main


@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


def test_read_writes_every_cell(run, tmp_path):
    out, png = tmp_path / "read.csv", tmp_path / "read.png"
    r = run("array", "read", "--rows", "6", "--cols", "5", "--pattern", "checkerboard",
            "--r-sense", "100", "--out", str(out), "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    df = pd.read_csv(out)
    assert len(df) == 30 and list(df.columns) == ["row", "col", "v_cell_V", "i_cell_A",
                                                  "line_drop_V"]
    assert (df.line_drop_V > 0).all() and (df.v_cell_V < 0.2).all()


def test_netlist_is_deterministic(run, tmp_path):
    a, b = tmp_path / "a.cir", tmp_path / "b.cir"
    for out in (a, b):
        r = run("array", "netlist", "--topology", "1t1r", "--rows", "3", "--cols", "3",
                "--variation", "default", "--seed", "4", "--out", str(out))
        assert r.exit_code == 0, r.output
    assert a.read_text() == b.read_text()
    assert a.read_text().rstrip().endswith(".end")


def test_vmm_reports_the_error_against_the_target_product(run, tmp_path):
    out = tmp_path / "vmm.csv"
    r = run("array", "vmm", "--rows", "16", "--cols", "8", "--vectors", "3", "--rho", "2e-7",
            "--out", str(out), "--plot", str(tmp_path / "vmm.png"))
    assert r.exit_code == 0, r.output
    assert "against the target product: relative error" in r.output
    assert r.output.rstrip().endswith("variation alone 0")  # no --variation: cells = target
    df = pd.read_csv(out)
    assert len(df) == 24 and (df.output_A < df.target_A).all()
    assert (tmp_path / "vmm.png").stat().st_size > 0


def test_vmm_monte_carlo_writes_scores_and_provenance(run, tmp_path):
    out = tmp_path / "mc.csv"
    r = run("array", "vmm", "--rows", "8", "--cols", "8", "--vectors", "4", "--variation",
            "default", "--samples", "6", "--mc-out", str(out), "--seed", "3")
    assert r.exit_code == 0, r.output
    assert "6 arrays in" in r.output
    df = pd.read_csv(out)
    assert list(df["sample"]) == list(range(6)) and df["seed"].nunique() == 6
    side = json.loads((tmp_path / "mc.csv.json").read_text())
    assert side["samples"] == 6 and side["study_seed"] == 3 and len(side["card_sha256"]) == 64


def test_margin_prints_the_worst_case(run):
    r = run("array", "margin", "--rows", "8", "--cols", "8")
    assert r.exit_code == 0, r.output
    # 0.1997 on the default card's programmed states (0.2139 with the 10 kOhm / 1.2 MOhm
    # states the arrays used before)
    assert "margin 0.199" in r.output


@pytest.mark.parametrize("args,message", [
    (["read", "--rows", "0"], "0 is not in the range 1<=x<=4096"),
    (["read", "--segments", "999"], "999 is not in the range 1<=x<=256"),
    (["read", "--rho", "-1"], "resistivity rho (Ohm*m) = -1 is out of range"),
    (["vmm", "--topology", "1s1r"], "vmm takes a 1r array"),
    (["vmm", "--samples", "3"], "needs a variation spec with device-to-device entries"),
    (["vmm", "--mc-out", "x.csv"], "--mc-out applies to a Monte Carlo over arrays"),
    (["vmm", "--workers", "2"], "--workers applies to a Monte Carlo over arrays"),
    (["vmm", "--samples", "2", "--variation", "default", "--mc-out", "x.txt"],
     "--mc-out x.txt: the file must end in .csv or .parquet"),
    (["read", "--variation", "missing.json"], "Invalid value for '--variation'"),
    (["margin", "--cell", "1;2"], "'1;2': give ROW,COL, corner or worst"),
    (["margin", "--cell", "9,0", "--search"], "cell (9, 0) is outside the 8 x 8 array"),
    (["margin", "--out", "w.csv"], "--out writes the searched patterns: give --search"),
    (["margin", "--search", "--objective", "best"], "'best' is not one of"),
    (["read", "--em-limit", "0"], "--em-limit 0: valid is > 0 A per um"),
    (["read", "--j-max", "-1"], "j_max (A/m^2) = -1.0 must be a positive"),
    (["read", "--heat", "--beta", "-0.01"], "beta = -0.01 1/K: valid is [0, 0.1]"),
    (["read", "--heat", "--k-dielectric", "0"], "k_dielectric (W/m/K) = 0.0 must be"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = CliRunner().invoke(main, ["array", *args])
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]


def test_margin_search_writes_the_worst_patterns_with_provenance(run, tmp_path):
    import json

    out = tmp_path / "worst.csv"
    r = run("array", "margin", "--rows", "4", "--cols", "3", "--rho", "2e-6", "--search",
            "--objective", "window", "--out", str(out))
    assert r.exit_code == 0, r.output
    # the card's programmed states: 0.3407 and -0.5959 (0.37 and -0.53 before)
    assert "standard patterns: all-lrs 0.34" in r.output
    assert "worst pattern (window) margin -0.59" in r.output
    df = pd.read_csv(out)
    assert len(df) == 12 and df.off_lrs.all() and df.on_lrs.sum() == 7
    prov = json.loads((tmp_path / "worst.csv.json").read_text())
    assert prov["objective"] == "window" and prov["array"]["rows"] == 4
    assert prov["margin"] < prov["standard_margins"]["all-lrs"]


def test_read_flags_wires_above_the_em_limit_and_heats_them(run, tmp_path):
    import json

    em = tmp_path / "em.csv"
    r = run("array", "read", "--rows", "8", "--cols", "8", "--pattern", "all-lrs", "--rho",
            "1e-7", "--em-out", str(em), "--heat", "--k-dielectric", "0.6",
            "--t-dielectric", "1e-6")
    assert r.exit_code == 0, r.output
    assert "self-heated wires: largest rise" in r.output
    assert "sections above the limit" in r.output
    df = pd.read_csv(em)
    assert len(df) > 0 and df.flagged.all() and (df.ratio > 1).all()
    assert df.ratio.is_monotonic_decreasing and set(df.kind) == {"row", "col"}
    prov = json.loads((tmp_path / "em.csv.json").read_text())
    assert prov["worst_ratio"] == df.ratio.iloc[0] and prov["heated"] is True


def test_margin_screens_every_cell_for_the_worst(run):
    r = run("array", "margin", "--rows", "3", "--cols", "3", "--rho", "2e-6", "--cell",
            "worst")
    assert r.exit_code == 0, r.output
    from rram.array.read import read_margin
    from rram.array.spec import ArraySpec, Metal

    metal = Metal(rho=2e-6)
    spec = ArraySpec("1r", 3, 3, row_metal=metal, col_metal=metal, gate_metal=metal)
    margins = {(i, j): read_margin(spec, 0.4, (i, j)).margin for i in range(3)
               for j in range(3)}
    worst = min(margins, key=margins.__getitem__)
    assert f"cell {worst}" in r.output and f"margin {margins[worst]:.4f}" in r.output


def test_disturb_writes_the_map_its_provenance_and_the_heat_map(run, tmp_path):
    import json

    out, png = tmp_path / "d.csv", tmp_path / "d.png"
    r = run("array", "disturb", "--rows", "4", "--cols", "5", "--pattern", "all-hrs",
            "--cell", "1,3", "--count", "5", "--no-progress", "--out", str(out),
            "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    df = pd.read_csv(out)
    assert len(df) == 20 and list(df.columns) == ["row", "col", "role", "v_cell_V",
                                                  "r0_ohm", "r_ohm", "change"]
    assert df.role.value_counts().to_dict() == {"unselected": 12, "half-selected": 7,
                                                "selected": 1}
    sel = df[df.role == "selected"].iloc[0]
    assert (sel.row, sel.col) == (1, 3) and sel.change < -0.99  # it SET
    half = df[df.role == "half-selected"]
    assert (half.change < -0.005).all()  # 0.9 V on them: a measurable disturb
    meta = json.loads((tmp_path / "d.csv.json").read_text())
    assert meta["write"]["scheme"] == "v/2" and meta["write"]["count"] == 5
    assert meta["array"]["rows"] == 4 and len(meta["card_sha256"]) == 64
    assert meta["summary"]["half_selected_max"] == pytest.approx(half.change.abs().max())


def test_write_writes_the_history_per_pulse(run, tmp_path):
    out = tmp_path / "w.csv"
    r = run("array", "write", "--rows", "4", "--cols", "4", "--pattern", "all-hrs",
            "--scheme", "v/3", "--count", "3", "--no-progress", "--out", str(out))
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert list(df.pulse) == [0, 1, 2, 3]
    assert df.r_selected_ohm.iloc[-1] < df.r_selected_ohm.iloc[0] / 100
    assert (df.half_selected_max < 1e-4).all()  # V/3: 0.6 V on the half-selected cells
    assert (tmp_path / "w.csv.json").is_file()


def test_disturb_budget_writes_one_row_per_size(run, tmp_path):
    out = tmp_path / "b.csv"
    r = run("array", "disturb", "--budget", "0.02", "--sizes", "3,5", "--pattern", "all-hrs",
            "--amplitude", "1.7", "--count", "5", "--no-progress", "--out", str(out))
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert list(df["rows"]) == [3, 5] and (df.exposure > 0).all()
    assert "largest array within the budget" in r.output
    meta = json.loads((tmp_path / "b.csv.json").read_text())
    assert meta["budget"] == 0.02 and meta["command"] == "array disturb --budget"


def test_export_frozen_writes_the_module_the_array_decks_instantiate(run, tmp_path):
    """Issue 37: `rram array netlist --model osdi --model-path my.osdi` instantiates
    rram_frozen, which `rram export` could not write ('Unknown model type rram_frozen').
    `--frozen` writes exactly the renderings the array decks are tested with, and the
    deck loads the path it is given."""
    from rram.array.export import FROZEN_MODEL, frozen_subckt
    from rram.netlist import FROZEN_PORTS
    from rram.spice.models import veriloga_source

    model = default_card().model
    va, lib, deck = tmp_path / "rram_frozen.va", tmp_path / "rram_frozen.lib", tmp_path / "a.cir"
    assert run("export", "--format", "veriloga", "--frozen", "--out", str(va)).exit_code == 0
    assert va.read_text() == veriloga_source(model, FROZEN_MODEL, FROZEN_PORTS).read_text()
    assert run("export", "--format", "spice", "--frozen", "--out", str(lib)).exit_code == 0
    assert lib.read_text().strip() == frozen_subckt(model).strip()
    osdi = tmp_path / "rram_frozen.osdi"
    r = run("array", "netlist", "--rows", "2", "--cols", "2", "--model", "osdi",
            "--model-path", str(osdi), "--out", str(deck))
    assert r.exit_code == 0, r.output
    assert f"pre_osdi {osdi}" in deck.read_text()
    assert f" {FROZEN_MODEL}" in deck.read_text()
    r = run("array", "netlist", "--rows", "2", "--cols", "2", "--model", "osdi",
            "--out", str(deck))  # no machine path in a deck by default
    assert r.exit_code == 0 and "pre_osdi rram_frozen.osdi" in deck.read_text()
    assert "rram export --format veriloga --frozen" in r.output
    # a name of the user's, in both: the deck instantiates the module exported
    mine = tmp_path / "mine.va"
    r = run("export", "--format", "veriloga", "--frozen", "--name", "mine", "--out", str(mine))
    assert r.exit_code == 0, r.output
    assert mine.read_text() == veriloga_source(model, "mine", FROZEN_PORTS).read_text()
    r = run("array", "netlist", "--rows", "2", "--cols", "2", "--model", "osdi", "--name",
            "mine", "--out", str(deck))
    assert r.exit_code == 0 and "pre_osdi mine.osdi" in deck.read_text()
    assert " mine" in deck.read_text() and FROZEN_MODEL not in deck.read_text()
    assert "--frozen --name mine" in r.output
    r = run("array", "netlist", "--rows", "2", "--cols", "2", "--name", "a*b", "--out",
            str(tmp_path / "bad.cir"))
    assert r.exit_code == 2 and "--name" in r.output and not (tmp_path / "bad.cir").exists()


def test_a_varied_array_deck_has_one_model_for_all_its_cells(tmp_path):
    """The carriers of variation are instance parameters (issue 37): a 16x16 OSDI deck
    with the default variation draws every cell's carriers onto its instance line under
    one ``.model`` (256 ``.model`` lines and a deck 2.3x the size before)."""
    out = tmp_path / "a.cir"
    r = CliRunner().invoke(main, ["array", "netlist", "--rows", "16", "--cols", "16",
                                  "--variation", "default", "--model", "osdi",
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text().replace("\n+", " ").splitlines()
    assert sum(line.startswith(".model") for line in lines) == 1
    cells = [line for line in lines if line.startswith("N")]
    assert len(cells) == 256
    assert len({line.split(" kth=")[1].split()[0] for line in cells}) >= 200  # all varied


@pytest.mark.parametrize("card", [None, "fitting/results/tud_H16248L_M12.card.json"],
                         ids=["default", "tud"])
def test_write_sets_by_default_in_the_cards_own_polarity(run, tmp_path, card):
    """Issue 38: without --amplitude a write is a SET of the array's card, in its own
    polarity: the fitted TUD card SETs at negative voltage, where +1.8 V would RESET it
    (as it did before: the selected HRS cell x1.0 after 3 pulses)."""
    from pathlib import Path

    from rram.card import load_card

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "w.csv"
    extra = [] if card is None else ["--card", str(root / card)]
    r = run("array", "write", "--rows", "4", "--cols", "4", "--pattern", "all-hrs",
            "--scheme", "v/3", "--count", "3", "--no-progress", "--out", str(out), *extra)
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "w.csv.json").read_text())
    polarity = (default_card() if card is None else load_card(root / card))["polarity"]
    assert meta["write"]["amplitude"] == pytest.approx(1.8 * polarity)
    df = pd.read_csv(out)
    assert df.r_selected_ohm.iloc[-1] < df.r_selected_ohm.iloc[0] / 10
