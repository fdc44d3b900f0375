"""VACASK as the second simulator of the compiled Verilog-A: a switching loop agrees with
ngspice (issue 37)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from rram.model import MODEL
from rram.spice import models
from rram.spice.vacask import run_vacask

#: A ±2 V loop behind 5 kΩ from the HRS, each half followed by a 0.1 V read plateau:
#: (time s, volts).
WAVE = ((0, 0), (1e-3, 2), (2e-3, 0), (2.1e-3, 0.1), (2.3e-3, 0.1), (2.4e-3, 0),
        (3.4e-3, -2), (4.4e-3, 0), (4.5e-3, 0.1), (4.7e-3, 0.1))
READS = (2.3e-3, 4.7e-3)  # the ends of the plateaus: R_LRS, R_HRS
SERIES = 5e3


def _vacask(osdi, step: float, spice_lte: bool) -> list[float]:
    wave = ", ".join(f"{t!r}, {v!r}" for t, v in WAVE)
    lte = " tran_spicelte=1" if spice_lte else ""
    netlist = "\n".join([
        "loop behind 5 kOhm", "ground 0", f'load "{osdi}"', 'load "resistor.osdi"',
        "model vsrc vsource", "model r resistor", f"model m {MODEL.name}",
        f'vin (a 0) vsrc type="pwl" wave=[{wave}]', f"r1 (a te) r r={SERIES!r}",
        "dut (te 0) m state=2", "control", f"  options{lte}", "  save full",
        f"  analysis tr1 tran step={step!r} stop={WAVE[-1][0]!r} maxstep={step!r}",
        "endc", ""])
    d = run_vacask(netlist)["tr1"]
    t = d["time"]
    out = []
    for read in READS:
        a, te = np.interp(read, t, d["a"]), np.interp(read, t, d["te"])
        out.append(float(te / ((a - te) / SERIES)))
    return out


def _ngspice(osdi, step: float, tmp_path) -> list[float]:
    pwl = " ".join(f"{t!r} {v!r}" for t, v in WAVE)
    meas = [f"meas tran {k}{i} find v({n}) at={t!r}" for i, t in enumerate(READS)
            for k, n in (("va", "a"), ("vt", "te"))]
    deck = "\n".join([
        "* loop behind 5 kOhm", ".control", f"pre_osdi {osdi}", "set num_threads=1",
        ".endc", f".model m {MODEL.name}", f"vin a 0 pwl({pwl})", f"r1 a te {SERIES!r}",
        "Ndut te 0 m state=2", f".tran {step!r} {WAVE[-1][0]!r} 0 {step!r}", ".control",
        "run", *meas,
        *(f"echo R{i} $&vt{i} $&va{i}" for i in range(len(READS))), ".endc", ".end", ""])
    (tmp_path / "loop.cir").write_text(deck)
    proc = subprocess.run([shutil.which("ngspice"), "-b", "loop.cir"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = []
    for i in range(len(READS)):
        vt, va = map(float, re.search(rf"^R{i} (\S+) (\S+)$", proc.stdout, re.M).groups())
        out.append(vt / ((va - vt) / SERIES))
    return out


@pytest.mark.parametrize("step", [1e-6, 1e-7])
def test_a_loop_in_vacask_agrees_with_ngspice(step, tmp_path):
    """R_LRS and R_HRS read after a ±2 V loop behind 5 kΩ (the HRS, 0.1 V reads), at a
    1 µs and a 0.1 µs step cap: VACASK with SPICE's truncation-error rule
    (``tran_spicelte=1``) within 0.1 % of ngspice (measured 0.0002 % and 0.008 % at
    1 µs).  With its own rule VACASK reads R_HRS 0.15 % above ngspice at 1 µs; at 0.1 µs
    both rules and both simulators agree within 0.001 %."""
    osdi = models.osdi_module(MODEL)
    ng = _ngspice(osdi, step, tmp_path)
    vk = _vacask(osdi, step, spice_lte=True)
    assert ng[0] < 0.1 * ng[1]  # the loop switched: an LRS, then an HRS
    for a, b in zip(vk, ng, strict=True):
        assert abs(a / b - 1) <= 1e-3, (vk, ng)
    if step < 1e-6:
        own = _vacask(osdi, step, spice_lte=False)
        for a, b in zip(own, ng, strict=True):
            assert abs(a / b - 1) <= 1e-4, (own, ng)
