"""What a physics block is, and the scope the blocks of one model build in.

A :class:`Block` declares its parameters (unit, range, role, documentation) and a
``build`` function.  :func:`rram.model.assemble` runs the blocks of a model in order in
one :class:`Scope`: each block reads the intermediates earlier blocks named
(``scope["x"]``), names its own (:meth:`Scope.provide`), and adds its terms to the
model's *channels*, the sums the device's branches are made of (:data:`CHANNELS`).  A
block replaced by another that fills the same channels changes the model and nothing
else: every rendering and engine is generated from the assembled model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..expr import ZERO, Expr, add, let, sym
from ..params import Parameter

#: The sums a model's branches are built from (what a block may add to):
#:
#: * ``i_leak``, ``i_cf``, ``i_gap``: currents (A, device frame) of the leakage path
#:   across the cell, the CF body (to the tip) and the gap (tip to bottom electrode);
#: * ``dx_dt``, ``dw_dt``: rates of the gap and of the CF width (m/s);
#: * ``du_dt``, ``dwear_dt``: rates of the optional blocks' states, the relaxing disorder
#:   (m/s) and the wear (1/s); a model has their nodes only when a block fills them;
#: * ``heat``: the temperature rise the Joule heat sustains (K): the thermal node obeys
#:   τ·dΔT/dt = heat − ΔT.
CHANNELS = ("i_leak", "i_cf", "i_gap", "dx_dt", "dw_dt", "du_dt", "dwear_dt", "heat")


#: What the simulator provides to the equations: a symbol each printer spells in its
#: target's terms (rram/printers), never a parameter of the card.
#:
#: * ``dc_hold``: 1 in a DC analysis (``.op``, ``.dc``, a transient's initial operating
#:   point), 0 while time steps.  The state equations multiply their rates by
#:   ``1 − dc_hold``, so a DC solution keeps the state an instance was given (its x0,
#:   w0) instead of the state its bias would drive it to.  Verilog-A:
#:   ``analysis("static") || $abstime <= 0``; ngspice B-source: ``time <= 0``; the Python
#:   engine's DC solves hold the states themselves (0).
SIMULATOR_SYMBOLS = {
    "dc_hold": "1 in a DC analysis (the states are held), 0 while time steps",
}
DC_HOLD = sym("dc_hold")


def node_symbol(node: str) -> str:
    """IR symbol of a node voltage: ``n_<node>``."""
    return f"n_{node}"


def V(node: str) -> Expr:
    """The voltage of ``node`` (its IR symbol)."""
    return sym(node_symbol(node))


@dataclass(frozen=True)
class AuxNode:
    """An intermediate (``let`` name) a SPICE rendering carries on a node of its own.

    The node holds ``value/scale − offset``.  SPICE converges a node voltage to
    reltol·|v| + vntol: the scale makes vntol (1 µV) a small amount of the quantity, and
    the offset keeps a node that must converge relatively away from 0 V.  A log-rate
    crosses 0 (1 m/s) in the SET runaway, where Newton cannot meet vntol while the rates
    run away; it stays below +100 for any state a simulator accepts, so an offset of 100
    keeps its node negative, at a tolerance of ~1e-2 or more."""

    name: str
    unit: str
    scale: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Output:
    """An operating-point output (Verilog-A ``OPP``-style), for monitoring."""

    name: str
    expr: Expr
    unit: str
    desc: str


@dataclass(frozen=True)
class NoiseSource:
    """A noise current in parallel with a branch of the device (``br_cf``, ...).

    Its one-sided spectral density is ``power / f**exponent`` (A²/Hz): white where
    ``exponent`` is 0 (Verilog-A ``white_noise``), flicker otherwise (``flicker_noise``,
    ``power`` is then the density at 1 Hz).  ``power`` is an expression of the operating
    point: noise is small-signal, it never enters a DC or transient solution."""

    name: str
    branch: str
    power: Expr
    exponent: float
    desc: str


@dataclass(frozen=True)
class Constraint:
    """A rule between parameters that no single range states (``x0 <= l0``).

    ``violated`` (a module-level function) maps parameter values (floats, or arrays of
    one value per device) to True where the rule is broken; ``message`` is a
    :meth:`str.format` template of the values of one card that breaks it."""

    violated: Callable[[Mapping], object]
    message: str

    def text(self, values: Mapping[str, float]) -> str:
        return self.message.format(**values)


@dataclass(frozen=True)
class Block:
    """One physics block: ``parameters`` it declares, ``build(scope)`` that names its
    intermediates and adds its terms to the channels, ``constraints`` among its
    parameters.  ``name`` identifies it in a model (:func:`rram.model.replace_block`)."""

    name: str
    title: str
    parameters: tuple[Parameter, ...]
    build: Callable[[Scope], None]
    constraints: tuple[Constraint, ...] = ()


class Symbols:
    """Attribute access to a model's parameters: ``P.l0`` is the parameter ``l0``.

    Only the parameters of the model's blocks exist: a typo is an ``AttributeError``
    when the equations are built, never a new free parameter."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = frozenset(names)

    def __getattr__(self, name: str) -> Expr:
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"{name!r} is not a parameter of the model (declared by "
                                 "none of its blocks, rram/equations/)")
        return sym(name)


