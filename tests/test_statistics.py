"""A variation spec as SPICE sees it (rram.statistics): each carrier's distribution over
devices and cycles, and the nominal the export folds in (issue 37)."""

from __future__ import annotations

import math
import re
from functools import cache

import numpy as np
import pytest
from click.testing import CliRunner

from rram.card import load_card
from rram.cli import main
from rram.fit.carriers import protocol_of, simulate_metrics
from rram.generate import REPO_DIR
from rram.mc import MonteCarlo, run_devices
from rram.printers.veriloga_printer import NO_BOUND_STEP
from rram.statistics import marginals, nominal_card
from rram.variation import VariationSpec, load_variation

TUD_CARD = REPO_DIR / "fitting/results/tud_H16248L_M12.card.json"
TUD_SPEC = REPO_DIR / "fitting/results/tud_H16248L_M12.variation.json"
#: the operation whose draw each carrier's value in a cycle's row is (rram.mc columns)
DRAWN_AT = {"rtop": "rtop_set", "deh": "deh_reset", "dea": "dea_set", "dei": "dei_reset",
            "l0": "l0_set"}


def ks_distance(offsets: np.ndarray, cdf) -> float:
    """Kolmogorov-Smirnov distance of a sample of offsets from a marginal's ``cdf``, which
    may hold atoms (a carrier with σ 0 in a configuration, e.g. an ``l0`` step): the
    empirical and the model CDFs compared on both sides of every distinct value (the
    model's sides a relative 1e-9 away, for a draw rounded onto its atom)."""
    values, counts = np.unique(np.asarray(offsets, float), return_counts=True)
    n = counts.sum()
    right = np.cumsum(counts) / n
    left = right - counts / n
    eps = 1e-9 * np.maximum(1.0, np.abs(values))
    model_right = np.array([cdf(v) for v in values + eps])
    model_left = np.array([cdf(v) for v in values - eps])
    return float(max(np.max(np.abs(right - model_right)), np.max(np.abs(left - model_left))))


def test_the_ks_distance_holds_atoms_and_matches_the_continuous_one():
    """On a continuous marginal it is scipy's KS statistic; on two atoms drawn in their
    shares it is the shares' sampling error, not the atom's height."""
    from scipy.stats import kstest, norm

    from rram.statistics import Configuration, Marginal

    x = np.random.default_rng(3).normal(0.1, 0.5, 400)
    assert ks_distance(x, norm(0.1, 0.5).cdf) == pytest.approx(
        kstest(x, norm(0.1, 0.5).cdf).statistic, rel=1e-6)
    atoms = Marginal("l0", "lognormal", 3.5e-9, Configuration(0.0, 0.0, 0.0, 1.0),
                     Configuration(0.14, 0.0, 0.0, 1.0), 0.3, 0.0, (1e-9, 1e-8))
    draws = np.log(np.r_[np.full(69, 3.5e-9), np.full(31, 3.5e-9 * np.exp(0.14))] / 3.5e-9)
    assert ks_distance(draws, atoms.cdf) == pytest.approx(0.01, abs=1e-9)
    assert ks_distance(np.zeros(100), atoms.cdf) == pytest.approx(0.3)


@cache
def _tud():
    card = load_card(TUD_CARD)
    spec = load_variation(TUD_SPEC, card.model)
    return card, spec, simulate_metrics(card, spec, protocol_of(card), 1000, 2, 7)


def _steady_loop(card):
    mc = MonteCarlo(card=card, spec=VariationSpec((), model=card.model), devices=1,
                    cycles=2, seed=1, protocol=protocol_of(card), burn_in=1)
    return run_devices(mc, range(1)).iloc[-1]


_SLOW_AT_THE_RANGE = pytest.mark.xfail(strict=True, reason=(
    "issue 37, open: the marginal truncates the carrier's whole normal to its range; the "
    "Monte Carlo redraws only the fast part, given the slow path (rram.mc.draws), so a "
    "carrier with a large slow share near a range end is drawn otherwise: deh (slow 84 %, "
    "8 % of its lower configuration beyond -1 eV) KS 0.051, dei (slow 95 %, its upper "
    "centre at -1.0 eV) 0.130; with the slow path integrated out, 0.016 and 0.088.  "
    "Drawing a slow entry by its quantile on the truncated normal instead gives 0.017 "
    "and 0.019, but the spec refitted so puts deh's, dei's and rtop's spreads on their "
    "limits (13 of 17 checks; every statistic passes)"))


