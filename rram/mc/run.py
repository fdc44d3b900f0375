"""Monte Carlo of SET/RESET cycles: each operation a separate run, state carried over.

Every SET and every RESET is simulated as one :func:`~rram.engine.stimulus.sweep_phase`
(ramp, return, read pulse) with the parameters in effect for that operation: the base
card, the device's D2D draw and the operation's C2C draw (:mod:`rram.mc.draws`).  The
state at the end of one operation becomes the initial state (``x0``, ``w0``) of the
next, so redrawing kinetic parameters between operations keeps the resistance
continuous.  The same samples run in either engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..card import Card, CardBatch, carried_at_end, carried_states, default_card, formed_state
from ..constants import NM
from ..engine.static import read_resistance
from ..errors import InputError
from ..experiment import ENGINES, DCLoop, check_engine, simulate_with
from ..metrics import (
    CYCLE_COLUMNS,
    peak_current,
    read_of,
    reset_temperature,
    switching_rule,
    switching_voltage,
)
from ..status import Status
from ..validity import OUT_OF_RANGE, cycle_extremes, excursion
from ..variation import VariationSpec, default_variation
from .draws import draw, draw_d2d, read_streams, slow_paths

#: A Monte Carlo row: a table of cycles' columns, and whether the device converged.
METRIC_COLUMNS = (*CYCLE_COLUMNS, "converged", "error")
#: The figures of a cycle, filled operation by operation.
_FIGURES = ("v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm", "i_peak_A", "i_reset_A",
            "t_max_K")
#: Segments of a sweep phase: up, down, read edge, read plateau, read edge.
_SWEEP, _PLATEAU, _END = np.array([0, 1]), 3, 4


def check_study(study, counts) -> None:
    """A study's counts (name, lowest, highest: integers), its seed (>= 0) and engine."""
    for name, lo, hi in counts:
        v = getattr(study, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise InputError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    if isinstance(study.seed, bool) or not isinstance(study.seed, (int, np.integer)) \
            or study.seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {study.seed!r}")
    check_engine(study.engine)


@dataclass(frozen=True)
class MonteCarlo:
    """A Monte Carlo study: ``devices`` × ``cycles`` SET/RESET operations.

    ``burn_in``: cycles run first and not recorded (the recorded ones keep their
    numbers, ``burn_in`` …).  The first SET starts from the formed device's state, which
    no cycle of a device measured after many cycles does (TUD: the fitted card's first
    V_set is −0.87 V, the later ones −1.25 V); a measured record of a cycled device is
    matched with at least one.
    """

    card: Card = field(default_factory=default_card)
    spec: VariationSpec = field(default_factory=default_variation)
    devices: int = 100
    cycles: int = 10
    seed: int = 0
    engine: str = "python"
    protocol: DCLoop = field(default_factory=DCLoop)
    burn_in: int = 0

    def __post_init__(self) -> None:
        check_study(self, (("devices", 1, 10**8), ("cycles", 1, 10**6), ("burn_in", 0, 10**6)))

    @property
    def columns(self) -> list[str]:
        drawn = [f"{p}_{e}" for p in self.spec.parameters for e in ("set", "reset")]
        return [*METRIC_COLUMNS, *drawn]

    def fingerprint(self) -> dict:
        """What identifies the study's samples (for provenance and resume)."""
        from .. import __version__

        spec_hash = hashlib.sha256(self.spec.to_json().encode()).hexdigest()
        return {"rram_version": __version__, "card_sha256": self.card.digest,
                "variation_sha256": spec_hash, "devices": int(self.devices),
                "cycles": int(self.cycles), "seed": int(self.seed), "engine": self.engine,
                "protocol": asdict(self.protocol),
                **({"burn_in": int(self.burn_in)} if self.burn_in else {})}

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.fingerprint(), sort_keys=True).encode()
                              ).hexdigest()[:16]


