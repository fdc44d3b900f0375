"""The assembled device: ports, internal nodes and branch contributions.

A :class:`Model` is what every printer renders: the same branches become numpy residuals,
ngspice B-sources and capacitors, and Verilog-A contributions.  Each branch carries a
static flow ``p → n`` and a charge whose time derivative adds to that flow, which is the
form all three targets share (``I(br) <+ flow + ddt(charge)``).

State nodes hold the *change* of each state since its initial value, scaled to O(1):
``dgap = (x − x0)/nm``, ``dwidth = (w − w0)/nm`` and ``dtemp = T − tamb`` (K).  Zero,
every simulator's first guess, is therefore the DC operating point at rest, and each
state's weak anchor ``dstate/thold`` makes it the unique one without ``uic`` (and is
negligible in any transient; physics.md, rules §3).  Their "currents" are rates (nm/s,
or K for the thermal node scaled by ``rth``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import equations as eq
from .card import PARAMETERS
from .expr import ZERO, Expr, sym
from .params import Parameter

GROUND = "gnd"


def node_symbol(node: str) -> str:
    """IR symbol of a node voltage: ``n_<node>``."""
    return f"n_{node}"


def V(node: str) -> Expr:
    return sym(node_symbol(node))


@dataclass(frozen=True)
class Node:
    """An internal node: ``unit`` of its value, ``initial`` value (expression of parameters)."""

    name: str
    discipline: str
    unit: str
    desc: str
    initial: Expr


@dataclass(frozen=True)
class Branch:
    """A contribution ``flow + d(charge)/dt`` from node ``p`` to node ``n``."""

    name: str
    p: str
    n: str
    flow: Expr
    charge: Expr
    desc: str


@dataclass(frozen=True)
class Output:
    """An operating-point output (Verilog-A ``OPP``-style), for monitoring."""

    name: str
    expr: Expr
    unit: str
    desc: str


@dataclass(frozen=True)
class Model:
    name: str
    ports: tuple[str, ...]
    nodes: tuple[Node, ...]
    branches: tuple[Branch, ...]
    parameters: tuple[Parameter, ...]
    outputs: tuple[Output, ...]
    #: Intermediates (``let`` names) a SPICE rendering carries on auxiliary nodes of their
    #: own, with their units: shared by several branches, so no expression repeats them.
    aux_nodes: tuple[tuple[str, str], ...] = ()

    @property
    def node_names(self) -> tuple[str, ...]:
        return self.ports + tuple(n.name for n in self.nodes)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)


def build_model() -> Model:
    """The filament RRAM model of :mod:`rram.equations` as branches between nodes."""
    P = eq.P
    pol = P.polarity
    state = eq.guarded_state(
        v_cell=pol * (V("ti") - V("bi")),
        v_gap=pol * (V("tip") - V("bi")),
        gap_nm=P.x0 / eq.NM + V("dgap"),
        width_nm=P.w0 / eq.NM + V("dwidth"),
        dtemp=V("dtemp"),
    )
    t_safe, kt = eq.temperature(state)
    p_set, p_reset = eq.polarity_factors(state)
    c = eq.conduction(state, t_safe)
    k = eq.kinetics(state, c, kt, p_set, p_reset)

    nodes = (
        Node("ti", "electrical", "V", "top electrode, inside the top contact", ZERO),
        Node("bi", "electrical", "V", "bottom electrode, inside the bottom contact", ZERO),
        Node("tip", "electrical", "V", "CF tip: gap voltage is V(tip, bi) in the device frame",
             ZERO),
        Node("dgap", "electrical", "nm", "state: change of the gap since x0, x - x0", ZERO),
        Node("dwidth", "electrical", "nm", "state: change of the CF width since w0, w - w0",
             ZERO),
        Node("dtemp", "thermal", "K", "state: CF temperature rise T - tamb", ZERO),
    )
    branches = (
        Branch("br_ctop", "te", "ti", (V("te") - V("ti")) / P.rtop, ZERO, "top contact"),
        Branch("br_cbot", "bi", "be", (V("bi") - V("be")) / P.rbot, ZERO, "bottom contact"),
        Branch("br_leak", "ti", "bi", pol * c.i_leak, P.cp * (V("ti") - V("bi")),
               "oxide leakage, shunt and parasitic capacitance"),
        Branch("br_cf", "ti", "tip", pol * c.i_cf, ZERO, "metallic CF body"),
        Branch("br_gap", "tip", "bi", pol * c.i_gap, ZERO, "gap: hopping and tip contact"),
        Branch("br_x", "dgap", GROUND,
               -(k.dx_dt / eq.NM + state.x_recovery) + V("dgap") / P.thold,
               V("dgap"), "gap state: d(x)/dt = rate"),
        Branch("br_w", "dwidth", GROUND,
               -(k.dw_dt / eq.NM + state.w_recovery) + V("dwidth") / P.thold,
               V("dwidth"), "width state: d(w)/dt = rate"),
        Branch("br_th", "dtemp", GROUND, V("dtemp") - c.rth * c.power,
               P.tauth * V("dtemp"), "thermal RC: tauth*d(dT)/dt = rth*P - dT"),
    )
    outputs = (
        Output("temp", c.temperature, "K", "local CF temperature"),
        Output("gapm", state.x, "m", "tunnelling gap"),
        Output("widthm", state.w, "m", "CF width"),
        Output("rcf", c.r_cf, "Ohm", "CF body resistance"),
        Output("power", c.power, "W", "Joule power in the filament path"),
        Output("rth", c.rth, "K/W", "thermal resistance of the CF and its surroundings"),
        Output("dxdt", k.dx_dt, "m/s", "gap rate"),
        Output("dwdt", k.dw_dt, "m/s", "width rate"),
    )
    aux_nodes = (
        ("ln_rate_vertical", "ln(m/s)"),
        ("ln_rate_lateral", "ln(m/s)"),
        ("ln_rate_release", "ln(m/s)"),
        ("ln_rate_hop", "ln(m/s)"),
    )
    return Model("rram", ("te", "be"), nodes, branches, PARAMETERS, outputs, aux_nodes)


MODEL = build_model()
