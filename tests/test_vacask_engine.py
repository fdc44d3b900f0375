"""VACASK as an engine (issue 37: one simulator seam): ``simulate_vacask`` and
``--engine vacask`` run the circuits of rram.circuits around the compiled module, with
the same batch runner, events and result type as ngspice."""

from __future__ import annotations

import numpy as np
import pytest

from rram.card import default_card
from rram.engine.stimulus import dc_loops
from rram.errors import ConvergenceError
from rram.experiment import DCLoop
from rram.metrics import loop_metrics
from rram.spice.runner import SpiceOptions, simulate_spice, simulate_vacask

FIGURES = ["v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm", "i_reset_A"]
#: A step cap at which both simulators' answers are the circuit's (the figures move by
#: < 0.1 % from it to 1 µs in either).
CAP = SpiceOptions(tmax=2e-6)


def _figures(res) -> np.ndarray:
    res.raise_on_failure()
    return loop_metrics(res)[FIGURES].to_numpy(float)


@pytest.mark.parametrize("circuit,params,card", [
    ("resistor", {"rs": 5e3}, default_card()),
    ("compliance", {}, default_card()),
    ("compliance", {}, default_card().replace(tamb=358.15)),  # .temp 85 °C
    ("1t1r", DCLoop(circuit="1t1r").circuit_params, default_card()),
], ids=["resistor", "compliance", "compliance-85C", "1t1r"])
def test_vacask_runs_each_circuit_as_ngspice_does(circuit, params, card):
    """Two loops; measured within 1.2e-4 (resistor), 2.9e-4 (compliance), 2.4e-4 (1T1R)."""
    st = (DCLoop(circuit="1t1r").stimulus(2) if circuit == "1t1r"
          else dc_loops(2.0, -2.0, 1e3, cycles=2))
    ng = _figures(simulate_spice(circuit, st, card, params, model="osdi", options=CAP))
    va = _figures(simulate_vacask(circuit, st, card, params, options=CAP))
    assert np.all(np.isfinite(va[:, :4])), va  # it switched: V_set and V_reset exist
    np.testing.assert_allclose(va, ng, rtol=1e-3)


def test_a_batch_of_varied_cells_is_one_netlist():
    """Four cards of the default variation in one VACASK netlist: each as when run
    alone (measured 2.1e-3: one step sequence for all four) and as ngspice's batch."""
    from rram.variation import corner_cards, default_variation

    cards = corner_cards(default_variation(), 4, seed=7, width=1.0)
    loop = DCLoop()
    st = loop.stimulus(2)
    batch = simulate_vacask("compliance", st, cards, loop.circuit_params, CAP, batch=4)
    alone = simulate_vacask("compliance", st, cards, loop.circuit_params, CAP)
    ng = simulate_spice("compliance", st, cards, loop.circuit_params, model="osdi",
                        options=CAP, batch=4)
    assert batch.meta["engine"] == "vacask" and ng.meta["engine"] == "veriloga"
    np.testing.assert_allclose(_figures(batch), _figures(alone), rtol=5e-3)
    np.testing.assert_allclose(_figures(batch), _figures(ng), rtol=5e-3)


def test_an_aborted_analysis_is_a_convergence_error():
    from rram.spice.vacask import run_vacask

    netlist = "\n".join(["no DC path", "ground 0", "model isrc isource",
                         "i1 (0 a) isrc dc=1e-3", "control", "  analysis op1 op", "endc", ""])
    with pytest.raises(ConvergenceError, match="aborted"):
        run_vacask(netlist)


def test_a_bad_netlist_is_not_a_convergence_failure():
    """A vector VACASK cannot save is an error no retry mends (VACASK exits 0 on it)."""
    from rram.errors import SimulationError
    from rram.spice.vacask import run_vacask

    netlist = "\n".join(["unknown node", "ground 0", "model r resistor", 'load "resistor.osdi"',
                         "r1 (a 0) r r=1", "control", "  save v(zz)", "  analysis op1 op",
                         "endc", ""])
    with pytest.raises(SimulationError) as err:
        run_vacask(netlist)
    assert not isinstance(err.value, ConvergenceError), str(err.value)


def test_the_tolerances_ngspice_and_vacask_share_are_passed_on():
    from rram.spice import models
    from rram.spice.testbench import ModelRef, Testbench
    from rram.spice.vacask_deck import render

    osdi = models.osdi_module(default_card().model)
    tb = Testbench("resistor", dc_loops(2.0, -2.0, 1e3), default_card(),
                   model=ModelRef("osdi", str(osdi)),
                   options={"reltol": 1e-6, "abstol": 1e-15, "trtol": 1, "method": "gear"})
    text, _ = render([tb], osdi)
    options = next(line for line in text.splitlines() if line.strip().startswith("options"))
    assert "reltol=1e-06" in options and "abstol=1e-15" in options
    assert "trtol" not in options and 'tran_method="gear2"' in options


def test_one_module_serves_every_value_of_a_circuit_parameter():
    """The compliance source and the transistor are printed with the circuit parameters
    as instance parameters: cells with their own ``gsrc`` share one compiled module."""
    from rram.spice import models
    from rram.spice.testbench import ModelRef, Testbench
    from rram.spice.vacask_deck import render

    osdi = models.osdi_module(default_card().model)
    st = dc_loops(2.0, -2.0, 1e3)
    benches = [Testbench("compliance", st, default_card(), {"gsrc": g},
                         model=ModelRef("osdi", str(osdi))) for g in (0.1, 0.05)]
    text, _ = render(benches, osdi)
    lines = text.splitlines()
    assert sum(line.startswith("model rram_b_") for line in lines) == 1
    assert {line.split()[-1] for line in lines if line.startswith("bcc_")} == {
        "gsrc=0.1", "gsrc=0.05"}


def test_a_model_with_an_optional_block_runs_in_vacask():
    """The relaxation block's state node maps as the standard states do (measured: the
    loop's figures within 1e-4 of ngspice's)."""
    from rram.model import relaxing_model

    card = default_card(relaxing_model())
    st = dc_loops(2.0, -2.0, 1e3, cycles=2)
    ng = simulate_spice("resistor", st, card, {"rs": 5e3}, model="osdi", options=CAP)
    va = simulate_vacask("resistor", st, card, {"rs": 5e3}, options=CAP)
    np.testing.assert_allclose(_figures(va), _figures(ng), rtol=1e-3)
    assert "dsettle" in va.layout.unknowns
