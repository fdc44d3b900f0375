"""The optional blocks' models in a designer's hand-written deck (issue 39): a cell of the
relaxing model (``rram_relax``) and of the wearing model (``rram_wear``), exported under
their own names, solved by ``.op`` at read biases of both signs, by a ``.dc`` sweep and at
``.temp 85``: every programmed state holds (gap, width, the disorder u0, the wear0), and
the read equals the Python static solver's, in the OSDI module and in the subcircuit."""

from __future__ import annotations

import numpy as np
import pytest

from rram.card import default_card
from rram.engine.static import read_resistance
from rram.model import relaxing_model, wearing_model
from rram.netlist import Cell, CellModel
from rram.spice import models
from rram.spice.ngspice import NgspiceSession

pytestmark = [pytest.mark.ngspice, pytest.mark.slow]

CARDS = {
    "rram_relax": lambda: default_card(relaxing_model()).replace(urel=0.5e-9, u0=0.2e-9),
    "rram_wear": lambda: default_card(wearing_model()).replace(kwear=3e5, wear0=2.0,
                                                               xres=2.5e-9, ews=0.5),
}
#: The optional state node of each model, its anchor and its node unit in SI.
OPTIONAL = {"rram_relax": ("dsettle", 1e-9), "rram_wear": ("dwear", 1.0)}
#: .op biases at 27 °C (both polarities); at 85 °C the read alone.
BIASES = {27.0: (-0.2, 0.1, 0.2), 85.0: (0.1,)}


def held_card(name: str, which: str):
    card = CARDS[name]()
    gap, width = (("xhrs", "whrs") if which == "HRS" else ("xlrs", "wlrs"))
    return card.replace(x0=card[gap], w0=card[width])


def run(name: str, kind: str, card, lines: list[str], analysis: str) -> dict:
    session = NgspiceSession.get()
    head = []
    if kind == "osdi":
        session.load_osdi(models.osdi_module(card.model, name))
    else:
        head = [f".include {models.subckt_library(card.model, name)}"]
    cell = Cell("1", "te", "0", card, model="m")
    body = [text for _, text in cell.spice(CellModel(kind, name))]
    deck = "\n".join(["* a designer's deck", *head, *body, *lines,
                      ".options num_threads=1", analysis, ".end", ""])
    return session.run(deck, None).vectors


def nodes(vec: dict, kind: str, node: str) -> np.ndarray:
    return vec[("v(n1#" if kind == "osdi" else "v(x1.") + node + ")"]


@pytest.mark.parametrize("which", ["LRS", "HRS"])
@pytest.mark.parametrize("kind", [pytest.param("osdi", marks=pytest.mark.veriloga), "subckt"])
@pytest.mark.parametrize("name", sorted(CARDS))
def test_a_hand_written_deck_holds_every_state(name, kind, which):
    card = held_card(name, which)
    optional, _ = OPTIONAL[name]
    held = ("dgap", "dwidth", optional)
    gap, width = card["x0"] * 1e9, card["w0"] * 1e9
    for temp, biases in BIASES.items():
        hot = card.replace(tamb=temp + 273.15)
        r_read = float(read_resistance(hot, gap, width, 0.1)[0])
        for v in biases:
            vec = run(name, kind, card, [f"V1 te 0 {v}", f".temp {temp:g}"], ".op")
            for node in held:
                assert abs(nodes(vec, kind, node)[0]) < 1e-6, (node, v, temp)
            if v == 0.1:
                assert 0.1 / -vec["i(v1)"][0] == pytest.approx(r_read, rel=1e-3)
    vec = run(name, kind, card, ["V1 te 0 0"], ".dc V1 -0.3 0.3 0.05")
    for node in held:
        assert np.abs(nodes(vec, kind, node)).max() < 1e-6, node
