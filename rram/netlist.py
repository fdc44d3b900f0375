"""One circuit description for every engine: nets and element instances, as values.

A :class:`Netlist` is an immutable tuple of elements between named nets; ``"0"`` is
ground.  The same value is printed to an ngspice deck (:meth:`Netlist.spice_lines`),
stamped into a sparse nodal system by the array engines (:mod:`rram.array.solve`,
:mod:`rram.array.rc`) and compiled into the single-device engine's dense system
(:func:`rram.circuits.compile_netlist`, through each element's IR ``branches``), so a
circuit is written once.  Values may be IR expressions of circuit parameters (the
single-device engine binds them per device); printing needs numbers.

Elements (``name`` is the part after the SPICE type letter, which the printer adds)::

    Resistor    R<name> a b ohms
    Capacitor   C<name> a b farads
    VSource     V<name> p n <dc> | PWL(t v ...)      (0 V: an ammeter)
    Behavioural B<name> a b I = <IR expression of V(a), V(b), ...>
    Nmos        M<name> d g s s <model> W=<wl>u L=1u  + its level-1 .model card
    Cell        X<name> te be [0 0] rram <card>       (subcircuit rendering)
                N<name> te be [0 0] <model> <instance parameters> + .model card (OSDI)

A frozen cell (``frozen=True``) exposes its gap and width state nodes as ports tied to
ground: the state is then exactly its card's ``x0``/``w0`` (a read at a fixed state).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import names
from .card import Card
from .constants import CELSIUS_ZERO
from .dialects import Dialect, dialect
from .errors import InputError
from .expr import ZERO, Expr, Operand, as_expr, pos_sq, sym, symbols
from .printers.format import format_number, number

GROUND = "0"
#: Internal state nodes a frozen cell of the default model exposes (tied to ground:
#: state = x0, w0); a model with optional states exposes them too (:func:`frozen_ports`).
FROZEN_PORTS = ("dgap", "dwidth")


def frozen_ports(model) -> tuple[str, ...]:
    """The state nodes a frozen cell of ``model`` exposes as ports, tied to ground: every
    programmed state (:meth:`rram.model.Layout.held_nodes`), so each sits at its
    instance value (``x0``, ``w0``, ``u0``, ``wear0``) in any analysis."""
    return model.layout.held_nodes()


def state_net_names(model, cell: str) -> tuple[str, ...]:
    """The nets of a free but observed cell's exposed states (:func:`frozen_ports`):
    ``xg<cell>`` (gap change, nm), ``xw<cell>`` (width change, nm), then ``x<node><cell>``
    for an optional block's state."""
    short = {"dgap": "xg", "dwidth": "xw"}
    return tuple(f"{short.get(n, 'x' + n)}{cell}" for n in frozen_ports(model))
_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def check_net(net: str, what: str = "net") -> str:
    """A net name: ``0`` (ground) or an identifier that no target reserves in a deck."""
    if net == GROUND:
        return net
    problem = names.problem(net, ("spice",))
    if problem:
        raise InputError(f"{what} {net!r} {problem}")
    return net