@pytest.mark.parametrize("carrier", ["rtop",
                                     # 0.051 against 0.05: not strict, a change of the
                                     # draws' last bits may pass it
                                     pytest.param("deh", marks=pytest.mark.xfail(
                                         strict=False, reason=_SLOW_AT_THE_RANGE.kwargs[
                                             "reason"])),
                                     "dea", pytest.param("dei", marks=_SLOW_AT_THE_RANGE),
                                     "l0"])
def test_each_carrier_s_marginal_is_what_the_monte_carlo_draws(carrier):
    """The marginal of every carrier of the fitted TUD spec (its two configurations as a
    mixture, truncated to the range, the slow part left out) against the values the
    Monte Carlo drew over 1000 devices x 2 cycles: KS <= 0.05 each."""
    card, spec, frame = _tud()
    assert set(spec.parameters) == {"rtop", "deh", "dea", "dei", "l0"}
    (m,) = (m for m in marginals(card, spec) if m.parameter == carrier)
    drawn = frame[DRAWN_AT[m.parameter]].to_numpy(float)
    offsets = np.log(drawn / m.base) if m.distribution == "lognormal" else drawn - m.base
    ks = ks_distance(offsets, m.cdf)
    assert ks <= 0.05, (m.parameter, ks)


def test_the_exported_nominal_is_the_calibrated_median_device():
    """The median device of the TUD card and spec (fitted to the medians of 1000 x 2
    Monte Carlo device-cycles, seed 1): its steady loop's R_LRS, R_HRS, V_set and
    V_reset within 5 % of the medians of another Monte Carlo sample (seed 7; measured
    -1.4, +1.8, -1.6, -0.7 %).  The per-carrier medians alone miss V_reset by 13 %, and
    the card the loop fit left R_HRS by 39 %."""
    from rram.statistics import median_device

    card, spec, frame = _tud()
    median = frame[["r_lrs_ohm", "r_hrs_ohm", "v_set_V", "v_reset_V"]].median()
    device = _steady_loop(median_device(card, spec, protocol_of(card)))
    for metric in median.index:
        assert abs(device[metric] / median[metric] - 1) <= 0.05, (metric, device[metric],
                                                                  median[metric])
    per_carrier, unfolded = _steady_loop(nominal_card(card, spec)), _steady_loop(card)
    assert abs(per_carrier["v_reset_V"] / median["v_reset_V"] - 1) >= 0.1
    assert abs(unfolded["r_hrs_ohm"] / median["r_hrs_ohm"] - 1) >= 0.3


def test_export_with_a_spec_writes_the_median_device(tmp_path):
    """`rram export --variation`: the module's defaults are the folded nominal's."""
    out = tmp_path / "tud.va"
    result = CliRunner().invoke(main, ["export", "--format", "veriloga", "--card",
                                       str(TUD_CARD), "--variation", str(TUD_SPEC),
                                       "--name", "rram_tud", "--out", str(out)])
    assert result.exit_code == 0, result.output
    from rram.statistics import median_device

    card, spec, _ = _tud()
    nominal = median_device(card, spec, protocol_of(card))
    text = out.read_text()
    moved = set()
    for name in spec.parameters:
        got = float(re.search(rf"parameter real {name} = ([^ ]+) ", text).group(1))
        assert math.isclose(got, nominal[name], rel_tol=1e-9, abs_tol=1e-12), name
        if not math.isclose(got, card[name], rel_tol=1e-3, abs_tol=1e-3):
            moved.add(name)
    # every fitted centre is folded in; a carrier varied in the upper configuration
    # alone (the spec's l0, 29 % of cycles) keeps the card's value as its median
    shifted = {v.parameter for v in spec.variations if v.shift}
    assert moved == shifted, (moved, shifted)


