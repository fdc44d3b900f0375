"""The standard testbenches, by name: what ``rram netlist KIND`` writes.

Each kind has documented settings with defaults (``SETTINGS``); :func:`build` checks the
names and values and returns a :class:`~rram.spice.testbench.Testbench`.

========== ================================================================================
kind       circuit and stimulus
========== ================================================================================
dc-loop    DC loop 0 → v_set → 0 → v_reset → 0 through a series resistor ``rs``
1t1r       the same loop on a 1T1R cell; the gate voltage ``v_gate`` sets the compliance
pulses     1T1R SET pulse then RESET pulse (``v_set_pulse``, ``v_reset_pulse``, ``width``)
read-disturb constant read voltage ``v_read`` for ``duration`` through a series resistor
overshoot  1T1R SET pulse with a drain-node capacitance ``cd`` (current overshoot)
========== ================================================================================
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..card import Card, default_card
from ..engine.stimulus import PulseCycle, constant_stress, dc_loops, pulse_train
from ..errors import InputError
from .testbench import ModelRef, Testbench

_CYCLE = PulseCycle()

#: kind -> setting -> (default, description)
SETTINGS: dict[str, dict[str, tuple[float, str]]] = {
    "dc-loop": {
        "v_set": (2.0, "SET sweep maximum (V)"),
        "v_reset": (-2.0, "RESET sweep maximum (V)"),
        "rate": (1e3, "sweep rate (V/s)"),
        "rs": (10e3, "series resistance (Ohm)"),
        "cycles": (1, "number of loops"),
    },
    "1t1r": {
        "v_set": (2.0, "SET sweep maximum (V)"),
        "v_reset": (-2.0, "RESET sweep maximum (V)"),
        "rate": (1e3, "sweep rate (V/s)"),
        "v_gate": (1.28, "gate voltage (V): 100 uA saturation current by default"),
        "cycles": (1, "number of loops"),
    },
    "pulses": {  # the endurance cycle's (rram.experiment.PulseCycle)
        "v_set_pulse": (_CYCLE.v_set, "SET pulse amplitude (V)"),
        "v_reset_pulse": (_CYCLE.v_reset, "RESET pulse amplitude (V)"),
        "width": (_CYCLE.width, "flat-top width of each pulse (s)"),
        "edge": (_CYCLE.edge, "rise and fall time (s)"),
        "gap": (_CYCLE.gap, "time at 0 V after each pulse (s)"),
        "v_gate": (_CYCLE.v_gate, "gate voltage (V)"),
        "cycles": (1, "number of SET/RESET pulse pairs"),
    },
    "read-disturb": {
        "v_read": (0.3, "read voltage (V)"),
        "duration": (1.0, "stress time (s)"),
        "rise": (1e-6, "ramp time to the read voltage (s)"),
        "rs": (1e3, "series resistance (Ohm)"),
    },
    "overshoot": {
        "v_set_pulse": (2.0, "SET pulse amplitude (V)"),
        "width": (80e-9, "flat-top width (s)"),
        "edge": (10e-9, "rise and fall time (s)"),
        "v_gate": (1.28, "gate voltage (V)"),
        "cd": (100e-15, "drain-node capacitance (F)"),
    },
}
KINDS = tuple(SETTINGS)
INTEGER_SETTINGS = frozenset({"cycles"})


def settings_help(kind: str) -> str:
    return "; ".join(f"{k}={v[0]:g} ({v[1]})" for k, v in SETTINGS[kind].items())


def _settings(kind: str, given: Mapping[str, float]) -> dict[str, float]:
    if kind not in SETTINGS:
        raise InputError(f"testbench kind {kind!r}: valid are {', '.join(KINDS)}")
    valid = SETTINGS[kind]
    unknown = sorted(set(given) - set(valid))
    if unknown:
        raise InputError(f"unknown setting(s) {', '.join(unknown)} for {kind}; valid: "
                         + ", ".join(valid))
    out = {k: float(v[0]) for k, v in valid.items()}
    for k, v in given.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"setting {k} must be a finite number, got {v!r}")
        if k in INTEGER_SETTINGS and (v != int(v) or not 1 <= v <= 1000):
            raise InputError(f"setting {k} must be an integer in [1, 1000], got {v!r}")
        out[k] = float(v)
    return out


def build(kind: str, settings: Mapping[str, float] | None = None, card: Card | None = None,
          model: ModelRef | None = None, **testbench) -> Testbench:
    """The testbench ``kind`` with ``settings`` (see :data:`SETTINGS`); extra keyword
    arguments go to :class:`Testbench` (``instance``, ``options``, ``tmax``, ...)."""
    s = _settings(kind, settings or {})
    card = card or default_card()
    model = model or ModelRef()
    common = {"card": card, "model": model, "title": f"rram {kind} testbench", **testbench}
    if kind in ("dc-loop", "1t1r"):
        vg = s.get("v_gate", 0.0)
        st = dc_loops(s["v_set"], s["v_reset"], s["rate"], int(s["cycles"]), v_gate=vg)
        if kind == "dc-loop":
            return Testbench("resistor", st, circuit_params={"rs": s["rs"]}, **common)
        return Testbench("1t1r", st, **common)
    if kind == "pulses":
        n = int(s["cycles"])
        st = PulseCycle(v_set=s["v_set_pulse"], v_reset=s["v_reset_pulse"], width=s["width"],
                        edge=s["edge"], gap=s["gap"], v_gate=s["v_gate"]).stimulus(n)
        return Testbench("1t1r", st, **common)
    if kind == "read-disturb":
        st = constant_stress(s["v_read"], s["duration"], rise=s["rise"])
        return Testbench("resistor", st, circuit_params={"rs": s["rs"]}, **common)
    st = pulse_train([s["v_set_pulse"]], width=s["width"], rise=s["edge"], gap=100e-9,
                     v_gate=s["v_gate"])
    return Testbench("1t1r", st, circuit_params={"cd": s["cd"]}, **common)
