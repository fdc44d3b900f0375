r"""Render the model to an ngspice subcircuit (no Verilog-A needed).

Every branch becomes a B-source (``I = flow``) and, where it has a charge, a capacitor;
the states live on internal nodes held by those capacitors.  The intermediates listed in
``Model.aux_nodes`` are placed on auxiliary nodes of their own, as a current into a 1 Ω
resistor (scaled and offset, :class:`~rram.model.AuxNode`), and every expression refers
to them by node.  Why: ngspice differentiates each B-source symbolically and evaluates
the value and every derivative as separate trees, with no shared sub-expressions, so an
intermediate written in place is evaluated again in every derivative of every branch
that uses it.  Which intermediates are lifted is a trade of cost per Newton iteration
against robustness (see ``aux_nodes`` in :mod:`rram.model`).  Soft floors and
ceilings are ``.func`` calls with a fast path: more than 37 guard widths inside a bound
a call is its argument (the same value to rounding), and the softplus is evaluated only
nearer the bound (:func:`_soft_bounds`; the gap at its LRS or HRS bound takes one
softplus instead of two).  The guarded states (a soft clip on an auxiliary node) are
read through ``rr_clamp`` to the clip's range: on their own nodes, Newton iterates would
otherwise bypass the clip (4 of 16 DC loops failed their first attempt when they were
lifted without it), and in place the clips multiplied every branch (3x the time).
Parameter-only sub-expressions become ``.param`` lines (evaluated once per instance);
the smooth building blocks are ``.func`` definitions inside the subcircuit.
Selected lines of the output (the default card; long lines cut here)::

    >>> from rram.model import MODEL
    >>> lines = render_subckt(MODEL).splitlines()
    >>> keep = (".subckt", ".param ea_eff", ".func rr_safe_exp", "Rln_rate_hop", "Bbr_cf",
    ...         "Cbr_x", ".ends")
    >>> print("\n".join(line[:64].rstrip() for line in lines if line.startswith(keep)))
    .subckt rram te be polarity=1.0 x0=3.5e-09 w0=5e-10 state=0.0 xl
    .param ea_eff = {ea + dea}
    .func rr_safe_exp(arg) {((arg) < 40.0 ? exp(arg) : exp(40.0)*(1
    Rln_rate_hop ln_rate_hop 0 1 noisy=0
    Bbr_cf ti tip I = polarity*(1e-06*v(g_cf)*(polarity*(v(ti) - v(b
    Cbr_x dgap 0 1.0
    .ends rram
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import names as reserved_names
from ..card import Card
from ..constants import CELSIUS_ZERO
from ..errors import InputError
from ..expr import (
    EXP_LIMIT,
    SOFTPLUS_EXACT,
    SOFTPLUS_LN1P,
    ZERO,
    Expr,
    diff,
    neg,
    soft_cap_parts,
    soft_ceil_parts,
    soft_floor_parts,
    symbols,
    walk,
)
from ..model import GROUND, AuxNode, Model, StepBound, node_symbol
from .base import Dialect, _render
from .format import format_number, wrap_spice

#: Operations numparam evaluates in a ``.param`` expression (parameter-only
#: sub-expressions are hoisted into ``.param`` lines, evaluated once per instance).
PARAM_OPS = frozenset({"num", "sym", "let", "add", "sub", "mul", "div", "neg", "ln", "sqrt"})

#: The smooth building blocks as ternaries, equal to the min/max forms of the other
#: renderings bit for bit.  ngspice evaluates only the taken branch of a ternary and
#: differentiates only the branches, so each call evaluates its argument once or twice
#: (the min/max forms evaluate it three or four times, and again in every derivative).
HELPERS = (
    (f".func rr_safe_exp(arg) {{((arg) < {EXP_LIMIT!r} ? exp(arg) : exp({EXP_LIMIT!r})"
     f"*(1 + ((arg) - {EXP_LIMIT!r})))}}"),
    # e^arg below −SOFTPLUS_LN1P, where ln(1 + e^arg) loses digits (rram.expr)
    ".func rr_softplus(arg) {((arg) > 0 ? (arg) + ln(1 + exp(-(arg))) : ((arg) < -"
    + repr(SOFTPLUS_LN1P) + " ? exp(arg) : ln(1 + exp(arg))))}",
    ".func rr_pos_sq(arg) {((arg) > 0 ? (arg)*(arg) : 0)}",
    ".func rr_clamp(u, lo, hi) {((u) < (lo) ? (lo) : ((u) > (hi) ? (hi) : (u)))}",
    (f".func rr_soft_floor(u, lo, w) {{((u) - (lo) > {SOFTPLUS_EXACT!r}*(w) ? (u) : "
     "(lo) + (w)*rr_softplus(((u) - (lo))/(w)))}"),
    (f".func rr_soft_ceil(u, hi, w) {{((hi) - (u) > {SOFTPLUS_EXACT!r}*(w) ? (u) : "
     "(hi) - (w)*rr_softplus(((hi) - (u))/(w)))}"),
    (f".func rr_soft_clip(u, lo, hi, w) {{((u) - (lo) > {SOFTPLUS_EXACT!r}*(w) ? "
     f"((hi) - (u) > {SOFTPLUS_EXACT!r}*(w) ? (u) : rr_soft_ceil(u, hi, w)) : "
     "rr_soft_ceil(rr_soft_floor(u, lo, w), hi, w))}"),
    (f".func rr_soft_cap(u, cap) {{((cap) - (u) > {SOFTPLUS_EXACT!r} ? (u) : "
     "(u) - rr_softplus((u) - (cap)))}"),
)


#: The simulator's symbols (rram.equations.scope.SIMULATOR_SYMBOLS) and environment
#: parameters in the subcircuit: the ambient is ngspice's ``temper`` (°C), live in a
#: B-source (``.temp``, ``.options temp``, ``.step temp``).
#: ``dc_hold`` is 1 − the node of a source of its own, pwl(0 0, 1 ps 1): a source's DC
#: value is its value at t = 0, in ``.op``, in every point of a ``.dc`` sweep and in a
#: transient's operating point; ngspice's ``time`` is not (a ``.dc`` sweep sets it to
#: the swept value).  The node is 0 in DC so that Newton's first guess (every node at 0)
#: already holds the states: the state rows then carry their anchor from the first
#: iteration on (with the node at 1 there, ngspice found them singular).  The ramp costs
#: a transient a dozen steps below 1 ps.
SIMULATOR = {"dc_hold": "(1 - v(dc_run))", "tamb": f"(temper + {CELSIUS_ZERO!r})"}
SIMULATOR_SOURCES = ("* the simulator: dc_run is 0 in DC analyses (.op, .dc, a transient's "
                     "operating point), 1 from 1 ps on",
                     "Vdc_run dc_run 0 pwl(0 0 1e-12 1)")
#: The probe variant (internal nodes as ports, rram.spice.models) evaluates the
#: equations at forced nodes: the rates of a time step, not a DC analysis's.
PROBE_SIMULATOR = {**SIMULATOR, "dc_hold": "0"}


def _spice_symbol(name: str) -> str:
    if name in SIMULATOR:
        return SIMULATOR[name]
    if name.startswith("n_"):
        node = name[2:]
        return "0" if node == GROUND else f"v({node})"
    return name


SPICE = Dialect("spice", number=format_number, symbol=_spice_symbol)
PROBE = Dialect("spice", number=format_number,
                symbol=lambda name: PROBE_SIMULATOR.get(name) or _spice_symbol(name))


@dataclass(frozen=True)
class LinearCharge:
    p: str
    n: str
    capacitance: Expr  # expression of parameters only


def linear_charge(charge: Expr, p: str, n: str) -> LinearCharge | None:
    """``charge`` as c·(V(p) − V(n)) with c independent of node voltages, or None if 0.

    Raises ValueError for a charge that is not of that form (a printer cannot silently
    change the equations)."""
    if charge is ZERO:
        return None
    c = diff(charge, node_symbol(p))
    touched = {s for s in symbols([charge]) if s.startswith("n_")}
    ok = not any(s.startswith("n_") for s in symbols([c]))
    ok = ok and touched <= {node_symbol(p), node_symbol(n)}
    if n != GROUND:
        ok = ok and diff(charge, node_symbol(n)) is neg(c)
    if not ok:
        raise ValueError(f"charge {charge!r} between {p} and {n} is not linear")
    return LinearCharge(p, n, c)


def _aux_ref(a: AuxNode) -> str:
    """The intermediate's value from its node: scale·(v + offset)."""
    ref = f"v({a.name})"
    if a.offset:
        ref = f"({ref} {'+' if a.offset > 0 else '-'} {format_number(abs(a.offset))})"
    return ref if a.scale == 1.0 else f"{format_number(a.scale)}*{ref}"


