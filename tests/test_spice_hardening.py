"""Hardening of what reaches a generated file: names against every target's reserved
words, ngspice options and step caps against their ranges, OSDI decks that run with one
thread, plain hand-written OSDI decks without warnings, the printers' docstring examples,
and the bootstrap's mirror detection."""

from __future__ import annotations

import doctest
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from rram.cli import main
from rram.engine.stimulus import dc_loops
from rram.errors import InputError
from rram.generate import REPO_DIR
from rram.model import MODEL
from rram.printers import spice_printer, veriloga_printer
from rram.spice import ModelRef, Testbench, validate
from rram.spice.decks import build
from rram.spice.models import openvaf

STIMULUS = dc_loops(2.0, -2.0, 1e3)

# --- 1. names ---------------------------------------------------------------------------

VA_RESERVED = ["module", "analog", "begin", "end", "electrical", "parameter", "exp", "ln",
               "inout", "branch", "ground", "V", "I", "Module", "ddt", "potential", "real"]
SPICE_RESERVED = ["gnd", "subckt", "ends", "control", "tran"]


@pytest.mark.parametrize("name", VA_RESERVED + SPICE_RESERVED)
@pytest.mark.parametrize("fmt", ["veriloga", "spice"])
def test_export_refuses_reserved_names(name, fmt, tmp_path):
    out = tmp_path / "model.txt"
    result = CliRunner().invoke(main, ["export", "--format", fmt, "--name", name, "--out",
                                       str(out)])
    assert result.exit_code == 2, result.output
    assert repr(name) in result.output and "reserved" in result.output
    assert not out.exists()


@pytest.mark.parametrize("name", ["module", "analog", "exp", "V", "gnd", "0", "1cell"])
def test_printers_refuse_reserved_names(name):
    with pytest.raises(InputError, match=r"reserved|not a valid name"):
        veriloga_printer.render_module(MODEL, name=name)
    with pytest.raises(InputError, match=r"reserved|not a valid name"):
        spice_printer.render_subckt(MODEL, name=name)