def test_a_folded_pristine_gap_stays_within_its_layer():
    """A spec that shifts the initial gap beyond the layer draws it within the layer (a
    pristine cell at most), and folds in a gap just inside it, not one the card
    refuses."""
    from rram.variation import Variation

    card = load_card(TUD_CARD)
    spec = VariationSpec((Variation("x0", "d2d", "normal", 0.1e-9, shift=2e-9,
                                    model=card.model),), model=card.model)
    assert card["x0"] + 2e-9 > card["l0"]
    (x0,) = marginals(card, spec)
    assert x0.bounds[1] == card["l0"]
    assert card["l0"] - 0.1e-9 <= nominal_card(card, spec)["x0"] <= card["l0"]


def _export_with_stats(tmp_path):
    out, lib = tmp_path / "rram_tud.va", tmp_path / "rram_tud_stats.lib"
    result = CliRunner().invoke(main, ["export", "--format", "veriloga", "--card",
                                       str(TUD_CARD), "--variation", str(TUD_SPEC),
                                       "--name", "rram_tud", "--out", str(out),
                                       "--stats", str(lib)])
    assert result.exit_code == 0, result.output
    return out, lib


def _sections(text: str) -> dict[str, dict[str, str]]:
    """Each section's instance-line values (constants only)."""
    found = {}
    for label, body in re.findall(r"^\.lib (\w+)\n(.*?)^\.endl \1$", text, re.M | re.S):
        found[label] = dict(re.findall(r"(\w+)=([-+0-9.e]+)(?=\s|$)", body.replace("\n+", "")))
    return found


def test_the_corners_bracket_the_monte_carlo_and_typical_is_the_median_device():
    """The ±3σ corners of the fitted TUD spec (design points at the Φ(±3) quantiles of
    R_LRS, R_HRS and |V_set|) bracket >= 99 % of the Python Monte Carlo's device-cycles
    that switched (1000 x 2, measured 99.65 / 99.55 / 99.5 % before the spec's
    SET-failure episodes, which no SPICE instance expresses); the typical section is
    the median device."""
    from rram.metrics import did_not_switch
    from rram.statistics import CORNER_METRICS, corners, render_library, steady_metrics

    card, spec, frame = _tud()
    frame = frame[~did_not_switch(frame["reason"])]
    nominal = nominal_card(card, spec)
    found = corners(card, spec, protocol_of(card))
    rows = steady_metrics([nominal.replace(**values) for _, _, values in found],
                          protocol_of(card))
    assert len(rows) == len(found) == 2 * len(CORNER_METRICS)
    for k, (_, column, how) in enumerate(CORNER_METRICS):
        ends = sorted(abs(rows.iloc[2 * k + j][column]) if how == "abs"
                      else rows.iloc[2 * k + j][column] for j in (0, 1))
        x = frame[column].to_numpy(float)
        x = np.abs(x) if how == "abs" else x
        inside = np.mean((x >= ends[0]) & (x <= ends[1]))
        assert inside >= 0.99, (column, ends, inside)
    from rram.statistics import median_device

    typical = median_device(card, spec, protocol_of(card))
    sections = _sections(render_library(card, spec, protocol_of(card), "rram_tud", "osdi",
                                        typical))
    assert {"tt", "mc", "rlrs_hi", "rlrs_lo", "rhrs_hi", "rhrs_lo", "vset_hi",
            "vset_lo"} <= set(sections)
    for name in spec.parameters:
        assert math.isclose(float(sections["tt"][name]), typical[name], rel_tol=1e-9,
                            abs_tol=1e-12)


