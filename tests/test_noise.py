"""Read noise (issue 39): the density a SPICE .noise analysis of the Verilog-A gives
equals rram.noise's; the traps in time have the variance, corner frequency and summed
1/f density their parameters set; the noise grows with R as its law says."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from rram.card import default_card
from rram.errors import CardError
from rram.expr import symbols
from rram.model import MODEL
from rram.noise import Traps, cell_noise, draw_traps, occupancy, trap_count_mean, trap_factor
from rram.printers.spice_printer import render_subckt
from rram.spice.models import osdi_module, subckt_library

NM = 1e-9
NOISY = default_card().replace(ntrap=10.0, rtrap=0.7e-9)

NOISE_DECK = """* .noise of one cell behind a noiseless resistor
.control
pre_osdi {osdi}
set num_threads=1
.endc
.model rr rram ntrap={ntrap} rtrap=7e-10 state={state}
V1 a 0 DC {v} AC 1
Rs a te {rs} noisy=0
N1 te 0 rr
.noise v(te) V1 dec 5 1 1e6
.control
op
print v(te)
run
setplot noise1
print onoise_spectrum
.endc
.end
"""


def _ngspice(deck: str, tmp_path) -> str:
    path = tmp_path / "deck.cir"
    path.write_text(deck)
    proc = subprocess.run([shutil.which("ngspice") or "ngspice", "-b", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    return proc.stdout


def _spectrum(out: str) -> tuple[float, np.ndarray, np.ndarray]:
    v_te = float(re.search(r"v\(te\) = ([-0-9.e+]+)", out).group(1))
    rows = re.findall(r"^\d+\s+([0-9.e+-]+)\s+([0-9.e+-]+)\s*$", out, re.M)
    f, density = np.array(rows, float).T
    return v_te, f, density


@pytest.mark.parametrize("state", [1, 2])
@pytest.mark.parametrize(("v", "ntrap"), [(0.15, 10.0), (-0.2, 0.0)])
def test_the_ngspice_noise_of_the_verilog_a_is_the_python_density(state, v, ntrap,
                                                                   tmp_path):
    """Both states, both polarities, with traps and with thermal noise alone, 1 Hz -
    1 MHz: ngspice's output noise of the OSDI cell behind 1 kOhm equals the Python
    density carried through the same resistor within 1 % (measured: 6e-5 LRS, 1e-6
    HRS)."""
    rs = 1e3
    out = _ngspice(NOISE_DECK.format(osdi=osdi_module(MODEL), state=state, v=v, rs=rs,
                                     ntrap=ntrap), tmp_path)
    v_te, f, density = _spectrum(out)
    assert f[0] == pytest.approx(1.0) and f[-1] == pytest.approx(1e6) and f.size == 31
    gap, width = ((NOISY["xlrs"], NOISY["wlrs"]) if state == 1
                  else (NOISY["xhrs"], NOISY["whrs"]))
    cell = cell_noise(NOISY.replace(ntrap=ntrap), gap / NM, width / NM, v_te)
    python = np.sqrt(cell.psd(f)[0]) / np.abs(cell.admittance(f)[0] + 1.0 / rs)
    np.testing.assert_allclose(density, python, rtol=0.01)
    traps = cell.psd(f, ["traps"])[0] / cell.psd(f)[0]
    assert np.all(traps > 0.99) if ntrap else np.all(traps == 0), traps


def test_the_subcircuit_is_noiseless_and_says_so(tmp_path):
    """ngspice's B-sources have no noise: the subcircuit says so, its auxiliary
    resistors are noiseless, and its .noise is zero (not the 1-ohm nodes' thermal noise)."""
    text = render_subckt(MODEL)
    assert "* noise: none (ngspice's B-sources are noiseless" in text
    resistors = [ln for ln in text.splitlines() if ln.startswith("R")]
    assert resistors and all(ln.endswith("noisy=0") for ln in resistors)
    deck = NOISE_DECK.replace("pre_osdi {osdi}", "").replace(
        ".model rr rram ntrap={ntrap} rtrap=7e-10 state={state}",
        f".include {subckt_library(MODEL)}").replace("N1 te 0 rr", "X1 te 0 rram state=1")
    out = _ngspice(deck.format(osdi="", state=1, v=0.15, rs=1e3, ntrap=10), tmp_path)
    _, _, density = _spectrum(out)
    assert np.all(density == 0.0), density


def test_noise_changes_no_dc_or_transient_equation():
    """Noise is small-signal: no branch of the device reads a noise parameter."""
    used = symbols([b.flow for b in MODEL.branches] + [b.charge for b in MODEL.branches])
    assert not used & {"ntrap", "rtrap", "taumin", "taumax"}
    assert {"ntrap", "rtrap"} <= symbols([n.power for n in MODEL.noise])


def test_a_card_with_its_trap_times_reversed_is_refused():
    with pytest.raises(CardError, match=r"taumin 1 s must be below taumax 0\.1 s"):
        default_card().replace(taumin=1.0, taumax=0.1)


def _lrs_cell(card=NOISY, v=0.1):
    return cell_noise(card, card["xlrs"] / NM, card["wlrs"] / NM, v)


def test_one_trap_is_a_telegraph_of_its_variance_and_corner():
    """A single trap (τ = 1 ms) read every 0.2 ms for 100 s: the read current's
    variance is (H·I·Δ)²/4 and its correlation time τ (corner 1/(2πτ)), both within
    3 %."""
    cell = _lrs_cell()
    tau, blocked = 1e-3, float(cell.blocked[0])
    traps = Traps(np.array([tau]), blocked)
    rng = np.random.default_rng(7)
    times = np.arange(500_000) * 2e-4
    current = cell.read_current(trap_factor(traps, occupancy(traps, times, rng))[None, :])[0]
    h0 = cell.transfer("traps", [1e-3])[0, 0].real
    expected = (h0 * cell.path_current[0] * blocked) ** 2 / 4
    assert current.var() == pytest.approx(expected, rel=0.03)
    x = current - current.mean()
    lag = 5  # τ: e^(-1)
    rho = np.dot(x[:-lag], x[lag:]) / np.dot(x, x)
    assert -lag * 2e-4 / np.log(rho) == pytest.approx(tau, rel=0.03)


def test_many_traps_sum_to_the_density_of_the_model():
    """Cells of 20 traps per decade over 1 µs - 1000 s, read every 10 µs: the read
    current's Welch density at 10 Hz - 1 kHz is the model's 1/f (what .noise sees)
    within 15 %, averaged over 12 cells."""
    from scipy.signal import welch

    # a short reach: small steps, where the conductance factor is linear in the traps
    card = NOISY.replace(ntrap=20.0, taumin=1e-6, taumax=1e3, rtrap=0.3e-9)
    cell = _lrs_cell(card)
    dt, n = 1e-5, 2 ** 17
    spectra = []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        traps = draw_traps(card, float(cell.blocked[0]), rng)
        current = cell.read_current(
            trap_factor(traps, occupancy(traps, np.arange(n) * dt, rng))[None, :])[0]
        f, p = welch(current, fs=1 / dt, nperseg=2 ** 14)
        spectra.append(p)
    band = (f >= 10) & (f <= 1e3)
    measured = np.mean(spectra, axis=0)[band]
    model = cell.psd(f[band], ["traps"])[0]
    assert np.median(measured / model) == pytest.approx(1.0, abs=0.15)
    slope = np.polyfit(np.log(f[band]), np.log(measured), 1)[0]
    assert slope == pytest.approx(-1.0, abs=0.1)
    assert trap_count_mean(card) == pytest.approx(20 * 9)


def test_read_noise_grows_with_resistance_as_its_law_says():
    """One trap's relative amplitude ΔR/R grows in proportion to R over a CF much
    wider than its reach (log-log slope 1 within 0.1) and saturates where its reach
    covers the CF (slope < 0.5 there)."""
    widths = np.array([12.0, 9.0, 7.0, 5.5, 1.2, 1.0, 0.8])
    cell = cell_noise(NOISY, np.zeros(widths.size), widths, 0.1)
    r = 0.1 / cell.current
    occupied = cell.read_current(np.exp(-cell.blocked)[:, None])[:, 0]  # one trap fills
    relative = cell.current / occupied - 1.0
    wide = np.polyfit(np.log(r[:4]), np.log(relative[:4]), 1)[0]
    narrow = np.polyfit(np.log(r[4:]), np.log(relative[4:]), 1)[0]
    assert wide == pytest.approx(1.0, abs=0.1), wide
    assert narrow < 0.5, narrow


def _isolated_read_spread(card, width_nm: float) -> float:
    """σ of ln R of isolated reads: the CF path's share of R times Δ·√(mean traps)/2."""
    cell = cell_noise(card, 0.0, width_nm, 0.1)
    share = cell.transfer("traps", [1e-3])[0, 0].real * cell.path_current[0] / cell.current[0]
    return float(share * cell.blocked[0] * np.sqrt(trap_count_mean(card)) / 2)


def test_the_monte_carlo_reads_carry_the_traps_and_nothing_else_moves():
    """The same study with traps (ntrap 10) and without: the switching is the same to
    the last digit, every read differs by its traps alone, with the spread of isolated
    reads (ln-σ of R_LRS within 15 % of Δ·√(mean traps)/2 of the CF path), and the
    reads do not depend on how the devices are split."""
    from rram.mc import MonteCarlo, run_devices

    def study(card, devices):
        return run_devices(MonteCarlo(card=card, devices=40, cycles=5, seed=4), devices)

    clean = study(default_card(), range(40))
    noisy = study(NOISY, range(40))
    for column in ("v_set_V", "v_reset_V", "i_peak_A", "t_max_K"):
        np.testing.assert_array_equal(clean[column], noisy[column])
    ratio = np.log(noisy["r_lrs_ohm"] / clean["r_lrs_ohm"])
    assert np.mean(ratio != 0) > 0.8  # exactly half of a read's traps occupied: ~8 %
    expected = _isolated_read_spread(NOISY, NOISY["wlrs"] / NM)
    assert ratio.std() == pytest.approx(expected, rel=0.15), (ratio.std(), expected)
    split = pd.concat([study(NOISY, range(0, 15)), study(NOISY, range(15, 40))])
    np.testing.assert_array_equal(split.sort_values(["device", "cycle"])["r_lrs_ohm"],
                                  noisy["r_lrs_ohm"])


def test_an_array_read_meets_the_cells_traps_read_by_read():
    """A 16 x 16 LRS array read 30 times far apart: each read's cells carry their
    traps (cell current ln-σ within 15 % of the isolated reads'), the column currents
    average them (about 1/√16 of it), a read is reproducible by its index, and a card
    without traps reads exactly as without noise."""
    from rram.array.cells import named_pattern, pattern_states
    from rram.array.read import read
    from rram.array.spec import ArraySpec

    spec = ArraySpec(rows=16, cols=16, card=NOISY, seed=3)
    states = pattern_states(named_pattern("all-lrs", (16, 16)), NOISY)
    reads = [read(spec, 0.1, states, noise_read=k) for k in range(30)]
    cells = np.log(np.array([r.i_cell for r in reads]))
    expected = _isolated_read_spread(NOISY, NOISY["wlrs"] / NM)
    assert cells.std(axis=0).mean() == pytest.approx(expected, rel=0.15)
    columns = np.log(np.array([r.i_col for r in reads])).std(axis=0).mean()
    assert columns == pytest.approx(expected / 4, rel=0.3)
    np.testing.assert_array_equal(read(spec, 0.1, states, noise_read=7).i_cell,
                                  reads[7].i_cell)
    quiet = ArraySpec(rows=16, cols=16, seed=3)
    np.testing.assert_array_equal(read(quiet, 0.1, states, noise_read=7).i_cell,
                                  read(quiet, 0.1, states).i_cell)