def test_an_accepted_module_name_compiles(tmp_path):
    va = tmp_path / "m.va"
    va.write_text(veriloga_printer.render_module(MODEL, name=validate.identifier(
        "my_cell", "--name")))
    proc = subprocess.run([openvaf(), str(va), "-o", str(tmp_path / "m.osdi")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ["gnd", "end", "subckt", "control", "0", "1x", "GND"])
def test_instance_names_reserved_in_decks_are_refused(name):
    with pytest.raises(InputError, match="instance name"):
        Testbench("resistor", STIMULUS, instance=name)


def test_instance_names_only_meet_spice_rules():
    # "cell" is a Verilog keyword, but an instance name only reaches decks (as Xcell)
    assert "Xcell te 0 rram" in Testbench("resistor", STIMULUS, instance="cell").render()


def test_model_paths_with_spaces_are_refused():
    # ngspice cuts .include and pre_osdi arguments at the space
    with pytest.raises(InputError, match="not a safe path"):
        ModelRef("osdi", "/tmp/a b/rram.osdi")


# --- 2. options and step caps -----------------------------------------------------------

BAD_OPTIONS = [("reltol", -1.0), ("reltol", 0.0), ("reltol", 0.5), ("bogusopt", 1.0),
               ("abstol", 0.0), ("abstol", 1.0), ("itl4", 2.5), ("itl1", 0.0),
               ("method", "euler"), ("maxord", 7.0), ("temp", -300.0), ("gmin", 1.0),
               ("num_threads", 0.0), ("klu", 0.0), ("vntol", -1e-6)]


@pytest.mark.parametrize(("name", "value"), BAD_OPTIONS)
def test_options_are_checked_against_their_range(name, value):
    with pytest.raises(InputError, match=f"option '?{name}") as info:
        Testbench("resistor", STIMULUS, options={name: value})
    if name != "bogusopt":
        assert "valid is" in str(info.value)


@pytest.mark.parametrize("args", [["--option", "reltol=-1"], ["--option", "reltol=0"],
                                  ["--option", "bogusopt=1"], ["--tmax", "1e-30"],
                                  ["--tmax", "1"], ["--option", "method=euler"]])
def test_cli_refuses_bad_options_and_writes_nothing(args, tmp_path):
    out = tmp_path / "deck.cir"
    result = CliRunner().invoke(main, ["netlist", "dc-loop", *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert ("reltol" in result.output or "bogusopt" in result.output
            or "tmax" in result.output or "method" in result.output)
    assert not out.exists()


def test_valid_options_are_written():
    tb = build("dc-loop", options={"RELTOL": 1e-5, "itl4": 50.0, "method": "trap",
                                   "temp": 85.0, "trtol": 1.0}, tmax=1e-6)
    line = next(ln for ln in tb.render().splitlines() if ln.startswith(".options"))
    assert line == ".options method=trap reltol=1e-05 itl4=50 temp=85.0 trtol=1.0"
    assert ".tran 1e-06 " in tb.render()


def test_tmax_range_follows_the_stimulus():
    stop = float(STIMULUS.times[-1])
    Testbench("resistor", STIMULUS, tmax=stop * 1e-9)
    Testbench("resistor", STIMULUS, tmax=stop)
    for bad in (stop * 1e-10, 1e-30, stop * 1.01, -1.0, 0.0):
        with pytest.raises(InputError, match="tmax"):
            Testbench("resistor", STIMULUS, tmax=bad)


# --- 3. ngspice as users run it ---------------------------------------------------------


def test_osdi_decks_run_with_one_thread():
    text = Testbench("1t1r", STIMULUS, model=ModelRef("osdi", "rram.osdi")).render()
    lines = text.splitlines()
    options = next(ln for ln in lines if ln.startswith(".options"))
    assert options.startswith(".options klu num_threads=1 ")
    block = text.split(".control\n")[1].split(".endc")[0]
    assert block == "pre_osdi rram.osdi\nset num_threads=1\n"
    assert any(ln.startswith("* num_threads=1:") for ln in lines)
    # the runner's decks (model loaded by the session) keep the option
    runner = Testbench("1t1r", STIMULUS, model=ModelRef("osdi", "rram.osdi",
                                                        in_deck_osdi=False)).render()
    assert " num_threads=1 " in runner and ".control" not in runner
    # a user's choice wins; subcircuit decks do not need it
    two = Testbench("1t1r", STIMULUS, model=ModelRef("osdi", "rram.osdi"),
                    options={"num_threads": 2}).render()
    assert "set num_threads=2\n" in two
    assert "\n.options klu method=gear reltol=0.0001 num_threads=2\n" in two
    assert "num_threads" not in Testbench("1t1r", STIMULUS).render()


HAND_DECK = """* hand-written 1T1R: the selector is off at t = 0 (gate at 0 V)
.control
pre_osdi {osdi}
set num_threads=1
.endc
.model rrmod rram
Vbl bl 0 PWL(0 0 2m 2 4m 0 6m -2 8m 0)
Vg gate 0 PWL(0 0 1u 1.28)
N1 bl mid rrmod
M1 mid gate 0 0 nch W=1u L=1u
.model nch nmos level=1 vto=0.5 kp=100u
.tran 1u 8m
.print tran i(vbl) v(n1#dgap) v(n1#dwidth) v(n1#tip)
.end
"""


@pytest.fixture(params=[(), ("-D", veriloga_printer.NO_BOUND_STEP)], ids=["hint", "no-hint"])
def osdi(tmp_path, request):
    va = tmp_path / "rram.va"
    va.write_text(veriloga_printer.render_module(MODEL))
    target = tmp_path / "rram.osdi"
    subprocess.run([openvaf(), *request.param, str(va), "-o", str(target)], check=True,
                   capture_output=True, timeout=300)
    return target


@pytest.mark.parametrize("solver", ["", ".options klu\n"], ids=["sparse", "klu"])
@pytest.mark.parametrize("gate", ["PWL(0 0 1u 1.28)", "0"])
def test_a_hand_written_osdi_deck_runs_without_warnings(osdi, gate, solver, tmp_path):
    """Issue 37: the 1T1R deck, its selector on and off at t = 0, with Sparse 1.3 and
    KLU, the module built with its step hint and without."""
    deck = tmp_path / "deck.cir"
    text = HAND_DECK.format(osdi=osdi).replace("PWL(0 0 1u 1.28)", gate)
    deck.write_text(text.replace(".control\n", solver + ".control\n", 1))
    proc = subprocess.run([shutil.which("ngspice") or "ngspice", "-b", str(deck)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert "singular" not in out.lower() and "warning" not in out.lower(), out[-2000:]
    assert "No. of Data Rows" in out


# --- 5. docstrings ----------------------------------------------------------------------


@pytest.mark.parametrize("module", [spice_printer, veriloga_printer])
def test_printer_docstring_examples_are_true(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


# --- 4. bootstrap: the backports line on the system's own mirror -------------------------

MIRROR_SH = REPO_DIR / "scripts" / "debian_mirror.sh"


def _backports_line(apt_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f'. "{MIRROR_SH}" && backports_line bookworm'],
                          capture_output=True, text=True, timeout=30,
                          env={"RRAM_APT_DIR": str(apt_dir), "PATH": "/usr/bin:/bin"})


def test_backports_line_from_a_classic_sources_list(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "# local mirror\n"
        "deb [arch=amd64 signed-by=/x.gpg] http://mirror.local:3142/debian/ bookworm main\n"
        "deb http://security.example/debian-security bookworm-security main\n")
    proc = _backports_line(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "deb http://mirror.local:3142/debian bookworm-backports main\n"


def test_backports_line_from_deb822_sources(tmp_path):
    d = tmp_path / "sources.list.d"
    d.mkdir()
    (d / "debian.sources").write_text(
        "Types: deb\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n\n"
        "Types: deb deb-src\nURIs: https://apt.example.org/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    proc = _backports_line(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "deb https://apt.example.org/debian bookworm-backports main\n"


def test_backports_line_without_a_debian_mirror_fails_clearly(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("deb http://x.example/ubuntu noble main\n")
    proc = _backports_line(tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no Debian mirror for bookworm" in proc.stderr


def test_bootstrap_names_no_mirror_host():
    text = (REPO_DIR / "scripts" / "bootstrap.sh").read_text()
    assert "deb.debian.org" not in text and "backports_line" in text
    assert subprocess.run(["bash", "-n", str(REPO_DIR / "scripts" / "bootstrap.sh")],
                          timeout=30).returncode == 0


def test_every_instance_parameter_takes_the_ends_of_its_range_in_ngspice(tmp_path):
    """An instance at either closed end of any instance parameter's range passes the
    OSDI module's bounds in ngspice: ngspice reads a decimal such as -0.7 one ulp beyond
    the end the compiler holds, and refused the range's own ends ("Parameter dea is out
    of bounds", then no analysis) until the Verilog-A ranges carried a 1e-12 margin."""
    import math

    from rram.spice.models import osdi_module

    lines = ["* ends of the instance ranges", ".control",
             f"pre_osdi {osdi_module(MODEL)}", "set num_threads=1", ".endc",
             f".model m {MODEL.name}", "V1 a 0 dc 0.05"]
    k = 0
    for p in MODEL.parameters:
        if p.kind != "instance" or p.choices:
            continue
        for end, is_open in ((p.lower, p.lower_open), (p.upper, p.upper_open)):
            if is_open or not math.isfinite(end):
                continue
            lines.append(f"N{k} a 0 m state=1 {p.name}={veriloga_printer.format_number(end)}")
            k += 1
    lines += [".op", ".control", "run", "print i(V1)", ".endc", ".end"]
    (tmp_path / "ends.cir").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([shutil.which("ngspice"), "-b", "ends.cir"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert k >= 20
    out = proc.stdout + proc.stderr
    # (with the ends refused, ngspice 46 crashed after the messages: return code -11)
    assert proc.returncode == 0 and "out of bounds" not in out, out[-3000:]
    assert re.search(r"i\(v1\) = -?\d", out), out[-3000:]


def test_a_gap_a_simulation_left_below_zero_is_a_valid_start_in_ngspice(tmp_path):
    """Issue 37: ngspice leaves a SET's gap a little below 0 (−0.006 nm); a designer who
    copies that state into thirty instances' ``x0`` gets a deck that runs (before: "Parameter
    x0 is out of bounds" for each, and ngspice 46 crashed with 24 or more), and each cell
    reads the LRS it is in.  Farther below 0 than a simulator overshoots stays an error."""
    from rram.constants import STATE_OVERSHOOT_M
    from rram.spice.models import osdi_module

    card_lrs = {"x0": 0.0, "w0": MODEL.parameter("wlrs").default}

    def deck(x0: float, cells: int) -> str:
        lines = ["* states a simulation left", ".control", f"pre_osdi {osdi_module(MODEL)}",
                 "set num_threads=1", ".endc", f".model m {MODEL.name}", "V1 a 0 dc 0.1"]
        lines += [f"N{k} a 0 m x0={x0:g} w0={card_lrs['w0']:g}" for k in range(cells)]
        lines += [f"N{cells} b 0 m x0=0 w0={card_lrs['w0']:g}", "V2 b 0 dc 0.1",
                  ".op", ".control", "run", "print i(V1) i(V2)", ".endc", ".end"]
        return "\n".join(lines) + "\n"

    def run(text: str) -> tuple[int, str]:
        (tmp_path / "d.cir").write_text(text)
        proc = subprocess.run([shutil.which("ngspice"), "-b", "d.cir"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=300)
        return proc.returncode, proc.stdout + proc.stderr

    code, out = run(deck(-6e-12, 30))
    assert code == 0 and "out of bounds" not in out, out[-3000:]
    i1 = abs(float(re.search(r"i\(v1\) = (\S+)", out).group(1))) / 30
    i2 = abs(float(re.search(r"i\(v2\) = (\S+)", out).group(1)))
    assert i1 == pytest.approx(i2, rel=0.05)  # 6 pm of gap less: a hair more current
    code, out = run(deck(-2 * STATE_OVERSHOOT_M, 1))
    assert "x0 is out of bounds" in out
