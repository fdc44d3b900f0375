"""Test circuits around one device: one netlist for the Python engine and ngspice.

The Python engine integrates a circuit, not a bare device: a driven bit line, a series
element that limits the current, a node capacitance and the cell.  Each circuit is a
:class:`rram.netlist.Netlist` (:func:`device_netlist`): the ngspice testbenches print it
(:mod:`rram.spice.testbench`), and :func:`build_circuit` compiles the same value into the
engine's flat system of IR branches, so the elements' equations are written once (in
:mod:`rram.netlist`).

Circuits (the sources driving ``bl``, ``gate`` and ``icc`` are the engine's inputs
``v_app``, ``v_gate`` and ``icc``: :data:`SOURCES`)::

    series   bl ─[ series element ]─ mid ─[ Vsense 0 V ]─ te ─[ rram te→be ]─ 0
    1t1r     bl ─[ Vsense 0 V ]─ te ─[ rram te→be ]─ mid ─[ NMOS d→s, gate ]─ 0

``Cd`` loads ``mid``.  Series elements: ``resistor`` (``rs``), ``compliance`` (an ideal
voltage source with a current limit: ``icc·tanh(gsrc·v/icc)``, ``icc`` the voltage of
its own driven net so SET and RESET phases can differ) and, for 1T1R, the square-law
NMOS of :class:`rram.netlist.Nmos` (SPICE level 1 with λ = 0).  The 0 V sense source is
an ammeter: the engine merges its nets.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from .card import Card, default_card
from .errors import InputError
from .expr import ZERO, Expr, Operand, substitute, sym, tanh
from .model import Branch, Circuit, Model, node_symbol
from .netlist import (
    GROUND,
    Behavioural,
    Capacitor,
    Cell,
    Element,
    Netlist,
    Nmos,
    Resistor,
    V,
    VSource,
)
from .params import Parameter

#: Circuit kinds of the Python engine, in kernel-dispatch order.
CIRCUIT_KINDS = ("resistor", "compliance", "1t1r")
SERIES_ELEMENTS = ("resistor", "compliance")


def _p(name, default, unit, desc, lo, hi) -> Parameter:
    return Parameter(name, float(default), unit, desc, "circuit", float(lo), float(hi))


#: Parameters of the test circuits (appended to the device card in the engine).
CIRCUIT_PARAMETERS: tuple[Parameter, ...] = (
    _p("rs", 1e-3, "Ohm", "Series resistance (series circuit, resistor)", 1e-6, 1e9),
    _p("gsrc", 0.1, "S", "Output conductance of the compliance source below its limit",
       1e-3, 1e6),
    # Every real node has some capacitance; without it the node is algebraic and the
    # abrupt SET makes it stiff for SPICE's Newton.
    _p("cd", 1e-15, "F", "Capacitance from the middle node to ground", 0.0, 1e-9),
    _p("kp", 60e-6, "A/V^2", "NMOS transconductance parameter", 1e-7, 1e-2),
    _p("wl", 10.0, "", "NMOS W/L", 0.1, 1e4),
    _p("vto", 0.7, "V", "NMOS threshold voltage", -2.0, 3.0),
)
CIRCUIT_PARAMETER_NAMES = tuple(p.name for p in CIRCUIT_PARAMETERS)
#: The 1T1R access transistor's parameters (level 1) a user may give.
TRANSISTOR_PARAMETERS = ("kp", "wl", "vto")


def check_transistor(values: Mapping[str, float]) -> dict[str, float]:
    """The access transistor's parameters (names of :data:`TRANSISTOR_PARAMETERS`),
    each within its range; an error names the bad one and the valid range."""
    known = {p.name: p for p in CIRCUIT_PARAMETERS if p.name in TRANSISTOR_PARAMETERS}
    out = {}
    for name, value in values.items():
        if name not in known:
            raise InputError(f"transistor parameter {name!r}: valid are "
                             f"{', '.join(TRANSISTOR_PARAMETERS)}")
        problem = known[name].check(value)
        if problem:
            raise InputError(f"transistor {name}: {problem} (valid {known[name].range_text})")
        out[name] = float(value)
    return out


def saturation_current(v_gate, values: Mapping[str, float] | None = None):
    """The access transistor's saturation current (A) at ``v_gate`` (V): the current a
    1T1R cell's SET is limited to (``values``: its parameters, else the defaults)."""
    import numpy as np

    cp = {p.name: p.default for p in CIRCUIT_PARAMETERS}
    cp.update(values or {})
    over = np.maximum(np.asarray(v_gate, float) - cp["vto"], 0.0)
    return 0.5 * cp["kp"] * cp["wl"] * over ** 2


#: Driven net -> the engine input that is its voltage (the testbench's sources).
SOURCES = {"bl": "v_app", "gate": "v_gate", "icc": "icc"}
INPUTS = tuple(SOURCES.values())


def compliance_current(a: str, b: str, gsrc: Operand, icc_net: str = "icc") -> Expr:
    """I(a → b) of the compliance source: ``icc·tanh(gsrc·v/icc)``, ``icc`` the voltage
    of ``icc_net``."""
    icc = V(icc_net)
    return icc * tanh(gsrc * (V(a) - V(b)) / icc)