@pytest.mark.slow
def test_an_ngspice_monte_carlo_over_the_exported_library_reproduces_the_python_one(
        tmp_path):
    """The `mc` section in ngspice: 400 instances of one deck, each drawing its carriers
    (read back from the OSDI instances) from the spec's distributions (KS <= 0.12 per
    carrier against its marginal; measured 0.04-0.09); those devices' loops in ngspice
    against the Python engine's Monte Carlo of the spec: KS <= 0.10 on R_LRS, R_HRS and
    V_set.  300, not the issue's 200: two samples of 200 and 2000 from one distribution
    are 0.10 apart at the 5 % level (three metrics: one run in seven fails), of 300 at
    the 2 % level (each ngspice loop of the TUD protocol takes ~1.3 s).  Measured: KS
    0.090, 0.071, 0.065 (R_LRS 0.103 with 200)."""
    import shutil
    import subprocess

    from scipy.stats import ks_2samp

    from rram.experiment import simulate_with
    from rram.metrics import loop_metrics
    from rram.spice.models import openvaf

    va, lib = _export_with_stats(tmp_path)
    subprocess.run([openvaf(), va.name, "-o", "rram_tud.osdi"], cwd=tmp_path, check=True,
                   capture_output=True)
    card, spec, frame = _tud()
    n, carriers = 300, spec.parameters
    deck = [f"* {n} cells of the statistical library", ".control", "pre_osdi rram_tud.osdi",
            "set num_threads=1", ".endc", ".options seed=11", f".lib {lib.name} mc",
            "V1 a 0 dc 0.1", *(f"X{i} a 0 rram_tud_cell state=1" for i in range(n)), ".op",
            ".control", "run",
            *(f"echo drawn {p} {i} $&@n.x{i}.x1.n1[{p}]" for p in carriers for i in range(n)),
            ".endc", ".end"]
    (tmp_path / "mc.cir").write_text("\n".join(deck) + "\n")
    proc = subprocess.run([shutil.which("ngspice"), "-b", "mc.cir"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    drawn: dict[str, dict[int, float]] = {}
    for p, i, v in re.findall(r"^drawn (\w+) (\d+) (\S+)$", proc.stdout, re.M):
        drawn.setdefault(p, {})[int(i)] = float(v)
    assert {p: len(v) for p, v in drawn.items()} == {p: n for p in carriers}
    for m in marginals(card, spec):
        x = np.array(list(drawn[m.parameter].values()))
        offsets = np.log(x / m.base) if m.distribution == "lognormal" else x - m.base
        ks = ks_distance(offsets, m.cdf)
        assert ks <= 0.12, (m.parameter, ks)
    nominal = nominal_card(card, spec)
    cards = [nominal.replace(**{p: drawn[p][i] for p in carriers}) for i in range(n)]
    protocol = protocol_of(card)
    res = simulate_with("veriloga", protocol.circuit, protocol.stimulus(2), cards=cards,
                        circuit_params=protocol.circuit_params, record=False)
    rows = loop_metrics(res)
    rows = rows[rows["cycle"] == rows["cycle"].max()]
    assert len(rows) == n
    for column in ("r_lrs_ohm", "r_hrs_ohm", "v_set_V"):
        ks = ks_2samp(rows[column].dropna(), frame[column].dropna()).statistic
        assert ks <= 0.10, (column, ks)


@pytest.mark.parametrize("solver", ["sparse", "klu"])
@pytest.mark.parametrize("defines", [[], ["-D", NO_BOUND_STEP]], ids=["hint", "no-hint"])
def test_the_designer_s_monte_carlo_deck_of_the_guide_runs_as_written(tmp_path,
                                                                      monkeypatch, solver,
                                                                      defines):
    """docs/ngspice.md: the `rram export ... --stats` line, the module compiled, and the
    guide's 1T1R Monte Carlo deck run in ngspice as written: 20 devices, each with a SET
    voltage within 0.5-1.5 V and a read current within 30-300 µA, not all alike; with
    Sparse 1.3 (as written) and KLU, built with the step hint and without it (issue 37:
    a 2x2 1T1R Monte Carlo sample aborted with KLU), and no warning."""
    import shlex
    import shutil
    import subprocess

    from rram.spice.models import openvaf

    guide = (REPO_DIR / "docs/ngspice.md").read_text()
    (line,) = [ln[2:] for ln in guide.splitlines() if ln.startswith("$ rram export")
               and "--stats" in ln]
    (deck,) = [b for b in re.findall(r"```spice\n(.*?)```", guide, re.S) if "mc_source" in b]
    monkeypatch.chdir(tmp_path)
    for cmd in (["card", "--out", "card.json"], shlex.split(line)[1:]):
        result = CliRunner().invoke(main, cmd)
        assert result.exit_code == 0, result.output
    subprocess.run([openvaf(), *defines, "rram_dev.va", "-o", "rram_dev.osdi"], check=True,
                   capture_output=True)
    if solver == "klu":
        deck = deck.replace("\n", "\n.options klu\n", 1)
    (tmp_path / "designer.cir").write_text(deck)
    proc = subprocess.run([shutil.which("ngspice"), "-b", "designer.cir"],
                          capture_output=True, text=True, timeout=300)
    out = (proc.stdout + proc.stderr).lower()
    assert "singular" not in out and "too small" not in out and "warning" not in out, out[-2000:]
    rows = [(float(v), -float(i)) for _, v, i in
            re.findall(r"^sample (\d+) (\S+) (\S+)$", proc.stdout, re.M)]
    assert len(rows) == 20, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert all(0.5 <= v <= 1.5 and 30e-6 <= i <= 300e-6 for v, i in rows), rows
    assert len({round(v, 6) for v, _ in rows}) >= 15


#: A 1R write at 1 kV/s behind 10 kOhm from the HRS over the subcircuit library's ``mc``
#: section, ``passes`` devices, each pass seeded (``setseed`` before ``mc_source``).
SUBCKT_MC_DECK = """* 1R writes over the subcircuit library, one device a pass
.include rram_dev.lib
.lib rram_dev_stats.lib mc
vbl bl 0 pwl(0 0 2m 2 4m 0)
rs bl te 10k
X1 te 0 rram_dev_cell state=2
.control
set num_threads=1
let k = 0
dowhile k < {passes}
  let s = k + 1
  setseed $&s
  mc_source
  tran 1u 4m
  meas tran vset find v(bl) when i(vbl)=-2e-5 cross=1
  echo sample $&k $&vset
  let k = k + 1
end
.endc
.end
"""


@pytest.mark.slow
def test_the_subcircuit_library_s_monte_carlo_loop_sets_every_device(tmp_path,
                                                                      monkeypatch):
    """30 seeded passes of an ngspice Monte Carlo loop over the subcircuit flavour of the
    default spec's library: every device SETs (V_set within 0.5-1.5 V).  Before the
    subcircuit's step sentinel, 5 to 11 of 30 passes stopped on "timestep too small" at
    the SET (9 of these 30 seeds)."""
    import shutil
    import subprocess

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["export", "--format", "spice", "--name", "rram_dev",
                                       "--variation", "default", "--stats",
                                       "rram_dev_stats.lib", "--out", "rram_dev.lib"])
    assert result.exit_code == 0, result.output
    (tmp_path / "mc.cir").write_text(SUBCKT_MC_DECK.format(passes=30))
    proc = subprocess.run([shutil.which("ngspice"), "-b", "mc.cir"], capture_output=True,
                          text=True, timeout=900)
    assert "too small" not in proc.stdout + proc.stderr, proc.stdout[-3000:]
    rows = re.findall(r"^sample (\d+) (\S+)$", proc.stdout, re.M)
    assert len(rows) == 30, proc.stdout[-3000:]
    assert all(0.5 <= float(v) <= 1.5 for _, v in rows), rows


def test_a_spec_of_a_model_parameter_has_no_osdi_library(tmp_path):
    """A spec varying a model parameter (the barrier ``ea`` itself) cannot be drawn per
    cell by the OSDI module: `--stats` refuses it, naming the parameter and the instance
    parameters a spec may vary, and writes nothing; the median device alone is written."""
    spec_path = tmp_path / "spec.json"
    spec_path.write_text('{"variations": [{"parameter": "ea", "kind": "d2d", '
                         '"distribution": "normal", "sigma": 0.02}]}')
    lib, va = tmp_path / "s.lib", tmp_path / "m.va"
    args = ["export", "--format", "veriloga", "--variation", str(spec_path), "--out",
            str(va)]
    result = CliRunner().invoke(main, [*args, "--stats", str(lib)])
    assert result.exit_code == 2
    assert "ea: not instance parameters" in result.output and "rtop" in result.output
    assert not lib.exists() and not va.exists()
    assert CliRunner().invoke(main, args).exit_code == 0 and va.exists()
