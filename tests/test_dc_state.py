"""A DC analysis keeps the programmed state, in every rendering (issue 36).

A designer initialises a cell in a state (its ``x0``, ``w0``) and solves ``.op`` or a
``.dc`` sweep, or starts a transient whose read bias is on at t = 0.  The state must stay
where it was put: before the simulator's ``dc_hold``, the weak anchor let switching
balance it, and the LRS read ×3 270 after an ``.op`` at −0.2 V (the state moved by up to
23.7 nm).  Each rendering is run as a user writes it: the OSDI module and the subcircuit
in hand-written ngspice decks, and the Python static solver.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from rram.card import default_card, load_card
from rram.circuits import build_circuit
from rram.engine.static import read_resistance, solve_static
from rram.generate import REPO_DIR
from rram.model import MODEL
from rram.netlist import Cell, CellModel
from rram.phenomena.retention import _states
from rram.spice import models
from rram.spice.ngspice import NgspiceSession

TUD = REPO_DIR / "fitting" / "results" / "tud_H16248L_M12.card.json"
CARDS = {"default": default_card, "tud": lambda: load_card(TUD)}
BIASES = (-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3)
#: What "holds" means: the state within 0.01 nm, R(0.1 V) within 1 % of the state's.
STATE_TOL_NM = 0.01
READ_TOL = 0.01


@cache
def programmed(which: str):
    """(card, {"LRS": state, "HRS": state}) after the card's own DC loop."""
    card = CARDS[which]()
    lrs, hrs, _ = _states(card, None)
    return card, {"LRS": lrs, "HRS": hrs}


def cell_lines(card, state, kind: str) -> list[str]:
    held = card.replace(x0=state["gap_nm"] * 1e-9, w0=state["width_nm"] * 1e-9)
    cell = Cell("1", "te", "0", held, model="m")
    return [text for _, text in cell.spice(CellModel(kind, "rram"))]


def run_deck(kind: str, lines: list[str], analysis: str) -> dict[str, np.ndarray]:
    session = NgspiceSession.get()
    head = []
    if kind == "osdi":
        session.load_osdi(models.osdi_module(MODEL))
    else:
        head = [f".include {models.subckt_library(MODEL)}"]
    deck = "\n".join(["* a designer's deck", *head, *lines, ".options num_threads=1",
                      analysis, ".end", ""])
    return session.run(deck, None).vectors


def state_vectors(vectors: dict, kind: str) -> tuple[np.ndarray, np.ndarray]:
    prefix = "v(n1#" if kind == "osdi" else "v(x1."
    return vectors[prefix + "dgap)"], vectors[prefix + "dwidth)"]


@pytest.mark.parametrize("which", sorted(CARDS))
@pytest.mark.parametrize("kind", ["osdi", "subckt"])
def test_op_and_dc_sweep_hold_the_state(which, kind):
    card, states = programmed(which)
    for label, state in states.items():
        r_read = float(read_resistance(card, state["gap_nm"], state["width_nm"])[0])
        lines = cell_lines(card, state, kind)
        for v in BIASES:
            vec = run_deck(kind, [*lines, f"V1 te 0 {v}"], ".op")
            dgap, dwidth = state_vectors(vec, kind)
            assert abs(dgap[0]) < STATE_TOL_NM and abs(dwidth[0]) < STATE_TOL_NM, (
                label, v, dgap[0], dwidth[0])
        vec = run_deck(kind, [*lines, "V1 te 0 0"], ".dc V1 -0.3 0.3 0.05")
        dgap, dwidth = state_vectors(vec, kind)
        assert np.abs(dgap).max() < STATE_TOL_NM and np.abs(dwidth).max() < STATE_TOL_NM
        sweep = vec["v(te)"]
        at = int(np.argmin(np.abs(sweep - 0.1)))
        r_dc = 0.1 / -vec["i(v1)"][at]
        assert abs(r_dc / r_read - 1) < READ_TOL, (label, r_dc, r_read)


@pytest.mark.parametrize("which", sorted(CARDS))
def test_python_static_solver_holds_the_state(which):
    """The Python DC solves hold the states they are given (frozen unknowns): the
    current at every bias is the state's, and the state nodes stay at the state."""
    card, states = programmed(which)
    for state in states.values():
        out = solve_static(card, state["gap_nm"], state["width_nm"], np.array(BIASES))
        lay = build_circuit("resistor", MODEL).layout
        nodes = out["nodes"]
        # the state nodes are exactly the changes x - x0, w - w0 they were given
        assert np.all(nodes[:, lay.unknown("dgap")] == state["gap_nm"] - card["x0"] / 1e-9)
        assert np.all(nodes[:, lay.unknown("dwidth")]
                      == state["width_nm"] - card["w0"] / 1e-9)
        r = 0.1 / out["current_A"][BIASES.index(0.1)]
        r_read = float(read_resistance(card, state["gap_nm"], state["width_nm"])[0])
        assert r == pytest.approx(r_read, rel=1e-9)


@pytest.mark.parametrize("kind", ["osdi", "subckt"])
def test_a_transient_with_its_read_on_at_t0_starts_in_the_programmed_state(kind):
    card, states = programmed("default")
    for label, state in states.items():
        lines = cell_lines(card, state, kind)
        vec = run_deck(kind, [*lines, "V1 te 0 0.2"], ".tran 1u 100u")
        dgap, dwidth = state_vectors(vec, kind)
        assert abs(dgap[0]) < STATE_TOL_NM and abs(dwidth[0]) < STATE_TOL_NM, label
        expected = solve_static(card, state["gap_nm"], state["width_nm"],
                                np.array([0.2]))["current_A"][0]
        assert -vec["i(v1)"][0] == pytest.approx(expected, rel=READ_TOL), label


def vacask_params(card, state) -> tuple[dict, dict]:
    """(instance, model) parameters of ``card`` held in ``state``, as VACASK takes them."""
    held = card.replace(x0=state["gap_nm"] * 1e-9, w0=state["width_nm"] * 1e-9)
    inst = {p.name: held[p.name] for p in MODEL.parameters if p.kind == "instance"}
    model = {p.name: held[p.name] for p in MODEL.parameters if p.kind == "model"}
    return inst, model


@pytest.mark.parametrize("which", sorted(CARDS))
def test_vacask_op_and_dc_sweep_hold_the_state(which):
    from rram.spice.vacask import device_netlist, run_vacask

    card, states = programmed(which)
    values = "[" + ", ".join(repr(v) for v in BIASES) + "]"
    for label, state in states.items():
        inst, model = vacask_params(card, state)
        out = run_vacask(device_netlist(
            models.osdi_module(MODEL), "rram", inst, model,
            analyses=["options reltol=1e-6", "analysis op1 op",
                      f'sweep s1 instance="vin" parameter="dc" values={values}',
                      "analysis dc1 op"], source="dc=-0.2"))
        for name in ("op1", "dc1"):
            for node in ("dut:dgap", "dut:dwidth"):
                assert np.abs(out[name][node]).max() < STATE_TOL_NM, (label, name, node)
        r_read = float(read_resistance(card, state["gap_nm"], state["width_nm"])[0])
        r_dc = 0.1 / -out["dc1"]["vin:flow(br)"][BIASES.index(0.1)]
        assert abs(r_dc / r_read - 1) < READ_TOL, (label, r_dc, r_read)
