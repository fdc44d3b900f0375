"""The native array engine against ngspice on the same deck: 8 x 8 and 32 x 32 arrays with
resistive wires, driver and sense resistances and device-to-device variation."""

from __future__ import annotations

import numpy as np
import pytest

from rram.array.build import build, output_sources
from rram.array.cells import pattern_states
from rram.array.export import frozen_osdi, render
from rram.array.solve import operating_point
from rram.array.spec import ArraySpec, Metal
from rram.card import default_card
from rram.spice.ngspice import NgspiceSession
from rram.variation import default_variation

#: Row voltages per topology: a read for 1R and 1T1R, above the selector's knee for 1S1R.
V_READ = {"1r": 0.3, "1t1r": 0.3, "1s1r": 1.2}


def _case(topology: str, N: int):
    spec = ArraySpec(topology, N, N, row_metal=Metal(rho=3e-7), col_metal=Metal(rho=3e-7),
                     r_driver=100.0, r_sense=50.0, variation=default_variation(), seed=7)
    states = pattern_states(np.random.default_rng(3).random((N, N)) < 0.5)
    v_rows = V_READ[topology] * np.linspace(1.0, 0.6, N)  # a vector of inputs
    gates = np.where(np.arange(N) % 2 == 0, 1.8, 1.2)  # two gate drives
    return spec, build(spec, v_rows, states, v_gates=gates)


def _spice(c, kind: str):
    session = NgspiceSession.get()
    if kind == "osdi":
        path = frozen_osdi(default_card().model)
        session.load_osdi(path)
        deck = render(c, "osdi", path, in_deck_osdi=False)
    else:
        deck = render(c, "subckt")
    vec = session.run(deck).vectors

    def v(net: int) -> float:
        return 0.0 if net < 0 else float(vec[f"v({c.net_name(int(net))})"][0])

    v_cell = np.array([v(a) - v(b) for a, b in c.cells])
    return vec, v_cell


OSDI = pytest.mark.veriloga


@pytest.mark.ngspice
@pytest.mark.parametrize("kind,N", [("subckt", 8), pytest.param("osdi", 8, marks=OSDI),
                                    pytest.param("osdi", 32, marks=OSDI)])
@pytest.mark.parametrize("topology", ["1r", "1t1r", "1s1r"])
def test_native_engine_agrees_with_ngspice(topology, kind, N):
    spec, c = _case(topology, N)
    op = operating_point(c)
    vec, v_cell = _spice(c, kind)
    out = slice(output_sources(spec).start, output_sources(spec).stop)
    native = -op.i_source[out]
    spice = np.array([vec[f"i(vout{j})"][0] for j in range(N)])
    rel = np.max(np.abs(native / spice - 1))
    dv = np.max(np.abs(op.v_cell - v_cell))
    print(f"{topology} {N}x{N} {kind}: column currents {rel:.2e} relative, "
          f"cell voltages {dv:.2e} V")
    assert rel < 1e-3
    assert dv < 1e-3
    # the case is not trivial: wires drop a visible part of the read voltage
    assert np.max(V_READ[topology] - v_cell) > 0.01


@pytest.mark.ngspice
def test_the_exported_deck_runs_in_batch_ngspice(tmp_path):
    """The deck is self-contained (subcircuit inline): ``ngspice -b`` prints the column
    currents of the operating point, equal to the native engine's."""
    import re
    import subprocess

    spec, c = _case("1s1r", 4)
    deck = tmp_path / "array.cir"
    deck.write_text(render(c, "subckt"))
    proc = subprocess.run(["ngspice", "-b", str(deck)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = dict(re.findall(r"^\s*vout(\d+)#branch\s+([-+0-9.eE]+)", proc.stdout, re.M))
    assert len(found) == 4
    native = -operating_point(c).i_source[output_sources(spec)]
    spice = np.array([float(found[str(j)]) for j in range(4)])
    assert np.max(np.abs(spice / native - 1)) < 1e-5  # printed to 7 digits