def _aux_current(a: AuxNode, expr: str) -> str:
    """The current into the node's 1-ohm resistor: value/scale − offset."""
    if a.scale != 1.0:
        expr = f"({expr})/{format_number(a.scale)}"
    if a.offset:
        expr += f" {'-' if a.offset > 0 else '+'} {format_number(abs(a.offset))}"
    return expr


def _soft_clip_parts(node: Expr) -> tuple[Expr, ...] | None:
    """(u, lo, hi, width) of a soft ceiling of a soft floor of one width, else None."""
    ceil = soft_ceil_parts(node)
    floor = None if ceil is None else soft_floor_parts(ceil[0])
    if floor is None or floor[2] is not ceil[2]:
        return None
    return floor[0], floor[1], ceil[1], ceil[2]


def _soft_bounds(roots: Sequence[Expr], names: dict[int, str], dialect: Dialect
                 ) -> dict[int, str]:
    """Soft floors and ceilings (:func:`~rram.expr.soft_floor`, :func:`~rram.expr.soft_ceil`)
    of ``roots`` as calls of their ``.func``: u itself wherever u is more than
    :data:`~rram.expr.SOFTPLUS_EXACT` widths inside the bound (the softplus is then its
    argument to the last bit, and the bound is u to rounding; widths are > 0).  There the
    bound's softplus, evaluated again in every derivative of every branch that uses the
    state, is skipped."""
    found = dict(names)
    for node in walk(roots):
        if id(node) in found:
            continue
        for func, parts in (("rr_soft_clip", _soft_clip_parts(node)),
                            ("rr_soft_floor", soft_floor_parts(node)),
                            ("rr_soft_ceil", soft_ceil_parts(node)),
                            ("rr_soft_cap", soft_cap_parts(node))):
            if parts is not None:
                args = ", ".join(_render(p, dialect, found, False)[0] for p in parts)
                found[id(node)] = f"{func}({args})"
                break
    return {k: v for k, v in found.items() if k not in names}


