"""Standalone ngspice decks for the model: DC loops, 1T1R cells, pulses, stress.

A :class:`Testbench` is data (circuit kind, stimulus, card, circuit parameters, model
reference); :meth:`Testbench.render` writes the deck.  Every value and name passes
:mod:`rram.spice.validate` first, so no text from a card, an option or a path can inject
a ``.control`` block.  The same stimulus objects drive the Python engine, so both see the
same waveform.

Circuits: the netlists of :func:`rram.circuits.device_netlist` (the ones the Python
engine compiles), driven by ``Vbl`` (PWL), ``Vgate`` (1T1R) and ``Vicc`` (the compliance
as a PWL voltage)::

    series    Vbl bl 0 PWL(...)  -> series element bl-mid (resistor or compliance)
              -> Vsense mid te 0 -> cell te-0,  Cd on mid
    1t1r      Vbl bl 0 PWL(...)  -> Vsense bl te 0 -> cell te-mid -> NMOS (level 1)
              mid-gate-0, Cd on mid
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..card import Card, default_card
from ..circuits import CIRCUIT_PARAMETERS, device_netlist
from ..dialects import KINDS as KINDS_OF_MODEL
from ..dialects import ONE_THREAD, Dialect, dialect
from ..engine.stimulus import Stimulus
from ..errors import InputError
from ..events import OPTIONAL_END_COLUMNS
from ..model import node_symbol
from ..netlist import (
    Cell,
    CellModel,
    Netlist,
    VSource,
    element_lines,
    temperature_line,
    wrap_line,
)
from . import validate

KINDS = ("resistor", "compliance", "1t1r")
MODELS = KINDS_OF_MODEL
INTEGRATION_METHODS = validate.NGSPICE_OPTIONS["method"].choices
#: Gear (BDF2) is L-stable: trapezoidal integration rings on the ~10 ps thermal node
#: and on the stiff SET/RESET state equations when steps are much longer than those.
#: reltol = 1e-4: at ngspice's 1e-3 the RESET onset of a 1T1R cell can move by tens of
#: per cent (the runaway amplifies the state error); at 1e-4 it moves by a few per cent
#: and the resistances by < 0.5 % (tests/test_spice_transient.py uses tighter ones).
DEFAULT_OPTIONS: dict[str, float | str] = {"method": "gear", "reltol": 1e-4}
CIRCUIT_DEFAULTS = {p.name: p.default for p in CIRCUIT_PARAMETERS}


def step_cap(pieces: Sequence[np.ndarray]) -> float:
    """The default step cap of a deck running the breakpoint times ``pieces`` one after
    the other: 1/200 of their total duration, at most 1/10 of the longest segment."""
    duration = sum(float(t[-1] - t[0]) for t in pieces)
    longest = max(float(np.max(np.diff(t))) for t in pieces)
    return min(duration / 200, longest / 10)


@dataclass(frozen=True)
class ModelRef:
    """Where the model comes from: the subcircuit library or a compiled OSDI file."""

    kind: str = "subckt"  # "subckt" | "osdi"
    path: str = "rram.lib"  # .include path, or the .osdi file
    in_deck_osdi: bool = True  # emit pre_osdi in the deck (False: the runner loads it)
    #: the subcircuit/module name the library or module defines (``rram export --name``);
    #: None: the card's model's own name
    name: str | None = None

    def __post_init__(self) -> None:
        dialect(self.kind)
        validate.path(self.path, "model path")
        if self.name is not None:
            validate.identifier(self.name, "model name")

    @property
    def dialect(self) -> Dialect:
        return dialect(self.kind)


@dataclass(frozen=True)
class Testbench:
    """One circuit with one cell, driven by ``stimulus``.

    ``circuit`` is ``resistor``, ``compliance`` or ``1t1r``; ``circuit_params`` takes the
    names of :data:`rram.circuits.CIRCUIT_PARAMETERS`; ``instance`` names the cell.
    ``tmax`` caps ngspice's time step (default: :attr:`step_max`); ``options`` are
    ngspice ``.options`` (``method=gear`` by default, see :data:`DEFAULT_OPTIONS`).
    """

    __test__ = False  # not a pytest class

    circuit: str
    stimulus: Stimulus
    card: Card = field(default_factory=default_card)
    circuit_params: Mapping[str, float] = field(default_factory=dict)
    model: ModelRef = field(default_factory=ModelRef)
    instance: str = "cell"
    tmax: float | None = None
    title: str = "rram testbench"
    print_results: bool = False
    options: Mapping[str, float | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.circuit not in KINDS:
            raise InputError(f"testbench circuit {self.circuit!r}: valid are {', '.join(KINDS)}")
        validate.identifier(self.instance, "instance name", targets=("spice",))
        unknown = sorted(set(self.circuit_params) - set(CIRCUIT_DEFAULTS))
        if unknown:
            raise InputError(f"unknown circuit parameter(s) {', '.join(unknown)}; valid: "
                             + ", ".join(CIRCUIT_DEFAULTS))
        for k, v in self.circuit_params.items():
            problem = next(p for p in CIRCUIT_PARAMETERS if p.name == k).check(v)
            if problem:
                raise InputError(f"circuit parameter {k}: {problem}")
        if self.tmax is not None:
            validate.max_step(self.tmax, float(self.stimulus.times[-1]))
        if any(c in self.title for c in "\n\r"):
            raise InputError("the title must be one line")
        self._option_text()

    # Names of the probed vectors ------------------------------------------------
    def instance_name(self, suffix: str = "") -> str:
        return self.model.dialect.instance(self.instance + suffix)

    def node(self, internal: str, suffix: str = "") -> str:
        """ngspice vector name of an internal node of the cell."""
        return self.model.dialect.vector(self.instance_name(suffix), internal)

    def vectors(self, suffix: str = "") -> dict[str, str]:
        """Quantity -> ngspice vector (time, applied and cell voltages, current, states)."""
        be = self._cell(suffix).be
        be = "0" if be == "0" else f"v({be})"
        return {
            "time": "time",
            "v_applied": "v(bl)",
            "v_te": f"v(te{suffix})",
            "v_be": be,
            "mid": f"v(mid{suffix})",
            "current": f"i(vsense{suffix})",
            "dgap": self.node("dgap", suffix),
            "dwidth": self.node("dwidth", suffix),
            "dtemp": self.node("dtemp", suffix),
            # the optional blocks' states, in a model that has them
            **{n: self.node(n, suffix) for n in OPTIONAL_END_COLUMNS
               if n in self.card.model.node_names},
        }

    @property
    def step_max(self) -> float:
        """The step cap: ``tmax`` if given, else 1/200 of the stimulus (and at most 1/10
        of its longest segment).  Accuracy comes from the error control; the cap only
        keeps ngspice from striding over a slow ramp."""
        if self.tmax is not None:
            return float(self.tmax)
        return step_cap([self.stimulus.times])

    # Rendering -------------------------------------------------------------------
    def _model_header(self) -> list[str]:
        d = self.model.dialect
        if d.compiled and not self.model.in_deck_osdi:
            return []  # the runner's session has loaded it
        return d.load(self.model.path, self._threads())

    def _threads(self) -> str:
        """``num_threads=N`` of an OSDI deck: 1 unless the user's options say otherwise."""
        for name, value in self.options.items():
            if isinstance(name, str) and name.lower() == "num_threads":
                return validate.option(name, value)[1]
        return ONE_THREAD

    def _netlist(self, suffix: str) -> Netlist:
        """The cell and its circuit (:func:`rram.circuits.device_netlist`)."""
        cp = {**CIRCUIT_DEFAULTS, **{k: float(v) for k, v in self.circuit_params.items()}}
        for k, v in cp.items():
            validate.number(v, k)
        return device_netlist(self.circuit, cp, self.card, suffix, self.instance)

    def _cell(self, suffix: str) -> Cell:
        return self._netlist(suffix).of_type(Cell)[0]

    def _cell_model(self) -> CellModel:
        return CellModel(self.model.kind, self.model.name or self.card.model.name)

    @staticmethod
    def _pwl(name: str, node: str, times, values) -> VSource:
        return VSource(name, node, "0", pwl=tuple(
            (float(t), float(v)) for t, v in zip(times, values, strict=True)))

    def _segment_wave(self, values: np.ndarray) -> tuple[list[float], list[float]]:
        """A per-segment value (compliance, gate) as a PWL with 1 ps steps at the
        breakpoints."""
        st = self.stimulus
        t, v = [float(st.times[0])], [float(values[0])]
        for k in range(1, len(values)):
            tb = float(st.times[k])
            if values[k] != values[k - 1]:
                t += [tb, tb + 1e-12]
                v += [float(values[k - 1]), float(values[k])]
        t.append(float(st.times[-1]) + 2e-12)
        v.append(float(values[-1]))
        return t, v

    def _option_text(self) -> str:
        """``.options`` words: the solver and thread settings of the rendering, then the
        defaults and the user's entries, each checked against
        :data:`rram.spice.validate.NGSPICE_OPTIONS` (name and range).

        The solver is the rendering's (:attr:`rram.dialects.Dialect.solver`); compiled
        decks also set ``num_threads=1`` (:data:`rram.dialects.OSDI_THREADS_NOTE`).  A
        user's ``klu``/``sparse``/``num_threads`` entry replaces the rendering's choice."""
        entries: dict[str, str] = {}
        for name, value in {**DEFAULT_OPTIONS, **self.options}.items():
            key, text = validate.option(name, value)
            entries[key] = text
        if "klu" in entries and "sparse" in entries:
            raise InputError("options klu and sparse exclude each other: give one")
        words = []
        d = self.model.dialect
        if d.solver and "klu" not in entries and "sparse" not in entries:
            words.append(d.solver)
        if d.compiled and "num_threads" not in entries:
            words.append(self._threads())
        return " ".join(words + list(entries.values()))

    def _cell_lines(self, suffix: str) -> list[str]:
        """The cell and its circuit, on nodes te<suffix>, mid<suffix>."""
        return self._netlist(suffix).spice_lines(self._cell_model())

    def _deck(self, cells: list[str], vectors: list[str], title: str,
              cards: Sequence[Card] = ()) -> str:
        st = self.stimulus
        out = [f"* {title}", "* generated by rram; circuit " + self.circuit]
        out += self.model.dialect.note()
        out += [f".options {self._option_text()}",
                *temperature_line(cards or (self.card,)), *self._model_header()]
        out += element_lines(self.sources(), self._cell_model())
        out += cells
        stop = validate.number(float(st.times[-1]), "stop time", positive=True)
        step = validate.number(self.step_max, "maximum step", positive=True)
        out.append(f".tran {step} {stop} 0 {step}")
        vecs = list(dict.fromkeys(v for v in vectors if v not in ("time", "0")))
        out += wrap_line(".save " + " ".join(vecs))
        if self.print_results:
            out += wrap_line(".print tran " + " ".join(vecs))
        out.append(".end")
        return "\n".join(out) + "\n"

    def sources(self) -> list[VSource]:
        """The stimulus: the bit line, and the gate (1t1r) or the compliance (compliance)
        as PWL or constant sources, shared by the cells of a batch."""
        st = self.stimulus
        sources = [self._pwl("bl", "bl", st.times, st.volts)]
        if self.circuit == "1t1r":
            gate = st.constant_gate
            if gate is None:
                sources.append(self._pwl("gate", "gate", *self._segment_wave(st.gates)))
            else:
                validate.number(gate, "gate voltage")
                sources.append(VSource("gate", "gate", "0", gate))
        elif self.circuit == "compliance":
            sources.append(self._pwl("icc", "icc", *self._segment_wave(st.icc)))
        return sources

    def render(self) -> str:
        return self._deck(self._cell_lines(""), list(self.vectors().values()), self.title)

    def write(self, path: str | Path) -> Path:
        from ..io import write_text_atomic

        return write_text_atomic(path, self.render())