def _check_name(name: str, kind: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(f"{kind} name {name!r} is not valid: letters, digits and '_' only "
                         "(1-64 characters; the printer adds the SPICE type letter)")


def _check_nets(element) -> None:
    for net in element.nets:
        check_net(net, f"net of {type(element).__name__} {element.name}")


def _number(value: Operand, what: str, *, positive: bool = False,
            nonnegative: bool = False) -> str:
    """The value rendered for a deck; a symbolic value must be bound first."""
    if isinstance(value, Expr):
        if not value.is_num:
            raise InputError(f"{what} is the symbol expression {value!r}: bind it to a "
                             "number before printing")
        value = value.value
    return number(value, what, positive=positive, nonnegative=nonnegative)


def _checked(value: Operand, what: str, **kw: bool) -> None:
    """Check a number now; a symbolic value (an IR expression of circuit parameters,
    bound per device by the engine) is checked when it is printed."""
    if not isinstance(value, Expr):
        _number(value, what, **kw)


def V(net: str) -> Expr:
    """IR symbol of the voltage of ``net`` (``n_<net>``)."""
    return sym(f"n_{net}")


def _branch(element, flow: Expr = ZERO, charge: Expr = ZERO):
    from .model import Branch

    return Branch(f"br_{element.name}", element.a, element.b, flow, charge,
                  type(element).__name__.lower())


def _lines(lines: list[str]) -> list[tuple[str | None, str]]:
    return [(None, line) for line in lines]


def wrap_line(line: str, width: int = 100) -> list[str]:
    """Split a long deck line on spaces into ``+`` continuations."""
    if len(line) <= width:
        return [line]
    words, out, cur = line.split(" "), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            out.append(cur)
            cur = "+ " + w
        else:
            cur = f"{cur} {w}" if cur else w
    out.append(cur)
    return out


@dataclass(frozen=True)
class CellModel:
    """How cells are rendered: the subcircuit library (``subckt``) or the compiled
    Verilog-A (``osdi``); ``name`` is the subcircuit/module name."""

    kind: str = "subckt"
    name: str = "rram"

    def __post_init__(self) -> None:
        dialect(self.kind, "cell model kind")
        check_net(self.name, "cell model name")

    @property
    def dialect(self) -> Dialect:
        return dialect(self.kind)


# Elements ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Resistor:
    name: str
    a: str
    b: str
    ohms: Operand

    def __post_init__(self) -> None:
        _check_name(self.name, "resistor")
        _check_nets(self)
        _checked(self.ohms, f"resistance of R{self.name} (Ohm)", positive=True)

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.a, self.b)

    def branches(self) -> tuple:
        return (_branch(self, (V(self.a) - V(self.b)) / as_expr(self.ohms)),)

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        return [(None, f"R{self.name} {self.a} {self.b} {_number(self.ohms, 'resistance')}")]


@dataclass(frozen=True)
class Capacitor:
    name: str
    a: str
    b: str
    farads: Operand

    def __post_init__(self) -> None:
        _check_name(self.name, "capacitor")
        _check_nets(self)
        _checked(self.farads, f"capacitance of C{self.name} (F)", positive=True)

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.a, self.b)

    def branches(self) -> tuple:
        v = V(self.a) if self.b == GROUND else V(self.a) - V(self.b)
        return (_branch(self, charge=as_expr(self.farads) * v),)

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        return [(None, f"C{self.name} {self.a} {self.b} {_number(self.farads, 'capacitance')}")]


@dataclass(frozen=True)
class VSource:
    """An independent voltage source ``p``-``n``: ``dc`` (V), or a PWL waveform
    ``pwl`` = ((t, v), ...) (s, V); the DC engines use ``dc``."""

    name: str
    p: str
    n: str
    dc: float = 0.0
    pwl: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "voltage source")
        _check_nets(self)
        _number(self.dc, f"voltage of V{self.name}")

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.p, self.n)

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        if self.pwl is not None:
            pts = " ".join(f"{_number(t, 'stimulus time')} {_number(v, 'stimulus value')}"
                           for t, v in self.pwl)
            return _lines(wrap_line(f"V{self.name} {self.p} {self.n} PWL({pts})"))
        value = "0" if self.dc == 0 else _number(self.dc, "voltage")
        return [(None, f"V{self.name} {self.p} {self.n} {value}")]


@dataclass(frozen=True)
class Behavioural:
    """A current ``a → b`` given as an IR expression (:mod:`rram.expr`) of node
    voltages ``n_<net>``; other symbols (circuit parameters the engine binds per device)
    must be bound to numbers before it is printed as a B-source."""

    name: str
    a: str
    b: str
    current: Expr

    def __post_init__(self) -> None:
        _check_name(self.name, "behavioural source")
        _check_nets(self)
        for net in self.controls:
            check_net(net, f"node of B{self.name}")

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.a, self.b)

    @property
    def controls(self) -> tuple[str, ...]:
        return tuple(sorted(s[2:] for s in symbols([self.current]) if s.startswith("n_")))

    def branches(self) -> tuple:
        return (_branch(self, self.current),)

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        from .printers.base import _render
        from .printers.spice_printer import SPICE

        for s in symbols([self.current]):
            if not s.startswith("n_"):
                raise InputError(f"B{self.name}: the expression uses {s!r}, which is not a "
                                 "node voltage (bind parameters to numbers first)")
        return [(None, f"B{self.name} {self.a} {self.b} I = "
                 + _render(self.current, SPICE, {}, True)[0])]