#: ngspice per operation (measured with benchmarks/bench_mc.py, default study).
#: SET: truncation-error tolerance ``trtol`` = 1 instead of 7, for accuracy through the
#: abrupt SET: on 100 devices R_HRS within 0.46 % and R_LRS within 0.33 % of the Python
#: engine, against 1.2 % and 0.75 % at 7.  (Before the Verilog-A step hint it was also
#: ~1.4x faster, ngspice's undamped Newton needing ~3 iterations per point instead of
#: ~11; with the hint trtol = 7 runs 73 device-cycles/s against 53.)
#: RESET: gradual, so devices share a time grid well: 5 per deck, ~1.5x faster.
#: (A SET batched in one deck is slower: every device takes every other's SET steps.)
SPICE_SET_OPTIONS = {"trtol": 1}
SPICE_RESET_BATCH = 5


def spice_settings(protocol: DCLoop, event: str):
    """(SpiceOptions, devices per deck) for one operation in ngspice.

    The step cap is the one a whole cycle in one deck gets, so the answer does not depend
    on how the cycle is split into operations."""
    from ..spice import SpiceOptions
    from ..spice.testbench import step_cap

    cap = step_cap([protocol.phase(e, 0).times for e in ("set", "reset")])
    if event == "set":
        return SpiceOptions(tmax=cap, spice_options=SPICE_SET_OPTIONS), 1
    return SpiceOptions(tmax=cap), SPICE_RESET_BATCH


def _simulate(mc: MonteCarlo, stimulus, cards: CardBatch, event: str):
    options, batch = spice_settings(mc.protocol, event) if ENGINES[mc.engine] \
        else (None, 1)
    return simulate_with(mc.engine, mc.protocol.circuit, stimulus, cards,
                         mc.protocol.circuit_params, spice_options=options, batch=batch,
                         record=False)


def _read_noise(mc: MonteCarlo, cards: CardBatch, alive: list[int], devices: list[int],
                cycle: int, event: str, gap: np.ndarray, width: np.ndarray,
                out: dict[str, np.ndarray]) -> None:
    """The read after ``event`` meets the cell's traps (:mod:`rram.noise`; cards with
    ``ntrap`` > 0): its resistance times :func:`~rram.noise.read_noise_ratio` at the
    state the operation left, each device's traps from its own stream."""
    column = "r_lrs_ohm" if event == "set" else "r_hrs_ohm"
    read = [j for j, i in enumerate(alive) if np.isfinite(out[column][i])
            and cards["ntrap"][j] > 0]
    if not read:
        return
    from ..noise import read_noise_ratio

    rows = np.array([alive[j] for j in read])
    ratio = read_noise_ratio(cards.take(read), gap[rows] / NM,
                             width[rows] / NM, mc.protocol.v_read,
                             read_streams(mc.seed, [devices[i] for i in rows], cycle, event))
    out[column][rows] *= ratio


