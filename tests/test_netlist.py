"""rram.netlist: one circuit description, checked on construction, printed to decks."""

from __future__ import annotations

import pytest

from rram.card import default_card
from rram.errors import InputError
from rram.expr import sym
from rram.netlist import (
    Behavioural,
    Capacitor,
    Cell,
    CellModel,
    Netlist,
    Nmos,
    Resistor,
    VSource,
    deck,
)


def _divider() -> Netlist:
    return Netlist((VSource("in", "a", "0", 1.0), Resistor("1", "a", "b", 1e3),
                    Resistor("2", "b", "0", 2e3), Capacitor("b", "b", "0", 1e-15)),
                   title="divider")


def test_elements_print_their_cards():
    lines = _divider().spice_lines()
    assert lines == ["Vin a 0 1.0", "R1 a b 1e+03", "R2 b 0 2e+03", "Cb b 0 1e-15"]
    assert VSource("s", "a", "b").spice(CellModel())[0][1] == "Vs a b 0"
    pwl = VSource("p", "a", "0", pwl=((0.0, 0.0), (1e-9, 1.0))).spice(CellModel())
    assert pwl[0][1] == "Vp a 0 PWL(0.0 0.0 1e-09 1.0)"


def test_a_model_card_is_written_once_and_clashes_are_refused():
    m = [Nmos(str(k), f"d{k}", "g", "0", 60e-6, 10.0, 0.7) for k in range(3)]
    lines = Netlist(tuple(m)).spice_lines()
    assert sum(line.startswith(".model nch") for line in lines) == 1
    other = Nmos("x", "d", "g", "0", 60e-6, 10.0, 0.5)  # same model name, other card
    with pytest.raises(InputError, match=r"two different \.model cards named 'nch'"):
        Netlist((*m, other)).spice_lines()


def test_frozen_cells_tie_their_state_ports_to_ground():
    card = default_card()
    sub = Cell("c", "te", "be", card, frozen=True).spice(CellModel("subckt", "rram_frozen"))
    assert sub[0][1].startswith("Xc te be 0 0 rram_frozen polarity=1.0 x0=")
    osdi = Cell("c", "te", "be", card, model="rm0").spice(CellModel("osdi", "rram"))
    assert osdi[0][0] == "rm0" and osdi[0][1].startswith(".model rm0 rram polarity=1.0")
    assert osdi[1][1].startswith("Nc te be rm0 x0=")


@pytest.mark.parametrize("make,message", [
    (lambda: Resistor("1", "a", "b", 0.0), "must be > 0"),
    (lambda: Resistor("1 x", "a", "b", 1.0), "resistor name '1 x' is not valid"),
    (lambda: Resistor("1", "end", "b", 1.0), "reserved"),
    (lambda: Capacitor("1", "a", "b", float("nan")), "must be finite"),
    (lambda: Netlist((Behavioural("s", "a", "b", sym("i0") * sym("n_a")),)).spice_lines(),
     "not a node voltage"),
    (lambda: Netlist((Resistor("1", "a", "0", sym("rs")),)).spice_lines(),
     "bind it to a number before printing"),
    (lambda: Netlist((Resistor("1", "a", "b", 1.0), Resistor("1", "b", "0", 1.0))),
     "two elements named 'r1'"),
    (lambda: Netlist((), title="a\n.control"), "one line"),
])
def test_bad_elements_name_the_problem(make, message):
    with pytest.raises(InputError, match=message):
        make()


def test_deck_has_title_meta_analysis_and_end():
    text = deck(_divider(), CellModel(), [".options klu"], [".op"], save=["v(b)"])
    assert text.splitlines()[:2] == ["* divider", ".options klu"]
    assert text.endswith(".op\n.save v(b)\n.end\n")


def test_engine_circuits_compile_from_the_testbench_netlists():
    from rram.circuits import CIRCUIT_KINDS, CIRCUIT_PARAMETERS, build_circuit, device_netlist
    from rram.expr import evaluate

    values = {p.name: p.default for p in CIRCUIT_PARAMETERS}

    for kind in CIRCUIT_KINDS:
        circuit = build_circuit(kind, default_card().model)
        # the 0 V sense source is merged: te sits on mid (series) or on bl (1T1R)
        assert circuit.device_nodes == ({"te": "bl", "be": "mid"} if kind == "1t1r"
                                        else {"te": "mid", "be": "0"})
        assert circuit.unknowns[0] == "mid" and "te" not in circuit.unknowns
        deck = device_netlist(kind, values).spice_lines()
        assert any(line.startswith("Xcell te ") for line in deck)
        with pytest.raises(InputError, match=r"bind (it|parameters) to"):
            device_netlist(kind, {"rs": 50.0}).spice_lines()  # cd left symbolic
    # the series resistor's flow into mid, with bl driven by the input v_app
    model = default_card().model
    r = next(b for b in build_circuit("resistor", model).branches if b.name == "br_s")
    assert (r.p, r.n) == ("bl", "mid")
    (i,) = evaluate([r.flow], {"v_app": 1.5, "n_mid": 0.5, "rs": 100.0})
    assert i == pytest.approx(0.01)
    cc = next(b for b in build_circuit("compliance", model).branches if b.name == "br_cc")
    (i,) = evaluate([cc.flow], {"v_app": 3.0, "n_mid": 0.0, "gsrc": 1.0, "icc": 1e-4})
    assert i == pytest.approx(1e-4)  # limited at icc


def test_compile_refuses_what_the_engine_cannot_integrate():
    from rram.circuits import compile_netlist

    two = Netlist((Cell("a", "x", "0", default_card()), Cell("b", "x", "0", default_card())))
    with pytest.raises(InputError, match="one cell, got 2"):
        compile_netlist("two", two, {})
    driven = Netlist((Cell("a", "x", "0", default_card()), VSource("d", "x", "0", 1.0)))
    with pytest.raises(InputError, match="Vd is not a 0 V ammeter"):
        compile_netlist("driven", driven, {})