def _aux_lets(model: Model) -> dict[str, Expr]:
    wanted = {a.name for a in model.aux_nodes}
    found: dict[str, Expr] = {}
    for node in walk([b.flow for b in model.branches]):
        if node.op == "let" and node.name in wanted:
            found[node.name] = node
    missing = set(wanted) - set(found)
    if missing:
        raise ValueError(f"auxiliary intermediates not found in the model: {sorted(missing)}")
    return found


def _hoist(roots: Sequence[Expr], params: set[str], taken: set[str]) -> list[tuple[str, Expr]]:
    """Maximal parameter-only sub-expressions of ``roots`` (non-trivial), named."""
    order = walk(roots)
    only_params: dict[int, bool] = {}
    for node in order:
        if node.op == "num":
            only_params[id(node)] = True
        elif node.op == "sym":
            only_params[id(node)] = node.name in params
        else:
            only_params[id(node)] = node.op in PARAM_OPS and all(
                only_params[id(a)] for a in node.args)
    hoisted: dict[int, tuple[str, Expr]] = {}
    counter = 0

    def consider(node: Expr) -> None:
        nonlocal counter
        if node.op in ("num", "sym") or not only_params[id(node)] or id(node) in hoisted:
            return
        if node.op == "neg" and node.args[0].op in ("num", "sym"):
            return
        base = node.name if node.op == "let" else f"hp{counter + 1}"
        counter += 0 if node.op == "let" else 1
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        hoisted[id(node)] = (name, node)

    for node in order:
        if not only_params[id(node)]:
            for child in node.args:
                consider(child)
    for r in roots:
        consider(r)
    return list(hoisted.values())


#: ngspice's default ``chgtol`` (C): below it a capacitor's charge error is not relative.
NGSPICE_CHGTOL = 1e-14


def _step_sentinel(bound: StepBound, rate: str) -> list[str]:
    """The subcircuit's stand-in for the Verilog-A module's ``$bound_step`` (ngspice's
    B-sources cannot bound a step): the magnitude of the rate that drives the runaway
    (``bound.sentinel``) on a node of its own that nothing reads, with
    a capacitor whose charge exceeds ``chgtol`` only above ``bound.sentinel_floor``.
    ngspice's truncation-error control then keeps the rate's relative change per step
    near ``trtol·reltol``; in a runaway (rate ∝ e^(λt)) that bounds the step to a fraction
    of 1/λ, as the hint does.  Without it, a 1 kV/s SET from the HRS behind 10 kΩ stopped
    on "timestep too small" in 5 to 11 of 30 passes of an ngspice Monte Carlo loop."""
    node = f"step_{bound.node}"
    return [f"* step sentinel: the SET runaway's rate of {bound.node} per second on a node "
            "read by nothing; ngspice's truncation-error control on its capacitor bounds the "
            f"step where it exceeds {format_number(bound.sentinel_floor)}",
            f"B{node} 0 {node} I = abs({rate})",
            f"R{node} {node} 0 1 noisy=0",
            f"C{node} {node} 0 {format_number(NGSPICE_CHGTOL / bound.sentinel_floor)}"]


