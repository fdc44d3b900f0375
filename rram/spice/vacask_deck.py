"""Testbenches in VACASK's netlist language: the circuits of :mod:`rram.circuits` around
OSDI cells, for the batch runner (:func:`rram.spice.runner.simulate_vacask`).

The same :class:`~rram.spice.testbench.Testbench` values the ngspice decks are rendered
from, spelt for VACASK: its ``vsource`` for the sources, its ``resistor`` and
``capacitor`` modules, the cell's compiled Verilog-A, and the elements VACASK has no
built-in for (the compliance's behavioural source, the level-1 transistor) as Verilog-A
modules printed from the same IR expressions the Python engine solves
(:func:`element_module`), so all three hosts run one circuit.  Names follow VACASK: a
node's vector is its name, an instance's internal node ``<instance>:<node>``, a source's
current ``<source>:flow(br)`` (SPICE sign).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path

from ..circuits import device_netlist
from ..dialects import OSDI
from ..expr import Expr
from ..netlist import (
    Behavioural,
    Capacitor,
    Cell,
    Nmos,
    Resistor,
    VSource,
    ambient_celsius,
    spice_name,
)
from ..printers.base import _render
from ..printers.veriloga_printer import MACROS, VERILOGA
from . import models
from .testbench import CIRCUIT_DEFAULTS, DEFAULT_OPTIONS, Testbench, check_batch
from .vacask import number

#: VACASK's transient integration, as the ngspice decks' (gear), with SPICE's
#: truncation-error rule (``tran_spicelte``: a DC loop's figures within 1.2e-4 of
#: ngspice's at a 2 µs step cap, against 4.7e-4 with VACASK's own rule); the tolerances
#: are the bench's (:data:`SHARED_OPTIONS`; ``reltol`` 1e-4 unless it sets its own).
METHOD = 'tran_method="gear2" tran_spicelte=1'
#: The ngspice options of a bench VACASK has under the same name (the rest, ngspice's own
#: solver and integration settings such as ``method``, ``trtol`` or ``klu``, have no
#: meaning there and are not passed on).
SHARED_OPTIONS = ("reltol", "abstol", "vntol", "chgtol")


#: Nets whose voltage an element's IR divides by, with a floor (V): VACASK starts its
#: operating point from 0 V on every node, where the compliance's ``icc·tanh(g·v/icc)``
#: is 0/0 (ngspice's B-source survives it).  A compliance is at least 1 nA
#: (:data:`rram.engine.stimulus.COMPLIANCE_RANGE`): the floor moves it by < 1e-12.
DIVISORS = {"icc": 1e-15}


def element_module(name: str, ports: Sequence[str], current: Expr,
                   parameters: Sequence[str] = ()) -> str:
    """The Verilog-A of a two-terminal current ``ports[0]`` → ``ports[1]`` given as an IR
    expression of its ports' voltages (``n_<port>``) and of ``parameters``."""
    expr = _render(current, VERILOGA, {}, True)[0]
    plist = ", ".join(ports)
    return "\n".join([
        f"// {name}: printed by rram.spice.vacask_deck from the IR", "",
        '`include "disciplines.vams"', *MACROS, "",
        f"module {name}({plist});",
        f"    inout {plist};", f"    electrical {plist};",
        *(f'    (* type="instance" *) parameter real {p} = 0.0;' for p in parameters),
        "    analog begin",
        f"        I({ports[0]}, {ports[1]}) <+ {expr};",
        "    end", "endmodule", ""])


@functools.lru_cache(maxsize=64)
def _compiled(text: str, name: str) -> Path:
    """The compiled module of ``text`` (once per process: every run renders its netlist
    afresh, and a Monte Carlo runs thousands)."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return models.compile_osdi(models.cached_text(text, f"_{name}_{digest}.va"))


def _terminals(e: Behavioural | Nmos) -> tuple[str, str]:
    return (e.a, e.b) if isinstance(e, Behavioural) else (e.d, e.s)


def _current(e: Behavioural | Nmos) -> Expr:
    return e.current if isinstance(e, Behavioural) else e.current()


def _current_module(e: Behavioural | Nmos) -> tuple[Path, str, list[str], list[str]]:
    """(module file, module name, its nets in port order, its parameters) of an element
    VACASK has no built-in for, from its IR current in the circuit's symbols (the engine's
    form, :func:`rram.circuits.device_netlist` without values): the circuit parameters
    are the module's instance parameters, so one module serves every device."""
    from ..expr import sqrt, substitute, sym, symbols

    current = _current(e)
    nets = list(dict.fromkeys([*_terminals(e), *sorted(
        s[2:] for s in symbols([current]) if s.startswith("n_"))]))
    ports = ["p", "n", *(f"c{k}" for k in range(len(nets) - 2))]
    voltage = {net: sym(f"n_{port}") for net, port in zip(nets, ports, strict=True)}
    for net, floor in DIVISORS.items():
        if net in voltage:
            voltage[net] = sqrt(voltage[net] * voltage[net] + floor * floor)
    (current,) = substitute([current], {f"n_{net}": v for net, v in voltage.items()})
    parameters = sorted(s for s in symbols([current]) if not s.startswith("n_"))
    digest = hashlib.sha256(repr((current, parameters)).encode()).hexdigest()[:8]
    name = f"rram_{spice_name(e)[0]}_{digest}"
    return (_compiled(element_module(name, ports, current, parameters), name), name, nets,
            parameters)


