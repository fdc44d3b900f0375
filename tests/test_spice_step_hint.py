"""The Verilog-A step hint through the SET runaway (rram.model.StepBound).

Ten OSDI cells behind 10 kΩ each from one DC-loop source share ngspice's time steps, so
every SET collapse is stepped through by the whole deck.  Without the hint, ngspice
doubles its step into a collapse until Newton fails, and each failed solve costs its
floor of 100 iterations (measured: 59 % of the deck's iterations); with it no solve
fails.  The hint changes no equation: the cells switch at the same times.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rram.model import MODEL
from rram.netlist import Cell, CellModel, Netlist, Resistor, VSource, deck
from rram.printers.veriloga_printer import NO_BOUND_STEP
from rram.spice import models
from rram.spice.ngspice import NgspiceSession
from rram.variation import corner_cards, default_variation

CELLS = 10
LOOP = ((0.0, 0.0), (2e-3, 2.0), (4e-3, 0.0), (6e-3, -2.0), (8e-3, 0.0))


def _run(module: str, osdi: Path) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    cards = corner_cards(default_variation(), CELLS, seed=7, width=1.0)
    elements = [VSource("bl", "bl", "0", pwl=LOOP)]
    for i, card in enumerate(cards):
        elements += [Resistor(f"s{i}", "bl", f"mid{i}", 1e4), Cell(f"c{i}", f"mid{i}", "0", card,
                                                                 model=f"rrmod{i}")]
    text = deck(Netlist(tuple(elements), title="shared-source cells"),
                CellModel("osdi", module), [".options method=gear reltol=1e-4 klu"],
                [".tran 4e-05 0.008 0 4e-05"])
    session = NgspiceSession.get()
    session.load_osdi(osdi)
    session.record_rusage = True
    try:
        result = session.run(text, ["time", *(f"v(mid{i})" for i in range(CELLS))])
        usage = dict(session.rusage)
    finally:
        session.record_rusage = False
    return usage, result.vectors


def _set_times(vectors: dict[str, np.ndarray]) -> np.ndarray:
    """Per cell, the first time its node falls 0.3 V below its peak (the SET)."""
    t = vectors["time"]
    out = []
    for i in range(CELLS):
        v = vectors[f"v(mid{i})"]
        drop = np.maximum.accumulate(v) - v
        out.append(t[np.argmax(drop > 0.3)])
    return np.array(out)


def test_the_runaway_hint_spares_ngspice_its_failed_newton_solves():
    hint = _run("rram", models.osdi_module(MODEL))
    plain_source = models.veriloga_source(MODEL, "rram_plain")
    plain = _run("rram_plain", models.compile_osdi(plain_source, (NO_BOUND_STEP,)))
    iterations = {k: r[0]["Transient iterations"] for k, r in
                  (("hint", hint), ("plain", plain))}
    # measured: 12 243 against 26 898 iterations (0.127 against 0.243 s of analysis)
    assert iterations["hint"] <= 0.6 * iterations["plain"], iterations
    t_hint, t_plain = _set_times(hint[1]), _set_times(plain[1])
    assert np.all((t_hint > 1.4e-3) & (t_hint < 2e-3)), t_hint
    # measured: within 3.5e-5 (55 ns in a 1 kV/s sweep)
    np.testing.assert_allclose(t_hint, t_plain, rtol=2e-4)
    grid = np.linspace(0.0, 8e-3, 2001)
    diff = [np.abs(np.interp(grid, hint[1]["time"], hint[1][f"v(mid{i})"])
                   - np.interp(grid, plain[1]["time"], plain[1][f"v(mid{i})"]))
            for i in range(CELLS)]
    assert np.median(diff) < 1e-3


def _retention(module: str, osdi: Path, cell, v: float, stop: float) -> int:
    text = deck(Netlist((VSource("a", "a", "0", dc=v), Cell("c0", "a", "0", cell,
                                                           model="rrmod")), title="retention"),
                CellModel("osdi", module), [".options method=gear"],
                [f".tran {stop / 100:g} {stop:g} 0 {stop / 10:g}"])
    session = NgspiceSession.get()
    session.load_osdi(osdi)
    return len(session.run(text, ["time"]).vectors["time"])


def test_the_hint_binds_only_inside_the_runaway():
    """Issue 37: an LRS held 1e6 s at V_set/2 (a half-select in the SET polarity) takes
    no more time points with the hint than without it.  Before, the hint's floor capped
    every step at 0.3 s: 3.33 M points against 378 k."""
    from rram.card import default_card
    from rram.phenomena.common import set_sign
    from rram.phenomena.retention import _hold, _states

    card = default_card()
    lrs, _, metrics = _states(card, None)
    v = 0.5 * abs(metrics["v_set_V"]) * set_sign(card)
    cell = _hold(card, lrs)
    plain_source = models.veriloga_source(MODEL, "rram_plain")
    plain = _retention("rram_plain", models.compile_osdi(plain_source, (NO_BOUND_STEP,)),
                       cell, v, 1e6)
    hint = _retention("rram", models.osdi_module(MODEL), cell, v, 1e6)
    assert hint <= plain, (hint, plain)


def test_the_subcircuit_s_step_sentinel_binds_only_inside_the_runaway(tmp_path):
    """The subcircuit's stand-in for the hint (a sentinel node of the SET's rate, watched
    by ngspice's truncation-error control): an LRS held 1e4 s at V_set/2 takes no more
    time points with it than without it (measured: 3794 both)."""
    import dataclasses

    from rram.card import default_card
    from rram.phenomena.common import set_sign
    from rram.phenomena.retention import _hold, _states
    from rram.printers.spice_printer import render_subckt

    card = default_card()
    lrs, _, metrics = _states(card, None)
    v = 0.5 * abs(metrics["v_set_V"]) * set_sign(card)
    cell = _hold(card, lrs)
    points = {}
    for name, model in (("rram", MODEL),
                        ("rram_plain", dataclasses.replace(MODEL, step_bounds=()))):
        library = tmp_path / f"{name}.lib"
        library.write_text(render_subckt(model, name=name))
        assert ("Cstep_dgap" in library.read_text()) == (name == "rram")
        text = deck(Netlist((VSource("a", "a", "0", dc=v), Cell("c0", "a", "0", cell)),
                            title="retention"), CellModel("subckt", name),
                    [f".include {library}", ".options method=gear"], [".tran 100 1e4 0 1e3"])
        points[name] = len(NgspiceSession.get().run(text, ["time"]).vectors["time"])
    assert points["rram"] <= points["rram_plain"], points


#: Issue 37's many-cell deck: cells behind their own loads (5 kΩ ±10 %) on one source, a
#: 4 ms loop 0 → 2 V → 0 → −2 V → 0, tmax 1 µs; each cell's R read at +0.2 V after its
#: SET (1.9 ms) and at −0.2 V after its RESET (3.9 ms).
MANY_CELLS = 100
READS = {"r_on": (1.9e-3, 0.2), "r_off": (3.9e-3, 0.2)}


def _many_cell_deck(osdi: Path, module: str, loads: np.ndarray, options: str) -> str:
    lines = ["* many cells on one source", f".options {options}".rstrip(), ".control",
             f"pre_osdi {osdi}", "set num_threads=1", "run",
             *(f"meas tran {k}_{i} find i(vr{i}) at={t}" for i in range(len(loads))
               for k, (t, _) in READS.items()), ".endc",
             "Vbl bl 0 PWL(0 0 1m 2 2m 0 3m -2 4m 0)", f".model rrmod {module}"]
    for i, r in enumerate(loads):
        lines += [f"Rs{i} bl mid{i} {r:.6g}", f"Vr{i} mid{i} c{i} 0", f"N{i} c{i} 0 rrmod"]
    return "\n".join([*lines, ".tran 1u 4m 0 1u", ".end", ""])


def _many_cells(tmp_path: Path, osdi: Path, module: str, loads: np.ndarray,
                options: str) -> dict[str, float]:
    import re
    import shutil
    import subprocess

    deck_file = tmp_path / f"{module}-{options or 'sparse'}.cir"
    deck_file.write_text(_many_cell_deck(osdi, module, loads, options))
    proc = subprocess.run([shutil.which("ngspice") or "ngspice", "-b", str(deck_file)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert "singular" not in out.lower() and "too small" not in out, (module, options,
                                                                        out[-1500:])
    got = {}
    for k, (_, v) in READS.items():
        currents = np.abs([float(m) for m in re.findall(rf"^{k}_\d+\s*=\s*(\S+)", out, re.M)])
        assert currents.size == loads.size, (module, options, out[-1500:])
        got[k] = float(np.mean(v / currents - loads))
    return got


@pytest.mark.slow
def test_a_hundred_varied_cells_run_with_either_solver_and_either_build(tmp_path):
    """Issue 37: the many-cell deck runs with Sparse 1.3 and KLU, the module built with its
    step hint and without it, and the builds read the same R_on and R_off (measured:
    within 2e-6 and 0.15 %).  Before the gap voltage's Newton limiting
    (rram.step_hint.NewtonLimit) the hint-less build stopped at 0.80 ms with Sparse:
    "singular matrix: check node n1#tip", then "timestep too small"."""
    loads = 5e3 * (1.0 + 0.1 * np.random.default_rng(37).uniform(-1.0, 1.0, MANY_CELLS))
    hint = _many_cells(tmp_path, models.osdi_module(MODEL), "rram", loads, "")
    plain_osdi = models.compile_osdi(models.veriloga_source(MODEL, "rram_plain"),
                                     (NO_BOUND_STEP,))
    for options in ("", "klu"):
        plain = _many_cells(tmp_path, plain_osdi, "rram_plain", loads, options)
        for k in READS:
            assert plain[k] == pytest.approx(hint[k], rel=5e-3), (options, k, plain, hint)