class Scope:
    """The intermediates, channel terms, outputs and auxiliary nodes of one model's
    blocks, in the order the blocks gave them."""

    def __init__(self, parameter_names: tuple[str, ...]) -> None:
        self.P = Symbols(parameter_names)
        self.block = ""
        self._named: dict[str, Expr] = {}
        self._terms: dict[str, list[Expr]] = {c: [] for c in CHANNELS}
        self.outputs: list[Output] = []
        self.aux_nodes: list[AuxNode] = []
        self.noise_sources: list[NoiseSource] = []

    def __getitem__(self, name: str) -> Expr:
        try:
            return self._named[name]
        except KeyError:
            raise KeyError(f"block {self.block!r} needs {name!r}, which no earlier block of "
                           f"the model provides (provided: {', '.join(self._named)})") from None

    def __contains__(self, name: str) -> bool:
        return name in self._named

    def provide(self, name: str, value: Expr, *, aux: AuxNode | None = None) -> Expr:
        """Name ``value`` (a ``let``); ``aux``: carry it on a SPICE auxiliary node."""
        if name in self._named:
            raise ValueError(f"block {self.block!r}: {name!r} is already provided")
        named = let(name, value)
        self._named[name] = named
        if aux is not None:
            self.aux_nodes.append(aux)
        return named

    def add(self, channel: str, term: Expr) -> None:
        if channel not in self._terms:
            raise ValueError(f"block {self.block!r}: no channel {channel!r} (valid: "
                             + ", ".join(CHANNELS) + ")")
        self._terms[channel].append(term)

    def filled(self, channel: str) -> bool:
        """Whether a block added a term to ``channel`` (an optional state's)."""
        return bool(self._terms[channel])

    def total(self, channel: str) -> Expr:
        """The sum of a channel's terms, in the order the blocks added them."""
        out: Expr = ZERO
        for term in self._terms[channel]:
            out = add(out, term)
        return out

    def output(self, name: str, expr: Expr, unit: str, desc: str) -> None:
        self.outputs.append(Output(name, expr, unit, desc))

    def noise(self, source: NoiseSource) -> None:
        """Add a noise current across one of the device's branches (rram/model.py)."""
        if any(n.name == source.name for n in self.noise_sources):
            raise ValueError(f"block {self.block!r}: noise source {source.name!r} is "
                             "already declared")
        self.noise_sources.append(source)


__all__ = ["CHANNELS", "DC_HOLD", "SIMULATOR_SYMBOLS", "AuxNode", "Block", "Constraint",
           "NoiseSource", "Output", "Scope", "Symbols", "V", "node_symbol"]
