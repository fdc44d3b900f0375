"""The committed example decks run with plain ``ngspice -b``; the PySpice adapter stays
flat in memory over many runs and turns non-convergence into a typed error."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess

import pytest

from rram.card import default_card
from rram.engine.stimulus import dc_loops
from rram.errors import ConvergenceError
from rram.generate import REPO_DIR
from rram.spice.decks import KINDS
from rram.spice.ngspice import NgspiceError, NgspiceSession, classify
from rram.spice.runner import model_ref
from rram.spice.testbench import Testbench

DECKS = REPO_DIR / "netlists" / "testbenches"


@pytest.mark.parametrize("kind", KINDS)
def test_example_deck_runs_in_batch_ngspice(kind, tmp_path):
    exe = shutil.which("ngspice")
    assert exe, "ngspice is part of the set-up (make test installs it)"
    proc = subprocess.run([exe, "-b", str(DECKS / f"{kind}.cir")], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert not classify(out.splitlines()), classify(out.splitlines())[:3]
    rows = int(re.search(r"No\. of Data Rows\s*:\s*(\d+)", out).group(1))
    assert rows > 50
    # the printed table holds the state nodes, and the state moved
    assert "xcell.dgap" in out.lower()


def test_a_deck_loads_the_model_under_the_name_it_was_exported_with(tmp_path):
    """Issue 37: `rram export --name rram_radar`, then `rram netlist --name rram_radar`:
    the deck instantiates the subcircuit the library defines and runs in ``ngspice -b``
    (before, `rram netlist` had no --name and the deck asked for `rram`)."""
    from click.testing import CliRunner

    from rram.cli import main

    run = CliRunner().invoke(main, ["export", "--format", "spice", "--name", "rram_radar",
                                    "--out", str(tmp_path / "rram_radar.lib")])
    assert run.exit_code == 0, run.output
    deck = tmp_path / "deck.cir"
    run = CliRunner().invoke(main, ["netlist", "dc-loop", "--name", "rram_radar",
                                    "--out", str(deck)])
    assert run.exit_code == 0, run.output
    text = deck.read_text().lower()
    assert ".include rram_radar.lib" in text and " rram_radar" in text.split(".include")[1]
    proc = subprocess.run([shutil.which("ngspice"), "-b", str(deck)], capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and not classify(out.splitlines()), out[-2000:]
    assert int(re.search(r"No\. of Data Rows\s*:\s*(\d+)", out).group(1)) > 50
    run = CliRunner().invoke(main, ["netlist", "dc-loop", "--name", "a*b", "--out",
                                    str(tmp_path / "bad.cir")])
    assert run.exit_code == 2 and "--name" in run.output
    assert not (tmp_path / "bad.cir").exists()


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.slow
def test_thousands_of_runs_do_not_leak():
    session = NgspiceSession.get()
    ref = model_ref("osdi", default_card().model)
    session.load_osdi(ref.path)
    deck = Testbench("resistor", dc_loops(2.0, -2.0, 1e5), model=ref,
                     circuit_params={"rs": 10e3}).render()
    for _ in range(200):  # warm-up: allocator pools, first-use caches
        session.run(deck, ["time"])
    before = _rss_mb()
    for _ in range(2000):
        session.run(deck, ["time"])
    growth = _rss_mb() - before
    print(f"RSS growth over 2000 runs: {growth:.1f} MB")
    assert growth < 20


def test_non_convergence_is_a_typed_error_with_time_and_analysis():
    session = NgspiceSession.get()
    # the node has no solution once the source passes -1.5 V (at t = 0.25 ms)
    deck = "\n".join(["* no solution", "V1 in 0 PWL(0 -2 1m 0)", "R1 in a 1k",
                      "B1 a 0 I = v(a) > 0.5 ? 2e-3 : -2e-3", ".tran 1u 1m", ".end"])
    with pytest.raises(ConvergenceError) as info:
        session.run(deck, ["time"])
    assert info.value.analysis == "tran"
    assert info.value.time_s == pytest.approx(0.25e-3, rel=1e-3)
    assert "timestep too small" in str(info.value)
    # the session is usable afterwards
    assert session.run("* ok\nV1 a 0 1\nR1 a 0 1k\n.op\n.end", ["i(v1)"]).vectors["i(v1)"][0] \
        == pytest.approx(-1e-3)


def test_parse_errors_are_reported_not_printed():
    session = NgspiceSession.get()
    with pytest.raises(NgspiceError, match=r"rejected|failed"):
        session.run("* bad\nXbad a b nosuchsubckt\n.tran 1u 1m\n.end", ["time"])


def test_rusage_is_recorded_per_run_when_asked():
    session = NgspiceSession.get()
    deck = "\n".join(["* rc", "V1 in 0 PWL(0 0 1u 1)", "R1 in a 1k", "C1 a 0 1n",
                      ".tran 10n 5u", ".end"])
    session.record_rusage = True
    try:
        session.run(deck, ["time"])
        first = dict(session.rusage)
        session.run(deck.replace("5u", "50u"), ["time"])
        second = dict(session.rusage)
    finally:
        session.record_rusage = False
    assert first["Transient iterations"] >= first["Transient timepoints"] > 10
    # the figures are the run's own, not accumulated over the session
    assert second["Transient timepoints"] > first["Transient timepoints"]
    assert second["Transient timepoints"] < 20 * first["Transient timepoints"]
    assert first["Transient analysis time"] >= 0.0


@pytest.mark.veriloga
def test_every_deck_the_project_writes_runs_from_a_copy_in_another_folder(tmp_path):
    """Issue 37: the models exported under a name of the user's, every testbench deck
    (subcircuit and OSDI) and the array decks with the same --name, written in one folder
    and moved to another: each runs in ``ngspice -b`` started from a third folder (the
    decks load their models relative to themselves, no path of this machine)."""
    from click.testing import CliRunner

    from rram.cli import main
    from rram.spice.models import openvaf

    made = tmp_path / "made"
    made.mkdir()

    def rram(*args: str) -> None:
        run = CliRunner().invoke(main, list(args))
        assert run.exit_code == 0, (args, run.output)

    rram("export", "--format", "spice", "--name", "cellx", "--out", str(made / "cellx.lib"))
    for name, frozen in (("cellx", ()), ("cellf", ("--frozen",))):
        rram("export", "--format", "veriloga", *frozen, "--name", name, "--out",
             str(made / f"{name}.va"))
        subprocess.run([openvaf(), f"{name}.va", "-o", f"{name}.osdi"], cwd=made, check=True,
                       capture_output=True, timeout=300)
    decks = []
    for kind in KINDS:
        for model in ("subckt", "osdi"):
            decks.append(f"{kind}-{model}.cir")
            rram("netlist", kind, "--model", model, "--name", "cellx", "--out",
                 str(made / decks[-1]))
    for model in ("subckt", "osdi"):
        decks.append(f"array-{model}.cir")
        rram("array", "netlist", "--topology", "1t1r", "--rows", "2", "--cols", "2",
             "--model", model, "--name", "cellf", "--out", str(made / decks[-1]))
    moved = tmp_path / "elsewhere" / "decks"
    moved.parent.mkdir()
    shutil.move(made, moved)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    for name in decks:
        text = (moved / name).read_text()
        assert str(tmp_path) not in text and "/.cache/" not in text, name
        proc = subprocess.run([shutil.which("ngspice"), "-b", str(moved / name)],
                              capture_output=True, text=True, timeout=600, cwd=elsewhere)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and not classify(out.splitlines()), (name, out[-2000:])
        assert "error" not in out.lower(), (name, out[-2000:])
        if not name.startswith("array"):
            assert int(re.search(r"No\. of Data Rows\s*:\s*(\d+)", out).group(1)) > 50, name