def device_netlist(kind: str, values: Mapping[str, Operand] | None = None,
                   card: Card | None = None, suffix: str = "",
                   instance: str = "cell") -> Netlist:
    """The circuit ``kind`` around one cell on nets ``te<suffix>``, ``mid<suffix>``
    (the driven nets of :data:`SOURCES` are shared; their sources are not included).

    ``values`` maps circuit-parameter names to numbers (a printed deck) or expressions;
    by default every one is its symbol (the engine binds them per device).  ``card``
    gives the printed cell's parameters (the cell's equations keep them as symbols);
    ``instance`` names it."""
    if kind not in CIRCUIT_KINDS:
        raise InputError(f"unknown circuit {kind!r}; valid: {', '.join(CIRCUIT_KINDS)}")
    cp: dict[str, Operand] = {n: sym(n) for n in CIRCUIT_PARAMETER_NAMES}
    cp.update(values or {})
    te, mid = f"te{suffix}", f"mid{suffix}"
    be = mid if kind == "1t1r" else GROUND
    elements: list[Element] = [Cell(f"{instance}{suffix}", te, be, card or default_card(),
                                    model=f"rrmod{suffix}")]
    if kind == "1t1r":
        elements += [VSource(f"sense{suffix}", "bl", te),
                     Nmos(f"1{suffix}", mid, "gate", GROUND, cp["kp"], cp["wl"], cp["vto"],
                          model=f"nch{suffix}")]
    elif kind == "resistor":
        elements += [Resistor(f"s{suffix}", "bl", mid, cp["rs"]),
                     VSource(f"sense{suffix}", mid, te)]
    else:
        elements += [Behavioural(f"cc{suffix}", "bl", mid,
                                 compliance_current("bl", mid, cp["gsrc"])),
                     VSource(f"sense{suffix}", mid, te)]
    cd = cp["cd"]
    if isinstance(cd, Expr) or cd > 0:
        elements.append(Capacitor(f"d{suffix}", mid, GROUND, cd))
    return Netlist(tuple(elements), title=f"rram {kind} circuit")


def compile_netlist(name: str, netlist: Netlist, known: Mapping[str, Expr]) -> Circuit:
    """The engine's flat system of a one-cell netlist: ``known`` nets (driven by the
    engine's inputs) and ground substituted, 0 V sources merged into one net, every
    other net and the cell's internal nodes unknown."""
    cells = netlist.of_type(Cell)
    if len(cells) != 1:
        raise InputError(f"circuit {name}: the engine integrates one cell, got {len(cells)}")
    alias: dict[str, str] = {}
    for s in netlist.of_type(VSource):
        if s.dc != 0 or s.pwl is not None or s.p in alias:
            raise InputError(f"circuit {name}: V{s.name} is not a 0 V ammeter; drive nets "
                             "through the engine's inputs")
        alias[s.n] = s.p
    branches = [b for e in netlist.elements if not isinstance(e, VSource)
                for b in e.branches()]
    rename = {node_symbol(n): sym(node_symbol(m)) for n, m in alias.items()}
    fixed = {node_symbol(GROUND): ZERO, **{node_symbol(n): e for n, e in known.items()}}

    def net(n: str) -> str:
        return alias.get(n, n)

    flows = substitute(substitute([b.flow for b in branches], rename), fixed)
    charges = substitute(substitute([b.charge for b in branches], rename), fixed)
    branches = [Branch(b.name, net(b.p), net(b.n), f, q, b.desc)
                for b, f, q in zip(branches, flows, charges, strict=True)]
    cell = cells[0]
    model = cell.card.model
    internal = tuple(n.name for n in model.nodes)
    outer = tuple(dict.fromkeys(net(n) for n in netlist.nets
                                if net(n) not in known and net(n) != GROUND))
    return Circuit(
        name=name,
        unknowns=outer + internal,
        inputs=INPUTS,
        parameters=model.parameter_names + CIRCUIT_PARAMETER_NAMES,
        branches=tuple(branches),
        device_nodes={"te": net(cell.te), "be": net(cell.be)},
        probe=next(b.flow for b in branches if b.name == "br_ctop"),
        units=("V",) * len(outer) + model.layout.units,
        states=model.layout.states,
    )


@cache
def build_circuit(kind: str, model: Model) -> Circuit:
    """The engine's circuit ``kind`` (``resistor``, ``compliance``: series circuits;
    ``1t1r``) around a cell of ``model``."""
    known = {net: sym(u) for net, u in SOURCES.items()}
    return compile_netlist(kind.replace("1t1r", "one_t_one_r"),
                           device_netlist(kind, card=default_card(model)), known)


def kernel_source(model: Model) -> str:
    """The engine's numba kernels of every circuit kind around a cell of ``model``: the
    text of ``rram/_kernels.py`` for the default model (:mod:`rram.engine.jit` compiles
    another model's into its cache)."""
    from .printers.numpy_printer import render_module

    return render_module(model, [build_circuit(k, model) for k in CIRCUIT_KINDS])