@dataclass(frozen=True)
class Nmos:
    """A square-law NMOS (SPICE level 1, λ = 0, no junctions): β = ``kp``·``wl``
    (A/V²), threshold ``vto`` (V); bulk tied to the source; ``model`` names its card.

    Its drain current (:meth:`branches`) is source/drain symmetric and C¹:
    β/2·(max(v_gs − v_to, 0)² − max(v_gd − v_to, 0)²)."""

    name: str
    d: str
    g: str
    s: str
    kp: Operand
    wl: Operand
    vto: Operand
    model: str = "nch"

    def __post_init__(self) -> None:
        _check_name(self.name, "transistor")
        _check_nets(self)
        check_net(self.model, f"model name of M{self.name}")
        _checked(self.kp, "kp", positive=True)
        _checked(self.wl, "W/L", positive=True)
        _checked(self.vto, "vto")

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.d, self.g, self.s)

    def current(self) -> Expr:
        """Drain current d → s (A) in the IR."""
        beta = as_expr(self.kp) * as_expr(self.wl)
        vov_s = V(self.g) - V(self.s) - as_expr(self.vto)
        vov_d = V(self.g) - V(self.d) - as_expr(self.vto)
        return 0.5 * beta * (pos_sq(vov_s) - pos_sq(vov_d))

    def branches(self) -> tuple:
        from .model import Branch

        return (Branch(f"br_{self.name}", self.d, self.s, self.current(), ZERO,
                       "square-law NMOS (SPICE level 1, lambda = 0)"),)

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        # is=0: no bulk junctions, so a RESET that pulls the drain below the grounded
        # bulk does not forward-bias a diode the engine's square law does not have
        card = (f".model {self.model} nmos level=1 vto={_number(self.vto, 'vto')} "
                f"kp={_number(self.kp, 'kp')} lambda=0 is=0")
        line = (f"M{self.name} {self.d} {self.g} {self.s} {self.s} {self.model} "
                f"W={_number(self.wl, 'W/L')}u L=1u")
        return [(None, line), (self.model, card)]


@dataclass(frozen=True)
class Cell:
    """One RRAM cell ``te``-``be`` with its card; ``frozen`` holds its state at the
    card's ``x0``/``w0``.  ``model`` names the OSDI ``.model`` card of its model
    parameters (cells with equal model parameters may share one).  ``state_nets``: the
    nets of the exposed state ports (:func:`frozen_ports`, in the rendering with them
    as ports) when the state is free but observed: the cell evolves as an ordinary one
    and its gap and width changes (nm) are those nets' voltages."""

    name: str
    te: str
    be: str
    card: Card
    frozen: bool = False
    model: str = "rrmod"
    state_nets: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _check_name(self.name, "cell")
        _check_nets(self)
        check_net(self.model, f"model name of cell {self.name}")
        if self.state_nets is not None and self.frozen:
            raise InputError(f"cell {self.name}: a frozen cell ties its state ports to "
                             "ground; it has no state nets")
        for net in self.state_nets or ():
            check_net(net, f"state net of cell {self.name}")
        ports = frozen_ports(self.card.model)
        if self.state_nets is not None and len(self.state_nets) != len(ports):
            raise InputError(f"cell {self.name}: {len(self.state_nets)} state nets for the "
                             f"{len(ports)} state ports of its model ({', '.join(ports)})")

    @property
    def nets(self) -> tuple[str, ...]:
        return (self.te, self.be)

    def instance_name(self, model: CellModel) -> str:
        return model.dialect.instance(self.name)

    def branches(self) -> tuple:
        """The model's branches between ``te`` and ``be`` (its internal nodes keep
        their names), with the model parameters as symbols: an engine binds the
        card's values per device."""
        from .model import GROUND as MODEL_GROUND
        from .model import instantiate

        model = self.card.model
        return instantiate(model, {"te": self.te, "be": self.be, MODEL_GROUND: GROUND,
                                   **{n.name: n.name for n in model.nodes}})

    def spice(self, model: CellModel) -> list[tuple[str | None, str]]:
        # the environment (the ambient) is the simulator's: .temp, not a parameter
        parameters = [p for p in self.card.model.parameters if p.kind != "environment"]
        vals = {p.name: _number(self.card.values[p.name], f"card {p.name}")
                for p in parameters}
        inst = [p.name for p in parameters if p.kind == "instance"]
        ports = f"{self.te} {self.be}" + (
            " 0" * len(frozen_ports(self.card.model)) if self.frozen else "")
        if self.state_nets is not None:
            ports += " " + " ".join(self.state_nets)
        head = f"{self.instance_name(model)} {ports}"
        if not model.dialect.compiled:  # every parameter on the instance line
            return _lines(wrap_line(f"{head} {model.name} " + " ".join(
                f"{k}={v}" for k, v in vals.items())))
        card = "\n".join(wrap_line(f".model {self.model} {model.name} " + " ".join(
            f"{k}={v}" for k, v in vals.items() if k not in inst)))
        return [(self.model, card), *_lines(wrap_line(f"{head} {self.model} " + " ".join(
            f"{k}={vals[k]}" for k in inst)))]


