"""The deck dialects (rram.dialects): each rendering spelt once, and asked, not tested for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rram.dialects import BY_ENGINE, BY_FORMAT, DIALECTS, KINDS, OSDI, SUBCKT, dialect
from rram.errors import InputError

PACKAGE = Path(__file__).resolve().parents[1] / "rram"


def test_an_unknown_kind_names_the_valid_ones():
    with pytest.raises(InputError, match=r"model kind 'va' is not one of subckt, osdi"):
        dialect("va")
    with pytest.raises(InputError, match=r"cell model kind 'x'"):
        dialect("x", "cell model kind")


def test_the_spellings():
    assert (SUBCKT.instance("cell"), OSDI.instance("cell")) == ("Xcell", "Ncell")
    assert SUBCKT.vector("Xcell", "dgap") == "v(xcell.dgap)"
    assert OSDI.vector("Ncell", "dgap") == "v(ncell#dgap)"
    assert SUBCKT.load("m.lib") == [".include m.lib"]
    assert OSDI.load("m.osdi") == [".control", "pre_osdi m.osdi", "set num_threads=1",
                                   ".endc"]
    assert SUBCKT.note() == [] and OSDI.note()[0].startswith("* num_threads=1")


def test_every_map_covers_every_dialect():
    from rram.experiment import ENGINES

    assert set(KINDS) == {"subckt", "osdi"}
    for mapping in (BY_ENGINE, BY_FORMAT):
        assert sorted(d.kind for d in mapping.values()) == sorted(KINDS)
    hosts = {k: v for k, v in ENGINES.items() if v and k != "vacask"}
    assert hosts == {e: d.kind for e, d in BY_ENGINE.items()}
    assert ENGINES["vacask"] == OSDI.kind  # VACASK runs the compiled module
    assert {d.suffix for d in DIALECTS.values()} == {".lib", ".osdi"}


def test_no_module_tests_the_kind_itself():
    """Netlisters ask their dialect; a comparison with a kind's name anywhere else in the
    package is a second definition of what that kind means."""
    pattern = re.compile(r"""(==|!=|\bin)\s*\(?\s*["'](subckt|osdi)["']""")
    offenders = [f"{path.relative_to(PACKAGE)}:{n}"
                 for path in PACKAGE.rglob("*.py") if path.name != "dialects.py"
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line)]
    assert offenders == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_testbench_spells_its_cell_by_its_dialect(kind):
    from rram.card import default_card
    from rram.engine.stimulus import dc_loops
    from rram.spice.testbench import ModelRef, Testbench

    d = dialect(kind)
    tb = Testbench("resistor", dc_loops(2.0, -2.0, 1e3), default_card(),
                   model=ModelRef(kind, "model" + d.suffix))
    text = tb.render()
    assert f"\n{d.instance('cell')} " in text
    assert tb.vectors()["dgap"] == d.vector(d.instance("cell"), "dgap")
    assert all(line in text for line in d.load("model" + d.suffix))
    options = next(line for line in text.splitlines() if line.startswith(".options "))
    assert ("klu" in options.split()) == (d.solver == "klu")