def _vector(ngspice: str, cell: str) -> str:
    """VACASK's name of an ngspice vector of a bench (:meth:`Testbench.vectors`): a node
    voltage ``v(n)`` is ``n``, a source current ``i(v)`` is ``v:flow(br)``, the cell's
    internal node ``v(ncell#node)`` is ``<cell>:node``."""
    if ngspice in ("time", "0"):
        return ngspice
    inner = ngspice[2:-1]
    if ngspice.startswith("i("):
        return f"{inner}:flow(br)"
    sep = OSDI.separator
    return f"{cell}:{inner.split(sep, 1)[1]}" if sep in inner else inner


def _cell(cell: Cell, name: str, module: str) -> list[str]:
    params = [p for p in cell.card.model.parameters if p.kind != "environment"]
    model = " ".join(f"{p.name}={number(cell.card[p.name])}" for p in params
                     if p.kind != "instance")
    values = " ".join(f"{p.name}={number(cell.card[p.name])}" for p in params
                      if p.kind == "instance")
    return [f"model m_{name} {module} {model}",
            f"{name} ({cell.te} {cell.be}) m_{name} {values}"]


def _source(v: VSource) -> str:
    head = f"{spice_name(v)} ({v.p} {v.n}) vsrc"
    if v.pwl is None:
        return f"{head} dc={number(v.dc)}"
    wave = ", ".join(f"{number(t)}, {number(x)}" for t, x in v.pwl)
    return f'{head} type="pwl" wave=[{wave}]'


def render(benches: Sequence[Testbench], osdi: Path) -> tuple[str, list[dict[str, str]]]:
    """The VACASK netlist of ``benches`` (one stimulus, as :func:`render_batch`; cell
    ``i`` on nets ``te_i``, ``mid_i`` when there are several) with the cell's compiled
    module ``osdi``, and each bench's vectors (quantity → VACASK name) in the order of
    ``benches``."""
    first = check_batch(benches)
    module = first.model.name or first.card.model.name
    loads = [f'load "{Path(osdi).resolve()}"', 'load "resistor.osdi"',
             'load "capacitor.osdi"']
    body: list[str] = [_source(v) for v in first.sources()]
    vectors, cards, extra = [], [], {}
    for i, tb in enumerate(benches):
        suffix = f"_{i}" if len(benches) > 1 else ""
        values = {**CIRCUIT_DEFAULTS, **tb.circuit_params}
        symbolic = {spice_name(e): e for e in device_netlist(
            tb.circuit, None, tb.card, suffix, tb.instance).elements}
        for e in tb._netlist(suffix).elements:
            inst = spice_name(e)
            if isinstance(e, Cell):
                body += _cell(e, inst, module)
                cards.append(e.card)
                cell = inst
            elif isinstance(e, Resistor):
                body.append(f"{inst} ({e.a} {e.b}) res r={number(e.ohms)}")
            elif isinstance(e, Capacitor):
                body.append(f"{inst} ({e.a} {e.b}) cap c={number(e.farads)}")
            elif isinstance(e, VSource):
                body.append(_source(e))
            elif isinstance(e, Behavioural | Nmos):
                path, name, nets, parameters = _current_module(symbolic[inst])
                extra[str(path)] = name
                given = " ".join(f"{p}={number(values[p])}" for p in parameters)
                body.append(f"{inst} ({' '.join(nets)}) {name} {given}".rstrip())
            else:
                raise TypeError(f"no VACASK spelling of {type(e).__name__}")
        vectors.append({k: _vector(v, cell) for k, v in tb.vectors(suffix).items()})
    loads += [f'load "{p}"' for p in extra]
    models_ = ["model vsrc vsource", "model res resistor", "model cap capacitor",
               *(f"model {n} {n}" for n in extra.values())]
    celsius = ambient_celsius(cards)
    stop, step = float(first.stimulus.times[-1]), float(first.step_max)
    given = {**DEFAULT_OPTIONS, **{str(k).lower(): v for k, v in first.options.items()}}
    shared = " ".join(f"{k}={number(float(given[k]))}" for k in SHARED_OPTIONS if k in given)
    control = [f"options {METHOD} {shared}"
               + ("" if celsius is None else f" temp={number(celsius)}"),
               "save full", f"analysis tr tran step={number(step)} stop={number(stop)} "
               f"maxstep={number(step)}"]
    text = "\n".join([f"{first.title} (rram.spice.vacask_deck)", "ground 0", *loads, "",
                      *models_, "", *body, "", "control", *(f"  {c}" for c in control),
                      "endc", ""])
    return text, vectors


__all__ = ["DIVISORS", "METHOD", "SHARED_OPTIONS", "element_module", "render"]