def check_batch(benches: Sequence[Testbench]) -> Testbench:
    """The first of ``benches``, which may share one deck: one circuit, stimulus, model,
    options and step cap (cards and circuit parameters may differ)."""
    first = benches[0]
    for tb in benches[1:]:
        same = (tb.circuit == first.circuit and tb.model == first.model
                and dict(tb.options) == dict(first.options) and tb.step_max == first.step_max
                and _same_stimulus(tb.stimulus, first.stimulus))
        if not same:
            raise InputError("a batched deck needs one circuit, stimulus, model and options")
    return first


def render_batch(benches: Sequence[Testbench]) -> str:
    """One deck holding every cell of ``benches`` (same circuit, stimulus, model and
    options; cards and circuit parameters may differ).  Cell ``i`` uses nodes ``te_i``,
    ``mid_i``; :meth:`Testbench.vectors` with ``suffix=f"_{i}"`` names its vectors."""
    first = check_batch(benches)
    cells, vectors = [], []
    for i, tb in enumerate(benches):
        cells += tb._cell_lines(f"_{i}")
        vectors += list(tb.vectors(f"_{i}").values())
    return first._deck(cells, vectors, f"{first.title} x{len(benches)}",
                       [tb.card for tb in benches])


def _same_stimulus(a: Stimulus, b: Stimulus) -> bool:
    return a is b or (np.array_equal(a.times, b.times) and np.array_equal(a.volts, b.volts)
                      and np.array_equal(a.icc, b.icc) and np.array_equal(a.gates, b.gates))


__all__ = ["KINDS", "MODELS", "ModelRef", "Testbench", "check_batch", "node_symbol",
           "render_batch"]
