"""ngspice decks of an array (deterministic: no dates, no machine paths unless asked).

Cells are frozen (:data:`rram.netlist.FROZEN_PORTS` tied to ground, the state at each
card's ``x0``/``w0``), rendered either as the subcircuit, whose definition the deck
carries inline so that it runs with ``ngspice -b`` anywhere, or as the compiled
Verilog-A module (OSDI), loaded from ``osdi_path`` with ``pre_osdi``.  The analysis is
an operating point; its vectors are the nets, ``i(vout<j>)`` (column outputs, A) and
``i(vin<i>)``.
"""

from __future__ import annotations

from ..netlist import FROZEN_PORTS, CellModel, Netlist, deck
from ..spice import validate
from ..spice.testbench import OSDI_THREADS_NOTE
from .circuit import Circuit, to_netlist

#: Name of the frozen-state rendering of the model (subcircuit and OSDI module).
FROZEN_MODEL = "rram_frozen"


def frozen_subckt() -> str:
    """The subcircuit with the state nodes as ports (see :mod:`rram.printers`)."""
    from ..model import MODEL
    from ..printers.spice_printer import render_subckt

    return render_subckt(MODEL, name=FROZEN_MODEL, expose=FROZEN_PORTS)


def frozen_osdi() -> str:
    """Path of the compiled frozen-state Verilog-A module (compiled once, cached)."""
    from ..spice.models import osdi_module

    return str(osdi_module(FROZEN_MODEL, FROZEN_PORTS))


def header(kind: str, osdi_path: str | None = None, in_deck_osdi: bool = True) -> list[str]:
    """Options and model loading of an array deck (``kind``: ``subckt`` or ``osdi``).

    KLU, as for every OSDI deck of this project (the subcircuit decks' reason for
    Sparse 1.3, the abrupt SET in a transient, does not arise at a frozen state)."""
    if kind == "subckt":
        return [".options klu", *frozen_subckt().splitlines()]
    if osdi_path is None:
        raise ValueError("an OSDI deck needs the path of the compiled module")
    out = [OSDI_THREADS_NOTE, ".options klu num_threads=1"]
    if in_deck_osdi:
        out += [".control", f"pre_osdi {validate.path(osdi_path, 'OSDI path')}",
                "set num_threads=1", ".endc"]
    return out


def render(circuit: Circuit | Netlist, kind: str = "subckt", osdi_path: str | None = None,
           in_deck_osdi: bool = True) -> str:
    """The operating-point deck of ``circuit``."""
    netlist = circuit if isinstance(circuit, Netlist) else to_netlist(circuit)
    model = CellModel(kind, FROZEN_MODEL)
    return deck(netlist, model, header(kind, osdi_path, in_deck_osdi), [".op"])
