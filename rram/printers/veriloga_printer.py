r"""Render the model to a CMC-style Verilog-A module.

Sections in CMC order: header, includes and the smooth-function macros, ports and
internal nodes, named branches, parameters (each with a range, ``units`` and ``desc``,
grouped by physics), operating-point outputs, and one ``analog`` block that computes the
named intermediates as ``real`` variables and contributes flows and ``ddt`` of charges.
No hidden state, no ``idt``, no events, no random functions.  The one timing statement
is the model's step hint through the gap's runaways at SET and RESET
(:mod:`rram.step_hint`): ``$bound_step`` of a fraction of a runaway's e-folding time,
which changes no equation and binds only inside a runaway; a compiler without
``$bound_step`` (upstream OpenVAF 23.5 crashes on it) builds the module with
``-D RRAM_NO_BOUND_STEP``.  The gap voltage is Newton-limited in the SET direction
(``$limit`` with SPICE's ``pnjlim``: :class:`rram.step_hint.NewtonLimit`), which moves
iterates only, never a converged solution.

Each state node carries its rate (off in a DC analysis: ``moving = 1 − dc_hold``), the
weak anchor ``dc_hold·state/thold`` (DC only) and ``ddt`` of the state (rram/model.py); names a user
chooses are checked against the reserved words of every target (:mod:`rram.names`).
Selected lines of the output (the default card)::

    >>> from rram.model import MODEL
    >>> lines = render_module(MODEL).splitlines()
    >>> keep = ("module", "    electrical dgap", "    parameter real ea ", "    analog begin",
    ...         "        I(br_gap)", "        I(br_x)", "endmodule")
    >>> print("\n".join(line for line in lines if line.startswith(keep)))
    module rram(te, be);
        electrical dgap;  // state: change of the gap since x0, x - x0 [nm]
        parameter real ea = 1.65 from [0.0999999999999:4.000000000004];
        analog begin
            I(br_gap) <+ polarity*i_gap;
            I(br_x) <+ -(moving*gap_rate) + dc_hold*V(dgap)/thold + ddt(V(dgap));
    endmodule
    >>> import textwrap
    >>> print(textwrap.fill(next(line for line in lines if "$bound_step" in line).strip(), 88))
    $bound_step(min(0.3/max(ddx(gap_rate, V(dgap)), 1e-12), 0.05/max(ddx(gap_rate, V(dgap))
    - ddx(gap_rate, V(tip))*ddx(i_gap, V(dgap))*ddx(i_gap, V(tip))/(ddx(i_gap,
    V(tip))*ddx(i_gap, V(tip)) + 1e-300), 1e-12)));
    >>> render_module(MODEL, name="analog")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rram.errors.InputError: module name 'analog' is reserved (a Verilog-A/Verilog-AMS ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise

from .. import names as reserved_names
from ..card import Card
from ..constants import KB_EV, P_K, P_Q
from ..errors import InputError
from ..expr import EXP_LIMIT, SOFTPLUS_EXACT, SOFTPLUS_LN1P, ZERO, Expr, replace, sym, walk
from ..model import GROUND, Model
from ..params import Parameter
from ..step_hint import NewtonLimit
from .base import Dialect, Schedule, _render
from .format import format_number

MACROS = (
    f"`define SAFE_EXP(x) (exp(min((x), {EXP_LIMIT!r}))*(1.0 + max((x) - {EXP_LIMIT!r}, 0.0)))",
    # x beyond +SOFTPLUS_EXACT (the same value to the last bit), e^x below −SOFTPLUS_LN1P
    # (where ln(1 + e^x) loses digits without log1p: rram.expr)
    (f"`define SOFTPLUS(x) ((x) > {SOFTPLUS_EXACT!r} ? (x) : ((x) < -{SOFTPLUS_LN1P!r} ? exp(x) "
     ": max((x), 0.0) + ln(1.0 + exp(-abs(x)))))"),
    "`define POS_SQ(x) (max((x), 0.0)*max((x), 0.0))",
)

#: Numbers the rendering spells by their ``constants.vams`` names (the CMC rule).
CONSTANT_NAMES = {format_number(KB_EV): "(`P_K/`P_Q)", format_number(P_K): "`P_K",
                  format_number(P_Q): "`P_Q"}


def _va_number(v: float) -> str:
    text = format_number(v)
    return CONSTANT_NAMES.get(text, text)


#: The simulator's symbols (rram.equations.scope.SIMULATOR_SYMBOLS), each a ``real``
#: set first in the analog block.  A transient's initial operating point is not
#: ``analysis("static")`` in ngspice's OSDI, but it is at ``$abstime`` 0 (the one use of
#: ``$abstime``: it steps nothing).
SIMULATOR = {
    "dc_hold": '(analysis("static") || $abstime <= 0.0) ? 1.0 : 0.0',
    "tamb": "$temperature",
}
#: The probe variant (internal nodes as ports, rram.spice.models) evaluates the
#: equations at forced nodes: the rates of a time step, not a DC analysis's.
PROBE_SIMULATOR = {**SIMULATOR, "dc_hold": "0.0"}


def _va_symbol(name: str) -> str:
    if name.startswith("n_"):
        node = name[2:]
        return "0.0" if node == GROUND else f"V({node})"
    return name


VERILOGA = Dialect("veriloga", number=_va_number, symbol=_va_symbol)


#: A closed end of a range is widened by this share of its value: ngspice reads a
#: decimal such as -0.7 as 7·10^-1 = -0.7000000000000001, one ulp beyond the end the
#: compiler holds, and its OSDI setup refused the range's own end ("Parameter dea is out
#: of bounds"), a value the card and the Python engine accept.
RANGE_MARGIN = 1e-12


def _widened(bound: float, closed: bool, outward: float) -> str:
    return format_number(bound + outward * RANGE_MARGIN * abs(bound) if closed else bound)


def _range(p: Parameter) -> str:
    if p.choices:  # the range of the choices, less the open intervals between them
        c = sorted(p.choices)
        return " ".join([f"from [{format_number(c[0])}:{format_number(c[-1])}]",
                         *(f"exclude ({format_number(a)}:{format_number(b)})"
                           for a, b in pairwise(c))])
    lo = "(" if p.lower_open else "["
    hi = ")" if p.upper_open else "]"
    return (f"from {lo}{_widened(p.lower, not p.lower_open, -1.0)}:"
            f"{_widened(p.upper, not p.upper_open, 1.0)}{hi}")


def _parameters(model: Model, card: Card | None) -> list[str]:
    values = card.values if card is not None else {p.name: p.default for p in model.parameters}
    out = []
    for group, title in model.groups:
        members = [p for p in model.parameters
                   if p.group == group and p.kind != "environment"]
        if not members:
            continue
        out.append(f"    // --- {title}")
        for p in members:
            kind = ' type="instance",' if p.kind == "instance" else ""
            desc = p.desc.replace('"', "'")
            out.append(f'    (*{kind} units="{p.unit}", desc="{desc}" *)')
            out.append(f"    parameter real {p.name} = {format_number(values[p.name])} "
                       f"{_range(p)};")
    return out


def render_module(
    model: Model,
    card: Card | None = None,
    *,
    name: str | None = None,
    expose: Sequence[str] = (),
) -> str:
    """The module text.  ``expose`` lists internal nodes to make ports (static probing)."""
    name = model.name if name is None else name
    problem = reserved_names.problem(name)
    if problem:
        raise InputError(f"module name {name!r} {problem}")
    ports = [*model.ports, *expose]
    internal = [n for n in model.nodes if n.name not in expose]
    roots: list[Expr] = [b.flow for b in model.branches] + [b.charge for b in model.branches]
    roots += [o.expr for o in model.outputs]
    roots += [e for b in model.step_bounds for e in (b.rate, b.current)]
    roots += [n.power for n in model.noise]
    limits = _limit_variables(model, roots)
    rewritten = replace(roots, {lim.voltage: sym(var) for var, lim in limits.items()})
    as_limited = {id(r): w for r, w in zip(roots, rewritten, strict=True)}
    reserved = [p.name for p in model.parameters] + [o.name for o in model.outputs]
    sched = Schedule(rewritten, reserved=[*reserved, *limits, *(f"{v}_critical" for v in limits)],
                     prefix="t")

    def render(node: Expr, top: bool = False) -> str:
        return sched.render(as_limited.get(id(node), node), VERILOGA, top=top)

    variables = [a.name for a in sched.assignments]
    out = [
        f"// {name}: filamentary RRAM compact model, ports {', '.join(ports)}.",
        "// States on internal nodes: gap x (nm), CF width w (nm), temperature rise dT (K).",
        "",
        '`include "constants.vams"',
        '`include "disciplines.vams"',
        "",
        "// Smooth building blocks (C1; identical in the numpy and ngspice renderings).",
        *MACROS,
        "",
        f"module {name}({', '.join(ports)});",
        "",
        "    // --- Ports and internal nodes",
        f"    inout {', '.join(ports)};",
        f"    electrical {', '.join(ports)};",
    ]
    for node in internal:
        out.append(f"    electrical {node.name};  // {node.desc} [{node.unit}]")
    out += ["", "    // --- Named branches"]
    for b in model.branches:
        pair = b.p if b.n == GROUND else f"{b.p}, {b.n}"
        out.append(f"    branch ({pair}) {b.name};  // {b.desc}")
    out += ["", *_parameters(model, card), "", "    // --- Operating-point outputs"]
    for o in model.outputs:
        out.append(f'    (* desc="{o.desc}", units="{o.unit}" *) real {o.name};')
    out += ["", "    // --- From the simulator: DC analyses hold the states; the ambient (K)",
            f"    real {', '.join(SIMULATOR)};"]
    out += _limit_declarations(limits)
    out += ["", "    // --- Intermediates"]
    for i in range(0, len(variables), 8):
        out.append("    real " + ", ".join(variables[i:i + 8]) + ";")
    out += ["", "    analog begin"]
    out += [f"        {n} = {text};"
            for n, text in (PROBE_SIMULATOR if expose else SIMULATOR).items()]
    out += _limit_statements(limits, render)
    for a in sched.assignments:
        out.append(f"        {a.name} = {sched.render(a.node, VERILOGA, top=True)};")
    for o in model.outputs:
        out.append(f"        {o.name} = {render(o.expr)};")
    for b in model.branches:
        terms = []
        if b.flow is not ZERO:
            terms.append(render(b.flow))
        if b.charge is not ZERO:
            terms.append(f"ddt({render(b.charge)})")
        if terms:
            out.append(f"        I({b.name}) <+ {' + '.join(terms)};")
    out += _noise(model, render)
    out += _step_bounds(model, render)
    out += ["    end", "", "endmodule", ""]
    return "\n".join(out)


def _noise(model: Model, render: Callable[[Expr], str]) -> list[str]:
    """The noise currents (small-signal only: ``.noise``, never a DC or transient
    solution): ``white_noise`` or ``flicker_noise`` on their branches."""
    out = []
    for n in model.noise:
        power = render(n.power)
        call = (f'white_noise({power}, "{n.name}")' if n.exponent == 0 else
                f'flicker_noise({power}, {format_number(n.exponent)}, "{n.name}")')
        out += [f"        // {n.desc}", f"        I({n.branch}) <+ {call};"]
    return out


#: Preprocessor macro that leaves the step hints out (compilers without ``$bound_step``).
NO_BOUND_STEP = "RRAM_NO_BOUND_STEP"


def _step_bounds(model: Model, render: Callable[[Expr], str]) -> list[str]:
    """``$bound_step(min(fraction/max(λ_V, floor), current_fraction/max(λ_I, floor)))``
    per hint, from ``ddx``: ``λ_V = ∂rate/∂V(node)`` and ``λ_I = λ_V − ∂rate/∂V(drive) ·
    (∂current/∂V(node))/(∂current/∂V(drive))``, the growth rates at a fixed drive
    potential and at a fixed current (:mod:`rram.step_hint`); they feed no contribution."""
    if not model.step_bounds:
        return []
    out = [f"`ifndef {NO_BOUND_STEP}"]
    for b in model.step_bounds:
        rate, current = render(b.rate), render(b.current)
        floor = format_number(b.floor)
        at_fixed_drive = f"ddx({rate}, V({b.node}))"
        # 1/g as g/(g·g + 1e-300): the conductance g to the drive node takes the sign of
        # the device's polarity, and an underflowed one must not divide by zero
        g = f"ddx({current}, V({b.drive}))"
        at_fixed_current = (f"{at_fixed_drive} - ddx({rate}, V({b.drive}))*ddx({current}, "
                            f"V({b.node}))*{g}/({g}*{g} + 1e-300)")
        out += [f"        // {b.desc}",
                f"        $bound_step(min({format_number(b.fraction)}/max({at_fixed_drive}, "
                f"{floor}), {format_number(b.current_fraction)}/max({at_fixed_current}, "
                f"{floor})));"]
    return [*out, "`endif"]


def _limit_variables(model: Model, roots: Sequence[Expr]) -> dict[str, NewtonLimit]:
    """The limited branch voltages' variables (``v_<p>_<n>``); each must occur in the
    equations, or the hint would silently limit nothing."""
    present = {id(n) for n in walk(roots)}
    out = {}
    for lim in model.newton_limits:
        if id(lim.voltage) not in present:
            raise ValueError(f"Newton limit on V({lim.p}, {lim.n}): the equations never use "
                             "that branch voltage")
        out[f"v_{lim.p}_{lim.n}"] = lim
    return out


def _limit_declarations(limits: Mapping[str, NewtonLimit]) -> list[str]:
    if not limits:
        return []
    descs = ", ".join(lim.desc for lim in limits.values())
    return ["", f"    // --- Newton-limited branch voltages ({descs}; rram/step_hint.py)",
            f"    real {', '.join(f'{v}, {v}_critical' for v in limits)};"]


def _limit_statements(limits: Mapping[str, NewtonLimit],
                      render: Callable[[Expr], str]) -> list[str]:
    """SPICE's junction limiting (the built-in ``pnjlim``: the simulator iterates on until
    no iterate is limited) in the branch's forward direction, which ``direction`` picks;
    the critical voltage spelt in full (it reads the states, whose variables the
    schedule assigns after this statement)."""
    out = []
    for var, lim in limits.items():
        out.append(f"        {var}_critical = {_render(lim.critical, VERILOGA, {}, True)[0]};")
        args = f'"pnjlim", {render(lim.scale)}, {var}_critical)'
        out += [f"        if ({render(lim.direction)} > 0.0)",
                f"            {var} = $limit(V({lim.p}, {lim.n}), {args};",
                "        else",
                f"            {var} = -$limit(V({lim.n}, {lim.p}), {args};"]
    return out


def uses_only_va_functions(model: Model) -> bool:
    """Every operation in the model has a Verilog-A spelling (the printer would raise)."""
    from ..expr import FUNCTIONS

    roots = [b.flow for b in model.branches] + [b.charge for b in model.branches]
    return all(n.op in ("num", "sym", "let", "add", "sub", "mul", "div", "neg")
               or FUNCTIONS[n.op].veriloga is not None for n in walk(roots))


__all__ = ["NO_BOUND_STEP", "SIMULATOR", "_render", "render_module", "uses_only_va_functions"]
