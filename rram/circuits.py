"""Test circuits around one device, in the same IR as the device.

The Python engine integrates a circuit, not a bare device: a driven bit line, a series
element that limits the current, a node capacitance and the cell.  Writing the series
elements in the IR keeps the engine and the generated ngspice testbenches on the same
equations.

Circuits (``bl`` is driven by the input ``v_app``; ``mid`` is the node with ``cd``)::

    series   bl ─[ series element ]─ mid ─[ rram te→be ]─ gnd
    1t1r     bl ─[ rram te→be ]─ mid ─[ NMOS d→s, gate v_gate ]─ gnd

Series elements: ``resistor`` (``rs``), ``compliance`` (an ideal voltage source with a
current limit: ``icc·tanh(gsrc·v/icc)``, ``icc`` an input so SET and RESET phases can
differ) and, for 1T1R, a square-law NMOS identical to SPICE level 1 with λ = 0, written
as ``β/2·(max(v_gs − v_to, 0)² − max(v_gd − v_to, 0)²)`` (source/drain symmetric, C¹).
"""

from __future__ import annotations

from dataclasses import dataclass

from .expr import ZERO, Expr, pos_sq, substitute, sym, tanh
from .model import GROUND, MODEL, Branch, Model, node_symbol
from .params import Parameter

#: Circuit kinds of the Python engine, in kernel-dispatch order.
CIRCUIT_KINDS = ("resistor", "compliance", "1t1r")


@dataclass(frozen=True)
class Circuit:
    """A flat circuit: unknown nodes, time inputs, parameter order, branches."""

    name: str
    unknowns: tuple[str, ...]
    inputs: tuple[str, ...]
    parameters: tuple[str, ...]
    branches: tuple[Branch, ...]
    device_nodes: dict[str, str]  # device node -> circuit node
    probe: Expr  # current into the device's te port (A)

    def index(self, node: str) -> int:
        return self.unknowns.index(node)


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
INPUTS = ("v_app", "v_gate", "icc")

SERIES_ELEMENTS = ("resistor", "compliance")


def instantiate(model: Model, nodes: dict[str, str]) -> tuple[Branch, ...]:
    """The model's branches with its nodes renamed (ports and internal nodes)."""
    mapping = {node_symbol(a): sym(node_symbol(b)) for a, b in nodes.items()}
    flows = substitute([b.flow for b in model.branches], mapping)
    charges = substitute([b.charge for b in model.branches], mapping)
    return tuple(
        Branch(b.name, nodes.get(b.p, b.p), nodes.get(b.n, b.n), f, q, b.desc)
        for b, f, q in zip(model.branches, flows, charges, strict=True)
    )


def _ground_known(branches: tuple[Branch, ...], known: dict[str, Expr]) -> tuple[Branch, ...]:
    """Replace known node voltages (ground, driven nodes) by their expressions."""
    mapping = {node_symbol(n): e for n, e in known.items()}
    flows = substitute([b.flow for b in branches], mapping)
    charges = substitute([b.charge for b in branches], mapping)
    return tuple(
        Branch(b.name, b.p, b.n, f, q, b.desc)
        for b, f, q in zip(branches, flows, charges, strict=True)
    )


def _v(node: str) -> Expr:
    return sym(node_symbol(node))


def series_element(kind: str, a: str, b: str) -> Branch:
    v = _v(a) - _v(b)
    if kind == "resistor":
        return Branch("br_series", a, b, v / sym("rs"), ZERO, "series resistor")
    if kind == "compliance":
        icc = sym("icc")
        return Branch("br_series", a, b, icc * tanh(sym("gsrc") * v / icc), ZERO,
                      "compliance-limited voltage source")
    raise ValueError(f"unknown series element {kind!r}; valid: {', '.join(SERIES_ELEMENTS)}")


def nmos(drain: str, source: str) -> Branch:
    beta = sym("kp") * sym("wl")
    vg = sym("v_gate")
    vov_s = vg - _v(source) - sym("vto")
    vov_d = vg - _v(drain) - sym("vto")
    return Branch("br_nmos", drain, source, 0.5 * beta * (pos_sq(vov_s) - pos_sq(vov_d)), ZERO,
                  "square-law NMOS (SPICE level 1, lambda = 0)")


def build_circuit(kind: str, model: Model = MODEL) -> Circuit:
    """``kind``: ``resistor``, ``compliance`` (series circuits) or ``1t1r``."""
    internal = {n.name: n.name for n in model.nodes}
    if kind in SERIES_ELEMENTS:
        device = instantiate(model, {"te": "mid", "be": GROUND, **internal})
        extra = (series_element(kind, "bl", "mid"),)
    elif kind == "1t1r":
        device = instantiate(model, {"te": "bl", "be": "mid", **internal})
        extra = (nmos("mid", GROUND),)
    else:
        raise ValueError(f"unknown circuit {kind!r}; valid: resistor, compliance, 1t1r")
    cap = Branch("br_cd", "mid", GROUND, ZERO, sym("cd") * _v("mid"), "middle-node capacitance")
    branches = _ground_known(device + extra + (cap,), {GROUND: ZERO, "bl": sym("v_app")})
    unknowns = ("mid", *(n.name for n in model.nodes))
    device_nodes = {"te": "mid" if kind in SERIES_ELEMENTS else "bl",
                    "be": GROUND if kind in SERIES_ELEMENTS else "mid", **internal}
    probe = next(b.flow for b in branches if b.name == "br_ctop")
    return Circuit(
        name=kind.replace("1t1r", "one_t_one_r"),
        unknowns=unknowns,
        inputs=INPUTS,
        parameters=model.parameter_names + CIRCUIT_PARAMETER_NAMES,
        branches=branches,
        device_nodes=device_nodes,
        probe=probe,
    )