Element = Resistor | Capacitor | VSource | Behavioural | Nmos | Cell


@dataclass(frozen=True)
class Netlist:
    """Elements between nets; every element name is unique within its SPICE type."""

    elements: tuple[Element, ...]
    title: str = "rram circuit"
    meta: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if any(c in self.title for c in "\n\r"):
            raise InputError("the title must be one line")
        seen: set[str] = set()
        for e in self.elements:
            for net in e.nets:
                check_net(net, f"net of {type(e).__name__} {e.name}")
            key = _LETTER[type(e)] + e.name.lower()
            if key in seen:
                raise InputError(f"two elements named {key!r}")
            seen.add(key)

    @property
    def nets(self) -> tuple[str, ...]:
        """Every net but ground, in order of first use."""
        out: dict[str, None] = {}
        for e in self.elements:
            for net in (*e.nets, *getattr(e, "controls", ())):
                if net != GROUND:
                    out.setdefault(net, None)
        return tuple(out)

    def of_type(self, kind: type) -> tuple:
        return tuple(e for e in self.elements if isinstance(e, kind))

    def spice_lines(self, model: CellModel = CellModel()) -> list[str]:
        """The elements as deck lines; each ``.model`` card is written once, where its
        first user puts it (two different cards under one name are refused)."""
        return element_lines(self.elements, model)


_LETTER = {Resistor: "r", Capacitor: "c", VSource: "v", Behavioural: "b", Nmos: "m",
           Cell: "x"}


def spice_name(e: Element) -> str:
    """The element's SPICE name, lower case: its type's letter and its name (unique
    within a :class:`Netlist`)."""
    return _LETTER[type(e)] + e.name.lower()


def element_lines(elements: Iterable[Element], model: CellModel) -> list[str]:
    cards: dict[str, str] = {}
    out: list[str] = []
    for e in elements:
        for name, text in e.spice(model):
            if name is not None:
                if name in cards:
                    if cards[name] != text:
                        raise InputError(f"two different .model cards named {name!r}")
                    continue
                cards[name] = text
            out += text.split("\n")
    return out


def temperature_line(cards: Iterable[Card]) -> list[str]:
    """The deck's ``.temp`` line (°C, :func:`ambient_celsius`); none for no cells."""
    celsius = ambient_celsius(cards)
    return [] if celsius is None else [f".temp {format_number(celsius)}"]


def ambient_celsius(cards: Iterable[Card]) -> float | None:
    """The simulation ambient (°C) the cells' cards share (``tamb``, K); None for no
    cells.  A simulator has one temperature per run, so cells at different ambients
    cannot share a deck (an instance's own offset is ``dtamb``)."""
    temps = sorted({float(c["tamb"]) for c in cards})
    if not temps:
        return None
    if len(temps) > 1:
        raise InputError(
            "cells at different ambient temperatures (" + ", ".join(f"{t:g}" for t in temps)
            + " K) cannot share one deck: a simulator has one temperature per run (ngspice's "
            ".temp, VACASK's options temp; an instance's own offset is dtamb)")
    return round(temps[0] - CELSIUS_ZERO, 9)


def deck(netlist: Netlist, model: CellModel, header: Sequence[str], analysis: Sequence[str],
         save: Sequence[str] = ()) -> str:
    """A complete deck: title, ``header`` (options, includes), elements, ``analysis``
    lines, ``.save`` of ``save`` and ``.end``."""
    out = [f"* {netlist.title}", *(f"* {k}: {v}" for k, v in netlist.meta), *header,
           *temperature_line(c.card for c in netlist.of_type(Cell))]
    if netlist.of_type(Behavioural):
        from .printers.spice_printer import HELPERS  # the IR's smooth functions

        out += HELPERS
    out += netlist.spice_lines(model)
    out += list(analysis)
    if save:
        out += wrap_line(".save " + " ".join(save))
    out.append(".end")
    return "\n".join(out) + "\n"


__all__ = ["GROUND", "Behavioural", "Capacitor", "Cell", "CellModel", "Element", "Netlist",
           "Nmos", "Resistor", "V", "VSource", "check_net", "deck", "element_lines",
           "spice_name", "temperature_line", "wrap_line"]
