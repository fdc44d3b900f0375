"""ngspice decks of an array (deterministic: no dates, no machine paths unless asked).

Cells are frozen (:func:`rram.netlist.frozen_ports` tied to ground, the state at each
card's ``x0``/``w0``), rendered either as the subcircuit, whose definition the deck
carries inline so that it runs with ``ngspice -b`` anywhere, or as the compiled
Verilog-A module (OSDI), loaded from ``osdi_path`` with ``pre_osdi``.  The analysis is
an operating point; its vectors are the nets, ``i(vout<j>)`` (column outputs, A) and
``i(vin<i>)``.
"""

from __future__ import annotations

from ..dialects import dialect
from ..errors import InputError
from ..model import Model
from ..netlist import Cell, CellModel, Netlist, VSource, deck, frozen_ports, state_net_names
from ..spice import validate
from .circuit import Circuit, to_netlist

#: Name of the frozen-state rendering of the default model (subcircuit and OSDI module).
FROZEN_MODEL = "rram_frozen"


def frozen_name(model: Model) -> str:
    """The frozen-state rendering's name of ``model``: :data:`FROZEN_MODEL` for the
    default model, ``<model>_frozen`` for a model with an optional block.  A simulator
    holds one module per name: an ngspice session that had loaded the relaxing model's
    frozen module as ``rram_frozen`` read the default model's array decks with it
    (1.04e-3 off the native engine, against < 1e-3)."""
    return FROZEN_MODEL if model.name == "rram" else f"{model.name}_frozen"


def frozen_subckt(model: Model, name: str | None = None) -> str:
    """The subcircuit ``name`` (default :func:`frozen_name`) of ``model`` with the state
    nodes as ports (see :mod:`rram.printers`)."""
    from ..printers.spice_printer import render_subckt

    return render_subckt(model, name=name or frozen_name(model), expose=frozen_ports(model))


def frozen_osdi(model: Model, name: str | None = None) -> str:
    """Path of ``model``'s compiled frozen-state Verilog-A module ``name`` (default
    :func:`frozen_name`; compiled once, cached)."""
    from ..spice.models import osdi_module

    return str(osdi_module(model, name or frozen_name(model), frozen_ports(model)))


def header(kind: str, model: Model, osdi_path: str | None = None,
           in_deck_osdi: bool = True, name: str | None = None) -> list[str]:
    """Options and model loading of an array deck (``kind``: ``subckt`` or ``osdi``) of
    cells of ``model``.

    KLU, as for every OSDI deck of this project (the subcircuit decks' reason for
    Sparse 1.3, the abrupt SET in a transient, does not arise at a frozen state)."""
    d = dialect(kind)
    if not d.compiled:
        return [".options klu", *frozen_subckt(model, name).splitlines()]
    if osdi_path is None:
        raise ValueError("an OSDI deck needs the path of the compiled module")
    out = [*d.note(), ".options klu num_threads=1"]
    if in_deck_osdi:
        out += d.load(validate.path(osdi_path, "OSDI path"))
    return out


def render(circuit: Circuit | Netlist, kind: str = "subckt", osdi_path: str | None = None,
           in_deck_osdi: bool = True, name: str | None = None) -> str:
    """The operating-point deck of ``circuit``, its cells instances of the frozen-state
    subcircuit or module ``name``."""
    netlist = circuit if isinstance(circuit, Netlist) else to_netlist(circuit)
    model = cell_model(netlist)
    name = name or frozen_name(model)
    return deck(netlist, CellModel(kind, name),
                header(kind, model, osdi_path, in_deck_osdi, name), [".op"])


def cell_model(netlist: Netlist) -> Model:
    """The model of the netlist's cells (one model per deck)."""
    models = {id(c.card.model): c.card.model for c in netlist.of_type(Cell)}
    if len(models) != 1:
        raise InputError(f"an array deck takes cells of one model, got {len(models)}")
    return next(iter(models.values()))


def pulse_shape(rise: float, width: float, fall: float, gap: float, count: int
                ) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Breakpoints (s) and relative level (0..1) of ``count`` trapezoidal pulses, each
    ``rise``, flat ``width``, ``fall`` and ``gap`` at 0 (s), from 0 at t = 0."""
    period = rise + width + fall + gap
    times, levels = [0.0], [0.0]
    for k in range(count):
        t0 = k * period
        times += [t0 + rise, t0 + rise + width, t0 + rise + width + fall, t0 + period]
        levels += [1.0, 1.0, 0.0, 0.0]
    return tuple(times), tuple(levels)


def state_nets(c: Circuit) -> list[tuple[str, ...]]:
    """The state-change nets of every cell of a :func:`render_write` deck: gap and width
    (nm) first (:func:`rram.netlist.state_net_names`)."""
    model = c.cell_cards.model
    return [state_net_names(model, c.cell_name(k)) for k in range(len(c.cells))]


def render_write(circuit: Circuit, rise: float, width: float, fall: float, gap: float,
                 count: int, kind: str = "osdi", osdi_path: str | None = None,
                 in_deck_osdi: bool = True, max_step: float | None = None) -> str:
    """The transient deck of a pulse train: every source of ``circuit`` pulses from 0 V
    to its value (the plateau) ``count`` times (see :func:`pulse_shape`); cells are free
    from their cards' ``x0``/``w0``, their states on the nets of :func:`state_nets`,
    which the deck saves.  Gear at ``reltol = 1e-4`` as every transient deck of the
    project, steps capped at ``max_step`` (s, default width/20)."""
    import dataclasses

    netlist = to_netlist(circuit, dynamic=True)
    times, levels = pulse_shape(rise, width, fall, gap, count)
    elements = tuple(
        dataclasses.replace(e, pwl=tuple((t, e.dc * s) for t, s in zip(times, levels,
                                                                      strict=True)))
        if isinstance(e, VSource) and e.dc != 0 else e for e in netlist.elements)
    netlist = Netlist(elements, netlist.title + " write", netlist.meta)
    model = CellModel(kind, frozen_name(circuit.cell_cards.model))
    tmax = width / 20 if max_step is None else max_step
    head = [*header(kind, circuit.cell_cards.model, osdi_path, in_deck_osdi),
            ".options method=gear reltol=1e-4"]
    save = [f"v({n})" for pair in state_nets(circuit) for n in pair]
    # the frozen module's states are ports, whose rates run even at the operating point
    # (its probe form has no dc_hold, and no anchor in a transient): the netlister holds
    # them at their cards' x0, w0 there (the nets carry the change since then)
    hold = [".ic " + " ".join(f"v({n})=0" for pair in state_nets(circuit) for n in pair)]
    return deck(netlist, model, head,
                [*hold, f".tran {tmax / 10:.6g} {times[-1]:.6g} 0 {tmax:.6g}"], save)