def run_devices(mc: MonteCarlo, devices: Sequence[int]) -> pd.DataFrame:
    """Every recorded cycle of ``devices`` (those after ``mc.burn_in``); one row per device
    and cycle (columns ``mc.columns``).

    A device that fails to converge gets ``converged = False`` and the error for that
    cycle and the ones after it (its state is lost); the others go on."""
    devices = [int(d) for d in devices]
    n = len(devices)
    base = mc.card
    # the formed device: its D2D draws (x0 and w0 vary only device to device);
    # afterwards the state carries over
    d2d = draw_d2d(mc.spec, base.values, mc.seed, devices)
    gap = d2d.get("x0", np.full(n, base["x0"])).copy()
    width = d2d.get("w0", np.full(n, base["w0"])).copy()
    # a model with an optional block carries its state (u0, wear0) over as well
    carried = {p: np.full(n, base[p]) for p in carried_states(base.model)}
    # the parameters that set the initial state vary once per device, then carry over
    kinetic = [p for p in mc.spec.parameters if p not in base.model.with_role("state")]
    held = mc.spec.held
    error = [""] * n
    r_before = None  # resistance before each device's SET (the switching rule)
    table: dict[str, list] = {c: [] for c in mc.columns}
    previous = d2d
    run = mc.burn_in + mc.cycles
    paths = slow_paths(mc.spec, mc.seed, devices, run)  # the drift of slow C2C parts
    for cycle in range(run):
        out: dict[str, np.ndarray] = {k: np.full(n, np.nan) for k in _FIGURES}
        # what the range of validity judges, over both operations of the cycle: the peak
        # temperature, the states each ended in, the card (judged once per cycle, so a
        # CF that fills its cell is said once, at its widest)
        peak = np.full(n, -np.inf)
        ends: list[list[tuple[float, float]]] = [[] for _ in range(n)]
        judged: list[dict | None] = [None] * n
        for event in ("set", "reset"):
            values = draw(mc.spec, base.values, mc.seed, devices, cycle, event, d2d,
                          paths[:, cycle])
            # parameters the other operation draws are held from the previous one (the
            # first SET's from the formed device)
            values.update({p: previous[p] for p in values if held.get(p, event) != event})
            previous = values
            for p in mc.spec.parameters:
                out[f"{p}_{event}"] = values[p]
            alive = [i for i in range(n) if not error[i]]
            if not alive:
                continue
            cards = formed_state(CardBatch.of(base, len(alive)), gap[alive], width[alive],
                                 **{p: values[p][alive] for p in kinetic},
                                 **{p: v[alive] for p, v in carried.items()})
            if r_before is None:  # the formed device, read as every state is
                r_before = np.full(n, np.nan)
                r_before[alive] = read_resistance(cards, cards["x0"] / NM, cards["w0"] / NM,
                                                  mc.protocol.v_read)
            st = mc.protocol.phase(event, cycle)
            res = _simulate(mc, st, cards, event)
            ev = res.events
            for j, i in enumerate(alive):
                if res.status[j] != Status.OK:
                    why = dict((d, (w, t)) for d, w, t in res.failures())[j]
                    error[i] = f"{event} of cycle {cycle}: {why[0]} at t = {why[1]:.4g} s"
                    continue
                ev_j = {k: v[j] for k, v in ev.items()}
                t_peak, states = cycle_extremes(ev_j, np.arange(ev["dtmax"].shape[1]),
                                                cards["tamb"][j])
                peak[i] = np.fmax(peak[i], t_peak)
                ends[i] += states
                judged[i] = cards.card(j).values
                gap[i] = ev["gap_end"][j, _END] * NM
                width[i] = ev["width_end"][j, _END] * NM
                for p, v in carried_at_end(base.model, ev, j, _END,
                                           {p: v[i] for p, v in carried.items()}).items():
                    carried[p][i] = v
                v = switching_voltage(ev_j, _SWEEP, event, st)
                if event == "set":
                    out["v_set_V"][i] = v
                    out["i_peak_A"][i] = peak_current(ev_j, _SWEEP)
                    out["r_lrs_ohm"][i] = read_of(ev_j, _PLATEAU)
                else:
                    out["v_reset_V"][i] = v
                    out["i_reset_A"][i] = peak_current(ev_j, _SWEEP[:1])
                    out["t_max_K"][i] = reset_temperature(ev_j, _SWEEP, cards["tamb"][j])
                    out["r_hrs_ohm"][i] = read_of(ev_j, _PLATEAU)
            _read_noise(mc, cards, alive, devices, cycle, event, gap, width, out)
        out["v_set_V"], out["v_reset_V"], out["reason"] = switching_rule(
            out["v_set_V"], out["v_reset_V"], r_before, out["r_lrs_ohm"], out["r_hrs_ohm"])
        r_before = out["r_hrs_ohm"].copy()
        if cycle < mc.burn_in:
            continue
        table["device"] += devices
        table["cycle"] += [cycle] * n
        for k in (*_FIGURES, "reason"):
            table[k] += out[k].tolist()
        table[OUT_OF_RANGE] += [excursion(peak[i], ends[i], judged[i]) if judged[i] else ""
                                for i in range(n)]
        table["converged"] += [not e for e in error]
        table["error"] += list(error)
        for p in mc.spec.parameters:
            for e in ("set", "reset"):
                table[f"{p}_{e}"] += out[f"{p}_{e}"].tolist()
    frame = pd.DataFrame(table, columns=mc.columns)
    return frame.sort_values(["device", "cycle"], kind="stable").reset_index(drop=True)
