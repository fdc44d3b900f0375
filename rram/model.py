"""The assembled device: ports, internal nodes and branch contributions, and its layout.

A :class:`Model` is what every printer renders: the same branches become numpy residuals,
ngspice B-sources and capacitors, and Verilog-A contributions.  Each branch carries a
static flow ``p → n`` and a charge whose time derivative adds to that flow, which is the
form all three targets share (``I(br) <+ flow + ddt(charge)``).  :func:`assemble` builds
it from physics blocks (:mod:`rram.equations`): the blocks name the intermediates and
fill the channels, the device's topology here turns the channels into branches.

State nodes hold the *change* of each state since its initial value, scaled to O(1):
``dgap = (x − x0)/nm``, ``dwidth = (w − w0)/nm`` and ``dtemp = T − tamb`` (K, from the
simulation's ambient).  Zero,
every simulator's first guess, is therefore the DC operating point at rest.  A DC
analysis holds the states (the simulator's ``dc_hold``, :data:`SIMULATOR_SYMBOLS`,
switches their rates off) and each state's weak anchor ``dc_hold·dstate/thold`` then
makes x0, w0 the unique solution at any bias, without ``uic``; a transient has no
anchor (docs/model.md § 5).  Their "currents" are rates (nm/s,
or K for the thermal node: tauth·dΔT/dt = rth·P − ΔT).

The model owns its :class:`Layout`: the columns of its parameters in a card matrix, its
nodes (states with the parameter each is measured from) and its auxiliary nodes.  Every
engine indexes its arrays through a layout, never by position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .constants import NM
from .equations import DEFAULT_BLOCKS, RELAXATION_BLOCKS, WEAR_BLOCKS, Block
from .equations.calibration import CALIBRATION, Calibration
from .equations.scope import (
    DC_HOLD,
    SIMULATOR_SYMBOLS,
    AuxNode,
    Constraint,
    NoiseSource,
    Output,
    Scope,
    V,
    node_symbol,
)
from .expr import ZERO, Expr, let, substitute, sym, symbols
from .params import Parameter
from .step_hint import NewtonLimit, StepBound

GROUND = "gnd"

# Groups fix the section order of the generated files (CMC style) and of the parameters.
GROUPS = (
    ("switch", "Switches"),
    ("instance", "Instance parameters: initial state and per-device variation"),
    ("geometry", "Geometry"),
    ("conduction", "Conduction"),
    ("kinetics", "Ion kinetics"),
    ("thermal", "Thermal"),
    ("extrinsic", "Extrinsic elements of the cell"),
    ("relaxation", "Relaxation after programming"),
    ("wear", "Wear-out over cycling"),
    ("noise", "Read noise"),
    ("numerics", "Numerical widths and guards"),
    ("environment", "The simulation's environment (the simulator's; not in a card file)"),
)


@dataclass(frozen=True)
class Node:
    """An internal node: ``unit`` of its value, ``initial`` value (expression of parameters).

    A state node holds the change of a state since the parameter ``anchor`` (its initial
    value, in SI units), in units of ``scale`` (SI per node unit: 1e-9 for nm)."""

    name: str
    discipline: str
    unit: str
    desc: str
    initial: Expr
    anchor: str = ""
    scale: float = 1.0


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
class Layout:
    """Where each named quantity sits in an engine's arrays: ``parameters`` are the
    columns of a parameter matrix (one row per device), ``unknowns`` the unknowns of a
    system (a circuit's, or the model's internal nodes), ``units`` their units (``V``,
    ``nm``, ``K``, and ``1`` for the wear), ``aux`` the SPICE auxiliary nodes."""

    parameters: tuple[str, ...]
    unknowns: tuple[str, ...]
    units: tuple[str, ...]
    aux: tuple[str, ...] = ()
    #: state node -> (anchor parameter, SI per node unit)
    states: tuple[tuple[str, str, float], ...] = ()

    def column(self, name: str) -> int:
        try:
            return self._columns[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a parameter of this layout") from None

    def columns(self, names: Sequence[str]) -> list[int]:
        return [self.column(n) for n in names]

    def unknown(self, name: str) -> int:
        try:
            return self._unknowns[name]
        except KeyError:
            raise KeyError(f"{name!r} is not an unknown of this layout") from None

    def of_unit(self, unit: str) -> list[int]:
        """Indices of the unknowns in ``unit``."""
        return [i for i, u in enumerate(self.units) if u == unit]

    def held_nodes(self) -> tuple[str, ...]:
        """The programmed states, which a DC solve holds: every state node but the
        temperature (the gap and width in nm, an optional block's disorder in nm and
        wear in 1), in node order."""
        return tuple(name for name, anchor, _ in self.states if anchor != "tamb")

    def held(self) -> list[int]:
        """Indices of :meth:`held_nodes` among the unknowns."""
        return [self.unknown(name) for name in self.held_nodes()]

    def per_unit(self, values: Mapping[str, float]) -> np.ndarray:
        """One value per unknown, chosen by its unit (``{"V": .., "nm": .., "K": ..}``)."""
        try:
            return np.array([values[u] for u in self.units], dtype=float)
        except KeyError as exc:
            raise KeyError(f"no value for the unknowns in {exc.args[0]!r}") from None

    def anchor(self, node: str) -> tuple[str, float]:
        """(the parameter a state node is measured from, SI per node unit)."""
        for name, anchor, scale in self.states:
            if name == node:
                return anchor, scale
        raise KeyError(f"{node!r} is not a state node of this layout")

    @cached_property
    def _columns(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.parameters)}

    @cached_property
    def _unknowns(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.unknowns)}


@dataclass(frozen=True)
class Circuit:
    """A flat circuit around devices of a model: unknown nodes, time inputs, parameter
    order, branches (what the numpy printer renders into an engine kernel;
    :mod:`rram.circuits` builds them)."""

    name: str
    unknowns: tuple[str, ...]
    inputs: tuple[str, ...]
    parameters: tuple[str, ...]
    branches: tuple[Branch, ...]
    device_nodes: dict[str, str]  # device port -> circuit net (an unknown, input or 0)
    probe: Expr  # current into the device's te port (A)
    units: tuple[str, ...] = ()
    states: tuple[tuple[str, str, float], ...] = ()

    def index(self, node: str) -> int:
        return self.unknowns.index(node)

    @cached_property
    def layout(self) -> Layout:
        return Layout(self.parameters, self.unknowns, self.units, (), self.states)


@dataclass(frozen=True, eq=False)
class Model:
    """An assembled device (compared by identity: a model is assembled once)."""

    name: str
    ports: tuple[str, ...]
    nodes: tuple[Node, ...]
    branches: tuple[Branch, ...]
    parameters: tuple[Parameter, ...]
    outputs: tuple[Output, ...]
    #: Intermediates (``let`` names) a SPICE rendering carries on auxiliary nodes of their
    #: own, with their units: shared by several branches, so no expression repeats them.
    aux_nodes: tuple[AuxNode, ...] = ()
    #: Parameter groups (name, title), in the section order of generated files.
    groups: tuple[tuple[str, str], ...] = ()
    #: The default loop-fitting recipe (which parameter carries which feature).
    calibration: Calibration | None = None
    #: Step-control hints a Verilog-A rendering gives its simulator (``$bound_step``).
    step_bounds: tuple[StepBound, ...] = ()
    #: Rules between parameters (every card of the model obeys them).
    constraints: tuple[Constraint, ...] = ()
    #: The blocks it was assembled from, in order.
    blocks: tuple[Block, ...] = field(default=())
    #: Noise currents across its branches (small-signal: ``.noise``, :mod:`rram.noise`).
    noise: tuple[NoiseSource, ...] = ()
    #: Branch voltages whose Newton iterates a Verilog-A rendering limits (``$limit``).
    newton_limits: tuple[NewtonLimit, ...] = ()

    def __reduce__(self):
        # a model pickles by its blocks (functions by reference): unpickled, it is
        # assembled again, and within one process it is the same object
        return (_reassemble, (self.blocks, self.name, self.calibration))

    @property
    def node_names(self) -> tuple[str, ...]:
        return self.ports + tuple(n.name for n in self.nodes)

    @cached_property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @cached_property
    def layout(self) -> Layout:
        """Parameter columns, internal nodes (with their units and state anchors) and
        auxiliary nodes of the model."""
        return Layout(self.parameter_names, tuple(n.name for n in self.nodes),
                      tuple(n.unit for n in self.nodes), tuple(a.name for a in self.aux_nodes),
                      tuple((n.name, n.anchor, n.scale) for n in self.nodes if n.anchor))

    @cached_property
    def by_name(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}

    def parameter(self, name: str) -> Parameter:
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a parameter of model {self.name!r}") from None

    def block_of(self, parameter: str) -> str:
        """The name of the block that declares ``parameter``."""
        for b in self.blocks:
            if any(p.name == parameter for p in b.parameters):
                return b.name
        raise KeyError(f"{parameter!r} is not a parameter of model {self.name!r}")

    def with_role(self, role: str) -> tuple[str, ...]:
        """Names of the parameters whose :attr:`~rram.params.Parameter.role` is ``role``."""
        return tuple(p.name for p in self.parameters if p.role == role)

    @property
    def fittable(self) -> tuple[str, ...]:
        """Parameters a calibration may fit: not the variation offsets and factors (the
        Monte Carlo's hooks), not the numerical widths and guards."""
        return tuple(p.name for p in self.parameters
                     if (p.group != "instance" or p.role == "state")
                     and p.role not in ("smoothing", "guard"))


def check_symbols(branches, outputs, parameters, nodes, noise=()) -> None:
    """Every free symbol of the equations is a declared parameter or a node voltage:
    a misspelt name is an error here, never a new free parameter of the targets."""
    known = {p.name for p in parameters} | {node_symbol(n) for n in ("te", "be")} \
        | {node_symbol(n.name) for n in nodes} | set(SIMULATOR_SYMBOLS)
    used = symbols([b.flow for b in branches] + [b.charge for b in branches]
                   + [o.expr for o in outputs] + [n.power for n in noise])
    unknown = sorted(used - known)
    if unknown:
        raise ValueError(f"the equations use undeclared symbols {', '.join(unknown)} "
                         "(neither a parameter of a block of the model nor one of its nodes)")


def ordered_parameters(blocks: Sequence[Block]) -> tuple[Parameter, ...]:
    """The blocks' parameters by group (:data:`GROUPS`), then in block order: the order
    of the card, the kernels' parameter vectors and the generated files' sections."""
    order = {g: k for k, (g, _) in enumerate(GROUPS)}
    declared: list[Parameter] = []
    owner: dict[str, str] = {}
    for b in blocks:
        for p in b.parameters:
            if p.name in owner:
                raise ValueError(f"parameter {p.name!r} is declared by blocks "
                                 f"{owner[p.name]!r} and {b.name!r}")
            if p.group not in order:
                raise ValueError(f"parameter {p.name!r} of block {b.name!r}: group "
                                 f"{p.group!r} is not one of {', '.join(order)}")
            owner[p.name] = b.name
            declared.append(p)
    return tuple(sorted(declared, key=lambda p: order[p.group]))  # stable: block order


#: Internal nodes of the device; the three states are measured from their initial values.
NODES = (
    Node("ti", "electrical", "V", "top electrode, inside the top contact", ZERO),
    Node("bi", "electrical", "V", "bottom electrode, inside the bottom contact", ZERO),
    Node("tip", "electrical", "V", "CF tip: gap voltage is V(tip, bi) in the device frame",
         ZERO),
    Node("dgap", "electrical", "nm", "state: change of the gap since x0, x - x0", ZERO,
         "x0", NM),
    Node("dwidth", "electrical", "nm", "state: change of the CF width since w0, w - w0",
         ZERO, "w0", NM),
    Node("dtemp", "thermal", "K", "state: CF temperature rise T - tamb", ZERO, "tamb", 1.0),
)
#: The states of the optional blocks, each there when a block fills its channel: the
#: relaxing disorder (rram.equations.relaxation, du_dt in m/s) and the wear
#: (rram.equations.wear, dwear_dt in 1/s).  Node, channel, branch and what it says.
OPTIONAL_STATES = (
    (Node("dsettle", "electrical", "nm", "state: change of the gap's relaxing disorder "
          "since u0, u - u0", ZERO, "u0", NM), "du_dt", "br_u",
     "relaxing disorder: d(u)/dt = rate"),
    (Node("dwear", "electrical", "1", "state: change of the wear since wear0, D - wear0",
          ZERO, "wear0", 1.0), "dwear_dt", "br_wear", "wear: dD/dt = rate"),
)


#: Every model assembled in this process, by its blocks, name and calibration: assembling
#: the same blocks again (a model unpickled in a worker process) gives the same object.
_ASSEMBLED: dict[tuple, Model] = {}


def assemble(blocks: Sequence[Block] = DEFAULT_BLOCKS, *, name: str = "rram",
             calibration: Calibration | None = None) -> Model:
    """The model of ``blocks`` (built in order, the ``cell`` block first): its
    parameters (:func:`ordered_parameters`), the device's branches from the channels the
    blocks filled (:data:`rram.equations.scope.CHANNELS`), its outputs, auxiliary nodes
    and step hints.  The same blocks, name and calibration give the same model object."""
    key = (tuple(blocks), name, calibration)
    model = _ASSEMBLED.get(key)
    if model is None:
        model = _ASSEMBLED[key] = _assemble(*key)
    return model


def _assemble(blocks: tuple[Block, ...], name: str, calibration: Calibration | None
              ) -> Model:
    parameters = ordered_parameters(blocks)
    scope = Scope(tuple(p.name for p in parameters))
    for b in blocks:
        scope.block = b.name
        b.build(scope)
    scope.block = "the device"
    P = scope.P
    pol = P.polarity
    dx_dt = let("dx_dt", scope.total("dx_dt"))
    dw_dt = let("dw_dt", scope.total("dw_dt"))
    gap_rate = let("gap_rate", dx_dt / NM + scope["x_recovery"])  # nm/s
    width_rate = dw_dt / NM + scope["w_recovery"]
    # A DC analysis holds the states (dc_hold = 1): the anchor alone sets them, to x0, w0.
    # Off in a transient, where it would pull a state back over thold (a bake's drift
    # over 1e11 s bent its Arrhenius law by 0.014-0.025 eV with thold = 1e12 s).
    moving = let("moving", 1.0 - DC_HOLD)
    branches = (
        Branch("br_ctop", "te", "ti", (V("te") - V("ti")) / P.rtop, ZERO, "top contact"),
        Branch("br_cbot", "bi", "be", (V("bi") - V("be")) / P.rbot, ZERO, "bottom contact"),
        Branch("br_leak", "ti", "bi", pol * scope.total("i_leak"), P.cp * (V("ti") - V("bi")),
               "oxide leakage, shunt and parasitic capacitance"),
        Branch("br_cf", "ti", "tip", pol * scope.total("i_cf"), ZERO, "metallic CF body"),
        Branch("br_gap", "tip", "bi", pol * scope.total("i_gap"), ZERO,
               "gap: hopping and tip contact"),
        Branch("br_x", "dgap", GROUND, -moving * gap_rate + DC_HOLD * V("dgap") / P.thold,
               V("dgap"), "gap state: d(x)/dt = rate"),
        Branch("br_w", "dwidth", GROUND, -moving * width_rate + DC_HOLD * V("dwidth") / P.thold,
               V("dwidth"),
               "width state: d(w)/dt = rate"),
        Branch("br_th", "dtemp", GROUND, V("dtemp") - scope.total("heat"),
               scope["tau_thermal"] * V("dtemp"), "thermal RC: tauth*d(dT)/dt = rth*P - dT"),
    )
    nodes = NODES
    for node, channel, branch, desc in OPTIONAL_STATES:  # held in DC as the others
        if scope.filled(channel):
            nodes = (*nodes, node)
            branches = (*branches, Branch(
                branch, node.name, GROUND,
                -moving * scope.total(channel) / node.scale
                + DC_HOLD * V(node.name) / P.thold, V(node.name), desc))
    outputs = (*scope.outputs,
               Output("dxdt", dx_dt, "m/s", "gap rate"),
               Output("dwdt", dw_dt, "m/s", "width rate"))
    noise = tuple(scope.noise_sources)
    check_symbols(branches, outputs, parameters, nodes, noise)
    names = {b.name for b in branches}
    for n in noise:
        if n.branch not in names:
            raise ValueError(f"noise source {n.name!r} sits on {n.branch!r}, not a branch of "
                             "the device (" + ", ".join(sorted(names)) + ")")
    # Intermediates on auxiliary nodes (rram/printers/spice_printer.py; the blocks name
    # them), each scaled to O(1): the polarity weights, the log-rates, what two branches
    # share and the guarded states x_nm, w_nm, t_safe.  A node's Newton iterate is a
    # linearisation of its expression, so it bypasses the guards inside it: consumers
    # stay finite for any value (the rates are capped) and read a guarded state clamped
    # to its clip's range (without the clamp 4 of 16 DC loops failed a first attempt; in
    # place, the clips tripled the subcircuit's time per cycle).
    #
    # The gap's runaways at SET and RESET (rram/step_hint.py): 0.3 and 0.05 e-folding
    # times per step.  The subcircuit's sentinel watches p_set·r_v (two aux nodes): ~2 %
    # of a 1R write's time, where the whole gap rate cost 2.3x.
    step_bounds = (StepBound("dgap", gap_rate, 0.3, 1e-12,
                             "SET and RESET runaways: at most 0.3 e-folding times of the "
                             "gap's collapse and 0.05 of its opening per step",
                             scope["p_set"] * scope["rate_vertical"] / NM, 1e3,
                             scope.total("i_gap"), "tip", 0.05),)
    # The gap hops ∝ sinh(V/vt): junction limiting in the SET direction beyond its
    # critical voltage (rram/step_hint.py)
    newton_limits = (NewtonLimit("tip", "bi", V("tip") - V("bi"), sym("vt"),
                                 scope["v_gap_critical"], sym("polarity"),
                                 "gap voltage in the SET direction"),)
    constraints = tuple(c for b in blocks for c in b.constraints)
    return Model(name, ("te", "be"), nodes, branches, parameters, outputs,
                 tuple(scope.aux_nodes), GROUPS, calibration, step_bounds, constraints,
                 blocks, noise, newton_limits)


def _reassemble(blocks: tuple[Block, ...], name: str, calibration: Calibration | None
                ) -> Model:
    return assemble(blocks, name=name, calibration=calibration)


def replace_block(blocks: Sequence[Block], block: Block) -> tuple[Block, ...]:
    """``blocks`` with the one named ``block.name`` replaced by ``block``."""
    names = [b.name for b in blocks]
    if block.name not in names:
        raise ValueError(f"no block named {block.name!r} to replace (blocks: "
                         + ", ".join(names) + ")")
    return tuple(block if b.name == block.name else b for b in blocks)


#: The filament RRAM model of :mod:`rram.equations`, with its calibration recipe.
MODEL = assemble(DEFAULT_BLOCKS, calibration=CALIBRATION)


def relaxing_model() -> Model:
    """The filament model with the optional relaxation block (docs/model.md §10)."""
    # its own name: a simulator holds one module per name (ngspice kept the default
    # model's OSDI module "rram" and refused the relaxing card's parameters)
    return assemble(RELAXATION_BLOCKS, name="rram_relax", calibration=CALIBRATION)


def wearing_model() -> Model:
    """The filament model with the optional wear-out block (docs/model.md §11)."""
    return assemble(WEAR_BLOCKS, name="rram_wear", calibration=CALIBRATION)


def model_with(names: Sequence[str]) -> Model | None:
    """The model a card file's parameters belong to: the default model if it has them
    all, else the model with an optional block that has them all (None: no model)."""
    for model in (MODEL, relaxing_model(), wearing_model()):
        if set(names) <= set(model.parameter_names):
            return model
    return None


def instantiate(model: Model, nodes: dict[str, str]) -> tuple[Branch, ...]:
    """The model's branches with its nodes renamed (ports and internal nodes)."""
    mapping = {node_symbol(a): sym(node_symbol(b)) for a, b in nodes.items()}
    flows = substitute([b.flow for b in model.branches], mapping)
    charges = substitute([b.charge for b in model.branches], mapping)
    return tuple(
        Branch(b.name, nodes.get(b.p, b.p), nodes.get(b.n, b.n), f, q, b.desc)
        for b, f, q in zip(model.branches, flows, charges, strict=True)
    )


__all__ = ["GROUND", "GROUPS", "MODEL", "NODES", "AuxNode", "Branch", "Circuit", "Constraint",
           "Layout", "Model", "Node", "Output", "StepBound", "V", "assemble", "check_symbols",
           "instantiate", "model_with", "node_symbol", "ordered_parameters", "relaxing_model",
           "replace_block", "wearing_model"]
