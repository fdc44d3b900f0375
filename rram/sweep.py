"""DC loop sweeps with a choice of engine: the API behind ``rram sweep``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .card import Card, default_card
from .engine.run import COLUMNS, SimResult, simulate
from .engine.stimulus import check_compliance, check_dc_loop, dc_loops
from .errors import InputError

ENGINES = ("python", "ngspice", "veriloga")
DEFAULT_COMPLIANCE = 100e-6


@dataclass(frozen=True)
class SweepSpec:
    """A DC loop: 0 → v_set → 0 → v_reset → 0, ``cycles`` times, at ``rate`` V/s.

    Series element: an ideal source with current limit ``compliance`` (A); with
    ``series_resistance`` (Ω) as well, the limiter's small-signal resistance is that value;
    with only ``series_resistance``, a plain resistor.
    """

    v_set: float = 2.0
    v_reset: float = -2.0
    rate: float = 1e3
    compliance: float | None = None
    series_resistance: float | None = None
    cycles: int = 1
    temperature: float | None = None
    v_step: float = 2e-3

    def __post_init__(self) -> None:
        # the same checks as every DC sweep (rram mc's Protocol too): refused up front
        check_dc_loop(self.v_set, self.v_reset, self.rate)

    def circuit(self) -> tuple[str, dict[str, float], float]:
        """(circuit kind, circuit parameters, SET compliance)."""
        for name in ("compliance", "series_resistance"):
            v = getattr(self, name)
            if v is not None and (not math.isfinite(v) or v <= 0):
                raise InputError(f"--{name.replace('_', '-')} must be a finite number > 0, "
                                 f"got {v!r}")
        if self.compliance is not None:
            check_compliance(self.compliance, "--compliance")
        if self.series_resistance is not None and self.compliance is None:
            return "resistor", {"rs": self.series_resistance}, math.inf
        icc = self.compliance if self.compliance is not None else DEFAULT_COMPLIANCE
        params = {} if self.series_resistance is None else {"gsrc": 1.0 / self.series_resistance}
        return "compliance", params, icc


def apply_temperature(card: Card, temperature: float | None) -> Card:
    if temperature is None:
        return card
    return card.replace(tamb=temperature)


def run_sweep(spec: SweepSpec, card: Card | None = None, engine: str = "python") -> SimResult:
    """Simulate the loop; raises :class:`~rram.errors.InputError` on a bad spec and
    :class:`~rram.errors.SimulationError` if the engine cannot complete it."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")
    card = apply_temperature(card or default_card(), spec.temperature)
    kind, params, icc = spec.circuit()
    stim = dc_loops(spec.v_set, spec.v_reset, spec.rate, spec.cycles,
                    icc_set=icc if math.isfinite(icc) else 1.0, icc_reset=max(10e-3, 10 * icc)
                    if math.isfinite(icc) else 1.0, v_step=spec.v_step)
    if engine == "python":
        res = simulate(kind, stim, cards=card, circuit_params=params)
    else:
        from .spice import ENGINE_MODELS, SpiceOptions, simulate_spice

        # resolve the loop at v_step volts, as the Python engine's output grid does
        res = simulate_spice(kind, stim, cards=card, circuit_params=params,
                             model=ENGINE_MODELS[engine],
                             options=SpiceOptions(tmax=spec.v_step / spec.rate))
    res.raise_on_failure()
    return res


def sweep_frame(res: SimResult) -> pd.DataFrame:
    return res.frame()[list(COLUMNS)]
