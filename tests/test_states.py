"""Issue 37: an instance starts in a programmed state, ``state`` = 1 (LRS) or 2 (HRS),
whose gap and width are card parameters derived from the card (:mod:`rram.states`); 0
keeps the instance's own ``x0``, ``w0``.  Every rendering reads the same resistance: the
OSDI module and the subcircuit in hand-written ngspice decks, VACASK and the Python
engine; the values are documented (``docs/ngspice.md``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner
from test_dc_state import TUD, run_deck

from rram.card import CardBatch, default_card, load_card
from rram.cli import main
from rram.constants import CELSIUS_ZERO, NM
from rram.engine.static import read_resistance
from rram.generate import REPO_DIR
from rram.model import MODEL
from rram.netlist import temperature_line
from rram.spice import models
from rram.states import STATE_PARAMETERS, programmed_states

V_READ = 0.1
STATES = {1: "lrs", 2: "hrs"}


def python_read(card, code: int) -> float:
    held = card.replace(state=code)
    return float(read_resistance(held, held["x0"] / NM, held["w0"] / NM, V_READ)[0])


def test_the_default_card_carries_its_own_programmed_states():
    card = default_card()
    derived = programmed_states(card)
    for name, value in derived.items():
        assert card[name] == pytest.approx(value, rel=2e-3, abs=1e-12), name


def test_a_fitted_card_carries_its_own_programmed_states():
    """`rram fit` derives them: the TUD card's are its own, not the default card's."""
    card = load_card(TUD)
    derived = programmed_states(card)
    for name, value in derived.items():
        assert card[name] == pytest.approx(value, rel=2e-3, abs=1e-12), name
    assert card["wlrs"] != default_card()["wlrs"]


def test_state_puts_x0_and_w0_at_the_programmed_state_and_an_explicit_x0_wins():
    card = default_card()
    for code, label in STATES.items():
        gap, width = STATE_PARAMETERS[label]
        held = card.replace(state=code)
        assert (held["x0"], held["w0"]) == (card[gap], card[width])
        moved = held.replace(**{gap: 0.5 * card["l0"]})  # the state follows its values
        assert moved["x0"] == 0.5 * card["l0"]
    explicit = card.replace(state=1).replace(x0=1e-9)
    assert explicit["state"] == 0 and explicit["x0"] == 1e-9
    batch = CardBatch.of(card, 3).with_columns(state=[0, 1, 2])
    np.testing.assert_array_equal(batch["x0"], [card["x0"], card["xlrs"], card["xhrs"]])
    assert np.all(batch.with_columns(w0=2e-9)["state"] == 0)
    with pytest.raises(Exception, match="state"):
        card.replace(state=1.5)


@pytest.mark.parametrize("kind", ["osdi", "subckt"])
def test_state_instances_read_the_same_resistance_in_ngspice(kind):
    """A designer's deck: the exported model's defaults (a pristine x0 = l0) and only
    ``state=`` on the instance line."""
    card = default_card()
    head = [*temperature_line([card]), ".options reltol=1e-9",
            *([".model m rram"] if kind == "osdi" else [])]
    for code in STATES:
        line = f"N1 te 0 m state={code}" if kind == "osdi" else f"X1 te 0 rram state={code}"
        vec = run_deck(kind, [*head, line, f"V1 te 0 {V_READ}"], ".op")
        r = V_READ / -vec["i(v1)"][0]
        assert r == pytest.approx(python_read(card, code), rel=1e-6), (code, r)


def test_state_instances_read_the_same_resistance_in_vacask():
    from rram.spice.vacask import device_netlist, run_vacask

    card = default_card()
    for code in STATES:
        out = run_vacask(device_netlist(models.osdi_module(MODEL), "rram",
                                        {"state": float(code)}, {},
                                        analyses=["options reltol=1e-9", "analysis op1 op"],
                                        source=f"dc={V_READ}",
                                        temp_celsius=card["tamb"] - CELSIUS_ZERO))
        r = V_READ / -out["op1"]["vin:flow(br)"][0]
        assert r == pytest.approx(python_read(card, code), rel=1e-6), (code, r)


def test_the_documented_state_resistances_are_the_models():
    text = (REPO_DIR / "docs" / "ngspice.md").read_text()
    card = default_card()
    for code, label in STATES.items():
        found = re.search(rf"`state={code}` \({label.upper()}\)[^|]*\|[^|]*\|[^|]*\|\s*"
                          r"([\d.,\s]+) (k?)Ω", text)
        assert found, label
        value = float(found.group(1).replace(",", "").replace(" ", "")) \
            * (1e3 if found.group(2) else 1.0)
        assert value == pytest.approx(python_read(card, code), rel=1e-3), label


def test_rram_card_states_derives_them_for_a_given_card(tmp_path):
    base = default_card().replace(l0=3.0e-9, x0=3.0e-9, xhrs=1.0e-9)
    path = tmp_path / "mine.json"
    path.write_text(base.to_json())
    out = tmp_path / "with_states.json"
    run = CliRunner().invoke(main, ["card", "--card", str(path), "--states", "--out",
                                    str(out)])
    assert run.exit_code == 0, run.output
    written = load_card(out)
    assert written["xhrs"] == pytest.approx(programmed_states(base)["xhrs"])
    assert written["xhrs"] != base["xhrs"]
