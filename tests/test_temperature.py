"""The simulator's temperature is the model's ambient, in every rendering (issue 36).

``tamb`` is the simulation's environment, not a card parameter: ``$temperature`` in the
Verilog-A, ngspice's ``temper`` in the subcircuit, the card's environment column in the
Python engine (``--temperature``).  Before, ``.temp 125`` changed the current by nothing
(−6.07167e-07 A to six digits) and every exported ``.model`` carried ``tamb=3e+02``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from rram.card import default_card, load_card
from rram.constants import CELSIUS_ZERO
from rram.engine.static import solve_static
from rram.errors import CardError, InputError
from rram.model import MODEL
from rram.netlist import Cell, CellModel, temperature_line
from rram.spice import models
from rram.spice.ngspice import NgspiceSession

TEMPS_C = (-40.0, 27.0, 85.0, 125.0)
#: (gap nm, width nm): an LRS, an intermediate state and an HRS
STATES = ((0.0, 6.3), (0.6, 5.0), (1.8, 5.8))
BIASES = (-0.3, 0.1, 0.25)
TIGHT = ".options reltol=1e-9 abstol=1e-18 vntol=1e-12 num_threads=1"


@cache
def session(kind: str) -> NgspiceSession:
    s = NgspiceSession.get()
    if kind == "osdi":
        s.load_osdi(models.osdi_module(MODEL))
    return s


def spice_currents(kind: str, temp_c: float) -> np.ndarray:
    """Terminal currents of every (state, bias) in one deck at ``.temp temp_c``."""
    card = default_card().replace(tamb=temp_c + CELSIUS_ZERO)
    lines = ["* the simulator's temperature", TIGHT, *temperature_line([card])]
    if kind == "subckt":
        lines.append(f".include {models.subckt_library(MODEL)}")
    k = 0
    for gap, width in STATES:
        held = card.replace(x0=gap * 1e-9, w0=width * 1e-9)
        for v in BIASES:
            cell = Cell(f"c{k}", f"te{k}", "0", held, model=f"m{k}")
            lines += [text for _, text in cell.spice(CellModel(kind, "rram"))]
            lines.append(f"V{k} te{k} 0 {v}")
            k += 1
    lines += [".op", ".end", ""]
    vec = session(kind).run("\n".join(lines), None).vectors
    return np.array([-vec[f"i(v{i})"][0] for i in range(k)])


def python_currents(temp_c: float) -> np.ndarray:
    card = default_card().replace(tamb=temp_c + CELSIUS_ZERO)
    out = []
    for gap, width in STATES:
        out += list(solve_static(card, gap, width, np.array(BIASES))["current_A"])
    return np.array(out)


@pytest.mark.parametrize("kind", ["osdi", "subckt"])
def test_ngspice_follows_temp_as_the_python_engine_does(kind):
    by_temp = {}
    for temp_c in TEMPS_C:
        spice, python = spice_currents(kind, temp_c), python_currents(temp_c)
        assert np.allclose(spice, python, rtol=1e-6, atol=1e-18), (temp_c, spice / python - 1)
        by_temp[temp_c] = python
    # the temperature counts: the metallic LRS conducts less when hot (tcr > 0)
    lrs_read = BIASES.index(0.1)
    assert by_temp[125.0][lrs_read] < 0.95 * by_temp[-40.0][lrs_read]


def test_a_card_file_carries_no_ambient(tmp_path):
    card = default_card().replace(tamb=400.0)
    text = card.to_json()
    assert '"tamb"' not in text
    path = tmp_path / "card.json"
    path.write_text(text.replace('"parameters": {', '"parameters": {"tamb": 300, ', 1))
    with pytest.raises(CardError, match=r"tamb is not a card parameter.*\.temp"):
        load_card(path)


def test_exported_models_take_the_simulators_temperature():
    from rram.printers.spice_printer import render_subckt
    from rram.printers.veriloga_printer import render_module

    va, lib = render_module(MODEL), render_subckt(MODEL)
    assert "parameter real tamb" not in va and "tamb = $temperature;" in va
    assert " tamb=" not in lib and "(temper + 273.15)" in lib
    cell = Cell("1", "a", "0", default_card(), model="m")
    assert " tamb=" not in "".join(t for _, t in cell.spice(CellModel("osdi", "rram")))


def test_one_deck_has_one_temperature():
    cards = [default_card(), default_card().replace(tamb=358.15)]
    assert temperature_line(cards[:1]) == [".temp 26.85"]
    assert temperature_line(cards[1:]) == [".temp 85.0"]
    with pytest.raises(InputError, match=r"one temperature per run"):
        temperature_line(cards)


def test_vacask_follows_its_temperature_option():
    from rram.spice.vacask import device_netlist, run_vacask

    gap, width = STATES[0]
    for temp_c in (-40.0, 125.0):
        out = run_vacask(device_netlist(
            models.osdi_module(MODEL), "rram", {"x0": gap * 1e-9, "w0": width * 1e-9},
            analyses=["options reltol=1e-9", "analysis op1 op"], temp_celsius=temp_c,
            source="dc=0.1"))
        current = -out["op1"]["vin:flow(br)"][0]
        card = default_card().replace(tamb=temp_c + CELSIUS_ZERO)
        expected = solve_static(card, gap, width, np.array([0.1]))["current_A"][0]
        assert current == pytest.approx(expected, rel=1e-6), temp_c
