"""The DC switching loop, the one experiment ``rram sweep``, ``rram mc`` and the fit
describe, and the simulators that run it.

A :class:`DCLoop` is the protocol: its circuit, the sweep amplitudes and rate, the
compliances and the read voltage.  It gives the whole loop as one stimulus
(:meth:`DCLoop.stimulus`, for ``rram sweep``) or each operation alone
(:meth:`DCLoop.phase`, for the Monte Carlo, which redraws parameters between them), and
it travels with a fitted card (:meth:`DCLoop.from_meta`).  :data:`ENGINES` names the
simulators; :func:`simulate_with` runs any of them and returns the same result type.
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .checks import is_number
from .circuits import check_transistor
from .dialects import BY_ENGINE, OSDI
from .engine.stimulus import (
    COMPLIANCE_RANGE,
    MAX_AMPLITUDE,
    PulseCycle,
    Stimulus,
    check_compliance,
    check_dc_loop,
    dc_loops,
    sweep_phase,
)
from .errors import InputError

if TYPE_CHECKING:
    from .card import Card, CardBatch
    from .engine.run import Options, SimResult

#: Circuits of a DC loop (:mod:`rram.circuits`).
CIRCUITS = ("compliance", "1t1r", "resistor")
#: Simulators → the model rendering each runs (None: the equations in Python): the
#: Python engine, its lockstep torch form (``rram[torch]``), ngspice with the subcircuit
#: or the compiled Verilog-A (OSDI), and VACASK with the compiled Verilog-A.
ENGINES = {"python": None, "torch": None, **{e: d.kind for e, d in BY_ENGINE.items()},
           "vacask": OSDI.kind}
#: Optional engines: plugins in a layer above this one (they need an extra), imported by
#: name when asked for; each module has ``simulate`` with the Python engine's signature.
PLUGIN_ENGINES = {"torch": "rram.torch.transient"}
#: The RESET's compliance when none is given: ten times the SET's, at least 10 mA (the
#: RESET draws more than the SET left; the limit only guards the source).
RESET_COMPLIANCE_FACTOR, RESET_COMPLIANCE_MIN = 10.0, 10e-3


def check_engine(name: str) -> str:
    if name not in ENGINES:
        raise InputError(f"unknown engine {name!r}; valid: {', '.join(ENGINES)}")
    return name


@dataclass(frozen=True)
class DCLoop:
    """A DC loop: 0 → ``v_set`` → 0 → ``v_reset`` → 0 at ``rate`` (V/s).

    ``circuit``: ``compliance`` (a source limited to ``icc_set`` on SET and
    ``icc_reset`` on RESET, A; with ``r_source`` (Ω) its small-signal resistance below
    the limit), ``1t1r`` (gate at ``v_gate`` (V) on SET, at ``reset_gate`` on RESET and
    the reads, default the same; the access transistor's ``transistor`` parameters
    ``kp``, ``wl``, ``vto``, default the circuit's) or ``resistor`` (``rs`` in series, Ω).
    ``icc_reset`` defaults to :data:`RESET_COMPLIANCE_FACTOR` times ``icc_set``, at
    least :data:`RESET_COMPLIANCE_MIN`.  R_LRS and R_HRS are read at ``v_read`` (V);
    waveforms are sampled every ``v_step`` volts of sweep.
    """

    circuit: str = "compliance"
    v_set: float = 2.0
    v_reset: float = -2.0
    rate: float = 1e3
    icc_set: float = 100e-6
    icc_reset: float | None = None
    v_gate: float = 1.28
    rs: float = 10e3
    r_source: float | None = None
    v_read: float = 0.1
    v_step: float = 2e-3
    reset_gate: float | None = None
    transistor: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.circuit not in CIRCUITS:
            raise InputError(f"circuit {self.circuit!r}: valid are {', '.join(CIRCUITS)}")
        # every DC loop's checks: amplitudes, rate, compliances
        check_dc_loop(self.v_set, self.v_reset, self.rate)
        check_compliance(self.icc_set, "icc_set")
        if self.icc_reset is None:
            object.__setattr__(self, "icc_reset", min(COMPLIANCE_RANGE[1], max(
                RESET_COMPLIANCE_MIN, RESET_COMPLIANCE_FACTOR * self.icc_set)))
        check_compliance(self.icc_reset, "icc_reset")
        for name in ("v_gate", "rs", "v_read", "v_step", "r_source"):
            v = getattr(self, name)
            if v is None and name == "r_source":
                continue
            if not (is_number(v) and math.isfinite(v) and (name == "v_gate" or v > 0)):
                raise InputError(f"protocol {name} must be finite"
                                 + ("" if name == "v_gate" else " and > 0") + f", got {v!r}")
        if self.v_read > MAX_AMPLITUDE or abs(self.v_gate) > MAX_AMPLITUDE:
            raise InputError(f"protocol v_read and |v_gate| must be at most {MAX_AMPLITUDE:g} "
                             f"V, got {self.v_read:g} and {self.v_gate:g} V")
        if self.r_source is not None and self.circuit != "compliance":
            raise InputError(f"protocol r_source: the {self.circuit} circuit has no "
                             "compliance source")
        if (self.reset_gate is not None or self.transistor) and self.circuit != "1t1r":
            raise InputError(f"protocol reset_gate and transistor: the {self.circuit} "
                             "circuit has no transistor")
        if self.reset_gate is not None and not (
                is_number(self.reset_gate) and math.isfinite(self.reset_gate)
                and abs(self.reset_gate) <= MAX_AMPLITUDE):
            raise InputError(f"protocol reset_gate must be within ±{MAX_AMPLITUDE:g} V, got "
                             f"{self.reset_gate!r}")
        if not isinstance(self.transistor, Mapping):
            raise InputError(f"protocol transistor must map kp, wl, vto to values, got "
                             f"{self.transistor!r}")
        object.__setattr__(self, "transistor", check_transistor(self.transistor))

    @classmethod
    def of_sweep(cls, v_set: float = 2.0, v_reset: float = -2.0, rate: float = 1e3,
                 compliance: float | None = None, series_resistance: float | None = None,
                 v_step: float = 2e-3) -> DCLoop:
        """The loop of ``rram sweep``'s options on a card without a fitted protocol:
        :meth:`overridden` applied to the default loop."""
        return replace(cls(), v_step=v_step).overridden(
            v_set=v_set, v_reset=v_reset, rate=rate, compliance=compliance,
            series_resistance=series_resistance)

    def overridden(self, *, circuit: str | None = None, v_set: float | None = None,
                   v_reset: float | None = None, rate: float | None = None,
                   compliance: float | None = None, series_resistance: float | None = None,
                   v_gate: float | None = None, v_read: float | None = None) -> DCLoop:
        """This loop with the options a user gave (None: keep this loop's), as the
        commands' flags change a card's fitted protocol.  ``compliance`` is the SET's
        limit (the RESET's follows it, :data:`RESET_COMPLIANCE_FACTOR`);
        ``series_resistance`` is the ``resistor`` circuit's resistor, or the compliance
        source's small-signal resistance; given without ``compliance`` or ``circuit``
        it replaces the compliance (the ``resistor`` circuit)."""
        for name, v in (("compliance", compliance), ("series_resistance", series_resistance)):
            if v is not None and not (is_number(v) and math.isfinite(v) and v > 0):
                raise InputError(f"--{name.replace('_', '-')} must be a finite number > 0, "
                                 f"got {v!r}")
        if compliance is not None:
            check_compliance(compliance, "--compliance")
        if circuit is None and series_resistance is not None and compliance is None:
            circuit = "resistor"
        changes: dict[str, Any] = {k: v for k, v in (
            ("circuit", circuit), ("v_set", v_set), ("v_reset", v_reset), ("rate", rate),
            ("v_gate", v_gate), ("v_read", v_read)) if v is not None}
        if compliance is not None:  # the RESET's limit follows the SET's
            changes.update(icc_set=compliance, icc_reset=None)
        target = changes.get("circuit", self.circuit)
        if target != "compliance":
            changes["r_source"] = None
        if target != "1t1r":  # no transistor
            changes.update(reset_gate=None, transistor={})
        if series_resistance is not None:
            changes["rs" if target == "resistor" else "r_source"] = series_resistance
        return replace(self, **changes)

    def describe(self) -> str:
        """One line: the circuit, the amplitudes, the rate and the limits."""
        limit = {"compliance": f"{self.icc_set:.3g} A compliance"
                 + (f" ({self.r_source:.3g} Ohm source)" if self.r_source else ""),
                 "1t1r": f"1T1R, gate {self.v_gate:g} V" + (
                     f" (RESET {self.reset_gate:g} V)" if self.reset_gate is not None
                     else ""),
                 "resistor": f"{self.rs:.3g} Ohm in series"}[self.circuit]
        return (f"SET to {self.v_set:g} V, RESET to {self.v_reset:g} V at {self.rate:.4g} V/s, "
                f"{limit}, read at {self.v_read:g} V")

    def stimulus(self, cycles: int = 1) -> Stimulus:
        """The whole loop, ``cycles`` times."""
        st = dc_loops(self.v_set, self.v_reset, self.rate, cycles, icc_set=self.icc_set,
                      icc_reset=self.icc_reset, v_step=self.v_step, v_gate=self.gate)
        if self.circuit != "1t1r" or self.reset_gate is None:
            return st
        return replace(st, v_gate=np.array([self.gate if ph == "set" else self.reset_gate
                                            for ph in st.phases]))

    def phase(self, event: str, cycle: int = 0) -> Stimulus:
        """One operation (``set`` or ``reset``) of cycle ``cycle``: its ramp out and
        back, then a read pulse at ``v_read``."""
        top, icc = (self.v_set, self.icc_set) if event == "set" else (self.v_reset,
                                                                        self.icc_reset)
        gate = self.gate if event == "set" or self.reset_gate is None else self.reset_gate
        return sweep_phase(top, self.rate, icc, event, v_read=self.v_read, cycle=cycle,
                           v_step=self.v_step, v_gate=gate)

    @property
    def gate(self) -> float:
        return self.v_gate if self.circuit == "1t1r" else 0.0

    @property
    def circuit_params(self) -> dict[str, float]:
        if self.circuit == "resistor":
            return {"rs": self.rs}
        if self.r_source is not None:
            return {"gsrc": 1.0 / self.r_source}
        return dict(self.transistor) if self.circuit == "1t1r" else {}

    def as_meta(self) -> dict[str, Any]:
        """The protocol as a card's metadata (``meta["fit"]["protocol"]``)."""
        return asdict(self)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> DCLoop:
        """The protocol a fitted card carries (``meta["fit"]["protocol"]``, as
        :meth:`as_meta` writes it; a card without one: the default loop)."""
        fit = meta.get("fit") if isinstance(meta, Mapping) else None
        p = fit.get("protocol") if isinstance(fit, Mapping) else None
        return cls._of_mapping(p, "the card's fit protocol") if p else cls()

    @classmethod
    def _of_mapping(cls, p: Any, what: str) -> DCLoop:
        if not isinstance(p, Mapping):
            raise InputError(f"{what} is not an object: {p!r}")
        unknown = sorted(set(p) - set(cls.__dataclass_fields__))
        if unknown:
            raise InputError(f"{what} has unknown key(s) {', '.join(unknown)}; valid: "
                             + ", ".join(cls.__dataclass_fields__))
        try:
            return cls(**p)
        except InputError as exc:
            raise InputError(f"{what}: {exc}") from None

    @classmethod
    def from_json(cls, text: str, source: str = "protocol") -> DCLoop:
        """The protocol of a JSON file: a protocol object (the keys of :meth:`as_meta`),
        or a card or variation spec that carries one (``meta.fit.protocol``,
        ``fit.protocol``)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}: not JSON ({exc})") from None
        if not isinstance(data, Mapping):
            raise InputError(f"{source}: expected a JSON object, got {type(data).__name__}")
        meta = data.get("meta") if "meta" in data else data
        fit = meta.get("fit") if isinstance(meta, Mapping) else None
        if "format" in data or "variations" in data:  # a card or a spec
            if not (isinstance(fit, Mapping) and fit.get("protocol")):
                raise InputError(f"{source}: this {'card' if 'format' in data else 'spec'} "
                                 "carries no fitted protocol")
            data = fit["protocol"]
        return cls._of_mapping(data, f"{source}: the protocol")


def simulate_with(engine: str, circuit: str, stimuli: Stimulus | Sequence[Stimulus],
                  cards: Card | Sequence[Card] | CardBatch | None = None,
                  circuit_params: Mapping[str, object] | None = None, *,
                  options: Options | None = None, spice_options=None, batch: int = 1,
                  record: bool = True) -> SimResult:
    """Simulate with ``engine`` (:data:`ENGINES`): the Python engine (compiled, or in
    torch lockstep) with ``options`` (``record=False``: events only), or ngspice or
    VACASK with ``spice_options``
    (:class:`rram.spice.SpiceOptions`; ``batch`` devices that share a stimulus per
    deck).  The result type is the same whichever ran."""
    check_engine(engine)
    if engine in PLUGIN_ENGINES:
        simulate = importlib.import_module(PLUGIN_ENGINES[engine]).simulate
        return simulate(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                        options=options, record=record)
    if ENGINES[engine] is None:
        from .engine.run import simulate

        return simulate(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                        options=options, record=record)
    if engine == "vacask":
        from .spice.runner import simulate_vacask

        return simulate_vacask(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                               options=spice_options, batch=batch)
    from .spice import simulate_spice

    return simulate_spice(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                          model=ENGINES[engine], options=spice_options, batch=batch)


def nominal_excursion(card: Card, protocol: DCLoop, cycles: int = 2) -> str | None:
    """What the nominal device leaves of the range under ``protocol`` (a
    :class:`rram.experiment.DCLoop`), from ``cycles`` loops in the Python engine (the
    second one is a cycled device's), else None: the check a command runs before it
    spends a study on a stimulus the model cannot represent (well under a second)."""
    from .metrics import loop_metrics
    from .validity import OUT_OF_RANGE

    res = simulate_with("python", protocol.circuit, protocol.stimulus(cycles), cards=card,
                        circuit_params=protocol.circuit_params, record=False)
    reasons = [r for r in loop_metrics(res)[OUT_OF_RANGE].fillna("").astype(str) if r]
    return "; ".join(dict.fromkeys(reasons)) or None


__all__ = ["CIRCUITS", "ENGINES", "DCLoop", "PulseCycle", "check_engine",
           "nominal_excursion", "simulate_with"]
