"""No injection: names, values, options and paths are validated before they reach a deck.

ngspice ``.control`` blocks can run shell commands, so a name or value that carries a
newline, ``.control``, ``shell`` or a ``*`` comment must be refused with a clear error,
through the API and through the CLI, and nothing may be written.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from rram.card import default_card
from rram.cli import main
from rram.engine.stimulus import dc_loops
from rram.errors import CardError, InputError
from rram.spice import ModelRef, Testbench
from rram.spice.decks import build

EVIL_NAMES = ["x\n.control", "cell\nshell rm -rf /", "shell", "control", "a*b", "*cell",
              "x y", "", "1abc", "a;b", "a\rb", "endc"]
EVIL_PATHS = ["a.lib\n.control\nshell touch /tmp/pwned\n.endc", "x*y.lib", 'a".lib',
              "a\rb.lib", "a.lib; shell ls"]
STIMULUS = dc_loops(2.0, -2.0, 1e3)


@pytest.mark.parametrize("name", EVIL_NAMES)
def test_instance_names_are_checked(name):
    with pytest.raises(InputError, match=r"instance name|reserved"):
        Testbench("resistor", STIMULUS, instance=name)


@pytest.mark.parametrize("path", EVIL_PATHS)
def test_model_paths_are_checked(path):
    with pytest.raises(InputError, match="not a safe path"):
        ModelRef("subckt", path)


@pytest.mark.parametrize("options", [{"shell": 1.0}, {"x\n.control": 1.0},
                                     {"reltol": math.nan}, {"reltol": math.inf},
                                     {"method": "gear\n.control"}, {"reltol": "1e-3\nshell"}])
def test_options_are_checked(options):
    with pytest.raises(InputError):
        Testbench("resistor", STIMULUS, options=options)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_card_values_must_be_finite(value):
    with pytest.raises(CardError, match="rho0"):
        default_card().replace(rho0=value)


@pytest.mark.parametrize("params", [{"rs": math.nan}, {"cd": -1.0}, {"shell": 1.0}])
def test_circuit_parameters_are_checked(params):
    with pytest.raises(InputError):
        Testbench("resistor", STIMULUS, circuit_params=params)


def test_titles_and_settings_are_checked():
    with pytest.raises(InputError, match="one line"):
        Testbench("resistor", STIMULUS, title="ok\n.control")
    with pytest.raises(InputError, match="unknown setting"):
        build("dc-loop", {"v_set\nshell": 1.0})
    with pytest.raises(InputError, match="finite"):
        build("dc-loop", {"v_set": math.nan})


def test_a_valid_deck_has_no_control_block_except_loading_osdi():
    text = Testbench("resistor", STIMULUS).render()
    assert ".control" not in text.lower() and "shell" not in text.lower()
    text = Testbench("1t1r", STIMULUS, model=ModelRef("osdi", "rram.osdi")).render()
    block = text.split(".control\n")[1].split(".endc")[0]
    assert block == "pre_osdi rram.osdi\nset num_threads=1\n"


CLI_CASES = [
    ["netlist", "dc-loop", "--instance", "x\n.control"],
    ["netlist", "dc-loop", "--instance", "shell"],
    ["netlist", "dc-loop", "--option", "shell=1"],
    ["netlist", "dc-loop", "--option", "method=gear\n.control"],
    ["netlist", "dc-loop", "--option", "reltol=nan"],
    ["netlist", "dc-loop", "--model-path", "a.lib\n.control\nshell touch /tmp/pwned"],
    ["netlist", "dc-loop", "--set", "rs=inf"],
    ["netlist", "dc-loop", "--set", "rs\n.control=1"],
    ["netlist", "dc-loop", "--tmax", "nan"],
    ["export", "--format", "spice", "--name", "rram\n.control"],
    ["export", "--format", "veriloga", "--name", "a*b"],
]


@pytest.mark.parametrize("args", CLI_CASES)
def test_cli_refuses_injection_and_writes_nothing(args, tmp_path):
    out = tmp_path / "deck.cir"
    result = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Error" in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_cli_refuses_a_card_with_a_non_finite_value(tmp_path):
    data = json.loads(default_card().to_json())
    data["parameters"]["rho0"]["value"] = math.nan
    card = tmp_path / "card.json"
    card.write_text(json.dumps(data))  # writes the bare token NaN
    out = tmp_path / "deck.cir"
    result = CliRunner().invoke(main, ["netlist", "dc-loop", "--card", str(card), "--out",
                                       str(out)])
    assert result.exit_code == 2 and not out.exists(), result.output