def _param_line(model: Model, card: Card | None) -> list[str]:
    values = card.values if card is not None else {p.name: p.default for p in model.parameters}
    return [f"{p.name}={format_number(values[p.name])}" for p in model.parameters
            if p.kind != "environment"]


def render_subckt(
    model: Model,
    card: Card | None = None,
    *,
    name: str | None = None,
    expose: Sequence[str] = (),
) -> str:
    """The ``.subckt`` text.  ``expose`` lists internal nodes to make ports (for static
    probing of the equations); parameter defaults come from ``card``."""
    name = model.name if name is None else name
    problem = reserved_names.problem(name)
    if problem:
        raise InputError(f"subcircuit name {name!r} {problem}")
    aux = _aux_lets(model)
    ports = [*model.ports, *expose]
    internal = [n.name for n in model.nodes if n.name not in expose]
    roots = [node.args[0] for node in aux.values()] + [b.flow for b in model.branches]
    charges = [(b, linear_charge(b.charge, b.p, b.n)) for b in model.branches]
    roots += [q.capacitance for _, q in charges if q is not None]
    taken = (set(model.parameter_names) | set(model.node_names) | set(aux) | set(SIMULATOR)
             | {"0"})
    # the environment is the simulator's, live: never folded into a .param
    hoisted = _hoist(roots, {p.name for p in model.parameters if p.kind != "environment"},
                     taken)
    names = {id(node): hname for hname, node in hoisted}
    spec = {a.name: a for a in model.aux_nodes}
    dialect = PROBE if expose else SPICE
    for aux_name, node in aux.items():
        names[id(node)] = _aux_ref(spec[aux_name])
        clip = _soft_clip_parts(node.args[0])
        if clip is not None:
            # A Newton iterate of the node may leave the clip's range, where the branches
            # were never meant to be evaluated: they read it clamped to that range, which
            # the node's converged value never reaches (the identity there).
            lo, hi = (_render(part, dialect, names, False)[0] for part in clip[1:3])
            names[id(node)] = f"rr_clamp({names[id(node)]}, {lo}, {hi})"
    bounds = _soft_bounds(roots, names, dialect)
    names.update(bounds)
    out = [f"* {name}: ports {' '.join(ports)}; internal nodes {' '.join(internal)}",
           f"* auxiliary nodes: {', '.join(f'{a.name} ({a.unit})' for a in model.aux_nodes)}",
           "* noise: none (ngspice's B-sources are noiseless; the Verilog-A module carries "
           + ", ".join(n.name for n in model.noise) + " for .noise)"]
    out += wrap_spice(f".subckt {name} {' '.join(ports)}", _param_line(model, card))
    out.append("* parameter-only sub-expressions, evaluated once per instance")
    for hname, node in hoisted:
        out.append(f".param {hname} = {{{_render(node, SPICE, {}, True)[0]}}}")
    out += HELPERS
    if not expose:
        out += SIMULATOR_SOURCES
    out.append("* auxiliary nodes: intermediates shared by several branches")
    for aux_name, node in aux.items():
        # a soft bound is its .func call, as everywhere else
        expr = _render(node.args[0], dialect, {k: v for k, v in names.items() if k != id(node)},
                       id(node.args[0]) not in bounds)[0]
        # A current into a 1-ohm resistor, not a voltage source: the node's row keeps a
        # unit diagonal whatever the expression's sensitivities do (the abrupt SET).
        out.append(f"B{aux_name} 0 {aux_name} I = {_aux_current(spec[aux_name], expr)}")
        # noiseless: an auxiliary node is arithmetic, not a resistor of the cell
        out.append(f"R{aux_name} {aux_name} 0 1 noisy=0")
    if not expose:
        for bound in model.step_bounds:
            out += _step_sentinel(bound, _render(bound.sentinel, dialect, names, True)[0])
    out.append("* branches: flow p -> n (B-source) and linear charge (capacitor)")
    for b, q in charges:
        n = "0" if b.n == GROUND else b.n
        if b.flow is not ZERO:
            expr = _render(b.flow, dialect, names, True)[0]
            out.append(f"B{b.name} {b.p} {n} I = {expr}")
        if q is not None:
            cap = q.capacitance
            value = (format_number(cap.value) if cap.op == "num"
                     else "{" + _render(cap, dialect, names, False)[0] + "}")
            out.append(f"C{b.name} {b.p} {n} {value}")
    out.append(f".ends {name}")
    return "\n".join(out) + "\n"
