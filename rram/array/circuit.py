"""An index-based, vectorised form of a netlist: what the native engines stamp.

A :class:`Circuit` holds the same elements as a :class:`rram.netlist.Netlist` (linear
resistors and capacitors, grounded voltage sources, RRAM cells, nonlinear devices in
the IR) with nets as integers (``-1`` is ground) and each element kind as arrays, so an
array of a million cells costs arrays, not a million objects.  :func:`from_netlist`
reads any netlist of those elements; :func:`to_netlist` writes the elements back for
the ngspice printer, so the array builder (:mod:`rram.array.build`) defines an array
once and both the deck and the native system come from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..card import CardBatch, default_card
from ..errors import InputError
from ..expr import Expr, substitute, sym
from ..model import node_symbol
from ..netlist import (
    GROUND,
    Behavioural,
    Capacitor,
    Cell,
    Element,
    Netlist,
    Nmos,
    Resistor,
    VSource,
    state_net_names,
)
from .devices import Device, nmos_current
from .spec import Transistor

GND = -1


@dataclass(frozen=True)
class DeviceGroup:
    """Elements sharing one current expression ``device`` between ``nodes`` (one row
    per element, one column per terminal); ``transistor`` marks an NMOS group."""

    device: Device
    nodes: np.ndarray
    names: Callable[[int], str]
    transistor: Transistor | None = None


@dataclass(frozen=True)
class Circuit:
    """Nets ``0..n_nets-1`` (names from ``net_name``); element arrays by kind.

    ``sources``: grounded DC sources (net, volts); ``cells``: RRAM cells (te, be) with
    one card each in ``cell_cards`` (a batch, row k the card of cell k; states at
    ``x0``/``w0``, held)."""

    n_nets: int
    net_name: Callable[[int], str]
    res: np.ndarray  # (k, 2) nets
    ohms: np.ndarray
    caps: np.ndarray  # (k, 2) nets
    farads: np.ndarray
    src: np.ndarray  # (k,) net
    volts: np.ndarray
    src_name: Callable[[int], str]
    cells: np.ndarray  # (k, 2) te, be
    cell_cards: CardBatch
    cell_name: Callable[[int], str]
    groups: tuple[DeviceGroup, ...] = ()
    title: str = "rram circuit"
    meta: tuple[tuple[str, str], ...] = field(default=())
    #: (n_nets, 2) places of the nets (cell pitches), if known: the engines order their
    #: unknowns by nested dissection of these places (:mod:`rram.array.ordering`).
    xy: np.ndarray | None = None
    #: (len(res), 3) ints, if known: what each resistor is — kind (an index into
    #: :data:`rram.array.build.RESISTOR_KINDS`), line and section along it.
    res_where: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.ohms.size and not np.all(self.ohms > 0):
            raise InputError("every resistance must be > 0 Ohm")
        if np.unique(self.src).size != self.src.size:
            raise InputError("a net is driven by two voltage sources")


def _index(net: str, nets: dict[str, int]) -> int:
    if net == GROUND:
        return GND
    return nets.setdefault(net, len(nets))


def from_netlist(netlist: Netlist) -> Circuit:
    """The index form of ``netlist``; voltage sources must be grounded DC sources (their
    ``dc`` value), behavioural sources two-terminal, cells frozen."""
    nets: dict[str, int] = {}
    res, ohms, caps, farads, src, volts, src_names = [], [], [], [], [], [], []
    cells, cards, cell_names = [], [], []
    groups: dict[tuple, tuple[Device, list, list, Transistor | None]] = {}
    for e in netlist.elements:
        if isinstance(e, Resistor):
            res.append((_index(e.a, nets), _index(e.b, nets)))
            ohms.append(e.ohms)
        elif isinstance(e, Capacitor):
            caps.append((_index(e.a, nets), _index(e.b, nets)))
            farads.append(e.farads)
        elif isinstance(e, VSource):
            if GROUND not in (e.p, e.n):
                raise InputError(f"V{e.name}: the native engine takes grounded sources only")
            sign = 1.0 if e.n == GROUND else -1.0
            src.append(_index(e.p if e.n == GROUND else e.n, nets))
            volts.append(sign * e.dc)
            src_names.append(e.name)
        elif isinstance(e, Cell):
            if not e.frozen:
                raise InputError(f"cell {e.name}: the native DC engine reads frozen cells")
            cells.append((_index(e.te, nets), _index(e.be, nets)))
            cards.append(e.card)
            cell_names.append(e.name)
        elif isinstance(e, Nmos):
            t = Transistor(e.kp, e.wl, e.vto)
            key = ("nmos", t)
            if key not in groups:
                groups[key] = (Device(nmos_current(t, "t0", "t1", "t2"), ("t0", "t1", "t2")),
                               [], [], t)
            groups[key][1].append([_index(n, nets) for n in (e.d, e.g, e.s)])
            groups[key][2].append(e.name)
        elif isinstance(e, Behavioural):
            if e.controls != tuple(sorted({e.a, e.b} - {GROUND})):
                raise InputError(f"B{e.name}: the native engine takes two-terminal "
                                 "behavioural sources (controlled by their own nets)")
            expr = substitute([e.current], {node_symbol(e.a): sym("n_t0"),
                                            node_symbol(e.b): sym("n_t1")})[0]
            key = ("b", id(expr))
            if key not in groups:
                groups[key] = (Device(expr, ("t0", "t1")), [], [], None)
            groups[key][1].append([_index(e.a, nets), _index(e.b, nets)])
            groups[key][2].append(e.name)
        else:
            raise InputError(f"element {e!r} is not supported by the native engine")
    names = list(nets)
    return Circuit(
        n_nets=len(nets), net_name=names.__getitem__,
        res=np.array(res, np.int64).reshape(-1, 2), ohms=np.array(ohms, float),
        caps=np.array(caps, np.int64).reshape(-1, 2), farads=np.array(farads, float),
        src=np.array(src, np.int64), volts=np.array(volts, float),
        src_name=src_names.__getitem__,
        cells=np.array(cells, np.int64).reshape(-1, 2),
        cell_cards=CardBatch.of(cards) if cards else CardBatch.empty(default_card()),
        cell_name=cell_names.__getitem__,
        groups=tuple(DeviceGroup(dev, np.array(nodes, np.int64), names_.__getitem__, t)
                     for dev, nodes, names_, t in groups.values()),
        title=netlist.title, meta=netlist.meta)


def to_netlist(c: Circuit, dynamic: bool = False) -> Netlist:
    """The elements of ``c`` for the ngspice printer.  Cells with equal model
    parameters share one ``.model`` card (``rm<k>``, numbered by first use).  Cells are
    frozen, or with ``dynamic`` free from their card's ``x0``/``w0``, their state ports
    on the nets ``xg<cell>`` (gap change, nm) and ``xw<cell>`` (width change, nm)."""
    name = c.net_name

    def net(k: int) -> str:
        return GROUND if k == GND else name(int(k))

    out: list[Element] = []
    for k, (v, n) in enumerate(zip(c.volts, c.src, strict=True)):
        out.append(VSource(c.src_name(k), net(n), GROUND, float(v)))
    for k, ((a, b), r) in enumerate(zip(c.res, c.ohms, strict=True)):
        out.append(Resistor(f"w{k}", net(a), net(b), float(r)))
    for k, ((a, b), f) in enumerate(zip(c.caps, c.farads, strict=True)):
        out.append(Capacitor(f"w{k}", net(a), net(b), float(f)))
    models: dict[tuple[float, ...], str] = {}
    cards = c.cell_cards
    model_cols = [k for k, p in enumerate(cards.model.parameters) if p.kind != "instance"]
    for k, (te, be) in enumerate(c.cells):
        card = cards.card(k)
        key = tuple(cards.values[k, model_cols])
        model = models.setdefault(key, f"rm{len(models)}")
        name_k = c.cell_name(k)
        states = state_net_names(cards.model, name_k) if dynamic else None
        out.append(Cell(name_k, net(te), net(be), card, frozen=not dynamic, model=model,
                        state_nets=states))
    for g in c.groups:
        for k, nodes in enumerate(g.nodes):
            nets_ = [net(n) for n in nodes]
            if g.transistor is not None:
                t = g.transistor
                out.append(Nmos(g.names(k), *nets_, t.kp, t.wl, t.vto, model="nch"))
            else:
                expr: Expr = substitute([g.device.current], {
                    node_symbol(t): sym(node_symbol(n))
                    for t, n in zip(g.device.terminals, nets_, strict=True)})[0]
                out.append(Behavioural(g.names(k), nets_[0], nets_[1], expr))
    return Netlist(tuple(out), c.title, c.meta)
