"""A measured SET/RESET loop as a stimulus, its simulation, and the figures of merit.

The simulation replays the measured voltage sequence (the instrument's own time stamps)
through the compliance circuit, the SET branch limited to ``icc_set`` and the RESET
branch to ``icc_reset``, and samples the current at the measured points.  V_set and
V_reset are read off data and model by the same rules (:func:`switching_voltages`), so
the comparison is like for like.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..card import Card, formed_card
from ..circuits import check_transistor
from ..constants import NM
from ..engine.run import Options, simulate
from ..engine.stimulus import MAX_AMPLITUDE, Stimulus
from ..errors import InputError
from ..events import DROP, DROP_FLOOR, SET_FRACTION
from ..experiment import DCLoop
from ..status import Status
from .data import IVCurve, check_compliance

#: Currents below this (A) are instrument noise: both sides are floored before the log.
I_FLOOR = 1e-9
#: Points closer to 0 V than this (V) carry no information on the state.
V_MIN = 0.05
#: Time between the end of the SET sweep and the start of the RESET sweep (s).
GAP_S = 1e-3
#: Points of the running median applied to |I| before the switching events are read.
MEDIAN_POINTS = 5


@dataclass(frozen=True)
class MeasuredLoop:
    """SET sweep then RESET sweep of one cycle, with their compliances (A).

    ``steady``: the loop stands for the device's periodic steady state (the median loop
    of many cycles), so its SET starts from the state its own RESET leaves; False for one
    given cycle, whose SET starts from the previous cycle's RESET (its initial state a
    fitted unknown).

    ``v_gate``: a 1T1R cell's loop, the voltages applied across cell and transistor, the
    SET sweep at this gate voltage (V) and the RESET sweep at ``reset_gate`` (default the
    same), the transistor's level-1 parameters ``transistor`` (``kp``, ``wl``, ``vto``);
    ``icc_set`` is then the current the transistor limits the SET to (measured, like a
    compliance).  ``None``: a 1R cell behind a compliance-limited source."""

    set: IVCurve
    reset: IVCurve
    icc_set: float
    icc_reset: float = 0.1
    steady: bool = True
    v_gate: float | None = None
    reset_gate: float | None = None
    transistor: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.set.v_peak * self.reset.v_peak >= 0:
            raise InputError(f"{self.set.source} and {self.reset.source}: the SET and RESET "
                             "sweeps must go to opposite polarities")
        for name in ("icc_set", "icc_reset"):
            # an inferred icc_set above the limit is the data's current in another unit
            check_compliance(getattr(self, name), f"{name} (the {name[4:].upper()} "
                             "compliance; inferred from the data unless given)")
        for name in ("v_gate", "reset_gate"):
            g = getattr(self, name)
            if g is not None and not (math.isfinite(g) and abs(g) <= MAX_AMPLITUDE):
                raise InputError(f"{name} must be within ±{MAX_AMPLITUDE:g} V, got {g!r}")
        if (self.reset_gate is not None or self.transistor) and self.v_gate is None:
            raise InputError("a RESET gate voltage or transistor parameters need the SET's "
                             "gate voltage (--v-gate): the 1T1R circuit")
        object.__setattr__(self, "transistor", check_transistor(self.transistor))

    @property
    def circuit(self) -> str:
        """The circuit the loop is replayed in: ``1t1r`` or ``compliance``."""
        return "compliance" if self.v_gate is None else "1t1r"

    def gates(self, phases: Sequence[str]) -> float | np.ndarray:
        """The gate voltage of each segment of ``phases`` (0 V without a transistor)."""
        if self.v_gate is None:
            return 0.0
        reset = self.v_gate if self.reset_gate is None else self.reset_gate
        return np.array([self.v_gate if ph == "set" else reset for ph in phases])

    @property
    def cycle(self) -> int:
        return self.set.cycle

    @property
    def time(self) -> np.ndarray:
        return np.concatenate([self.set.time, self.set.time[-1] + GAP_S + self.reset.time])

    @property
    def voltage(self) -> np.ndarray:
        return np.concatenate([self.set.voltage, self.reset.voltage])

    @property
    def current(self) -> np.ndarray:
        return np.concatenate([self.set.current, self.reset.current])

    @property
    def is_set(self) -> np.ndarray:
        return np.r_[np.ones(len(self.set.time), bool), np.zeros(len(self.reset.time), bool)]

    @property
    def polarity(self) -> float:
        """+1 for a device that SETs at positive voltage, −1 at negative."""
        return float(np.sign(self.set.v_peak))

    def stimulus(self) -> Stimulus:
        """A :attr:`steady` loop after a burn-in loop (cycle 0, not sampled): the SET that
        is compared starts from the state the model's own RESET leaves, as each measured
        SET starts from the previous cycle's RESET (a periodic steady state; the card's
        initial state ``x0``, ``w0`` only seeds the burn-in).  The burn-in sweeps each
        branch's triangle (to its peak and back in the measured times): the measured
        points are breakpoints the integrator must stop at, the triangle's few are not.
        A loop that is not steady starts from the card's initial state."""
        t, v = self.time, self.voltage
        if v[0] != 0.0:  # start from rest: the states are defined at 0 V
            t, v = np.r_[t[0] - GAP_S, t], np.r_[0.0, v]
        samples = t[-len(self.time):] - t[0]
        t = t - t[0]
        n_set = len(t) - len(self.reset.time)
        icc = np.where(np.arange(len(t) - 1) < n_set - 1, self.icc_set, self.icc_reset)
        phases = tuple("set" if k < n_set - 1 else "reset" for k in range(len(t) - 1))
        if not self.steady:  # one cycle: from the card's initial state
            return Stimulus(t, v, icc, np.ones(len(t) - 1, int), phases, samples,
                            self.gates(phases))
        tb, vb, iccb, phb = [0.0], [0.0], [], []
        for curve, icc_b, name in ((self.set, self.icc_set, "set"),
                                   (self.reset, self.icc_reset, "reset")):
            peak = int(np.argmax(np.abs(curve.voltage)))
            rise = max(curve.time[peak] - curve.time[0], GAP_S)
            fall = max(curve.time[-1] - curve.time[peak], GAP_S)
            tb += [tb[-1] + rise, tb[-1] + rise + fall, tb[-1] + rise + fall + GAP_S]
            vb += [float(curve.voltage[peak]), 0.0, 0.0]
            iccb += [icc_b] * 3
            phb += [name] * 3
        one = tb[-1]  # the compared loop starts here, at rest
        return Stimulus(np.r_[tb[:-1], one + t], np.r_[vb[:-1], v], np.r_[iccb, icc],
                        np.r_[np.zeros(len(iccb), int), np.ones(len(t) - 1, int)],
                        (*phb, *phases), one + samples, self.gates((*phb, *phases)))

    def mask(self) -> np.ndarray:
        """Points that enter the residual (not at rest)."""
        return np.abs(self.voltage) >= V_MIN


def _top(c: IVCurve) -> float:
    """The sweep's top current level: the median of its largest 10 % of |I| (a
    compliance plateau's level, not a spike of overshoot above it)."""
    i = np.sort(np.abs(c.current))
    return float(np.median(i[-max(1, i.size // 10):]))


def _plateau(c: IVCurve) -> int:
    """Points within 1% of the sweep's top level: a compliance plateau is long."""
    i = np.abs(c.current)
    top = _top(c)
    return int(np.sum(np.abs(i - top) <= 0.01 * top))


def build_loops(curves: Sequence[IVCurve], icc_set: float | None = None,
                set_polarity: str = "auto", icc_reset: float = 0.1,
                v_gate: float | None = None, reset_gate: float | None = None,
                transistor: Mapping[str, float] | None = None) -> list[MeasuredLoop]:
    """Pair each cycle's SET and RESET sweeps into :class:`MeasuredLoop` objects.

    ``set_polarity`` is ``negative``, ``positive`` or ``auto`` (the polarity whose sweeps
    sit longest on a current plateau: the compliance).  ``icc_set`` defaults to the
    median over the SET sweeps of their top current level (the instrument's compliance,
    or the transistor's limit; an overshoot spike above the plateau does not count).
    ``v_gate``, ``reset_gate`` and ``transistor``: a 1T1R cell's (see
    :class:`MeasuredLoop`)."""
    if set_polarity not in ("auto", "negative", "positive"):
        raise InputError(f"set polarity {set_polarity!r}: valid are auto, negative, positive")
    by = {-1.0: {}, 1.0: {}}
    for c in curves:
        sign = float(np.sign(c.v_peak))
        if c.cycle in by[sign]:
            raise InputError(f"{c.source}: cycle {c.cycle} has two sweeps of the same polarity")
        by[sign][c.cycle] = c
    if set_polarity == "auto":
        if not by[-1.0] or not by[1.0]:
            raise InputError("the data need sweeps of both polarities (SET and RESET)")
        plateau = {s: np.median([_plateau(c) for c in by[s].values()]) for s in by}
        if plateau[-1.0] == plateau[1.0]:
            raise InputError("cannot tell the SET polarity from the data: pass it "
                             "(--set-polarity negative|positive)")
        sign = max(plateau, key=plateau.get)
    else:
        sign = -1.0 if set_polarity == "negative" else 1.0
    sets, resets = by[sign], by[-sign]
    cycles = sorted(set(sets) & set(resets))
    if not cycles:
        raise InputError("no cycle has both a SET and a RESET sweep")
    if icc_set is None:
        icc_set = float(np.median([_top(sets[n]) for n in cycles]))
    return [MeasuredLoop(sets[n], resets[n], icc_set, icc_reset, v_gate=v_gate,
                         reset_gate=reset_gate, transistor=dict(transistor or {}))
            for n in cycles]


def select_loop(loops: Sequence[MeasuredLoop], cycle: int) -> MeasuredLoop:
    """Cycle ``cycle``'s loop, not :attr:`~MeasuredLoop.steady`."""
    for lp in loops:
        if lp.cycle == cycle:
            return replace(lp, steady=False)
    have = [lp.cycle for lp in loops]
    raise InputError(f"cycle {cycle} has no SET and RESET sweep pair (cycles with both: "
                     f"{have[0]}..{have[-1]}, {len(have)} in all)")


@dataclass(frozen=True)
class LoopSimulation:
    """Per card: current (A) at the measured points, V_set (V) from the engine's
    threshold event (|I| reaching half the SET compliance, located within the
    integrator's steps: continuous in the parameters, unlike a crossing between 10 mV
    data points), and the gap and CF width (nm) at the measured points.  NaN for
    cards that fail."""

    current: np.ndarray
    v_set: np.ndarray
    gap: np.ndarray
    width: np.ndarray


def simulate_loops(loop: MeasuredLoop, cards: Sequence[Card],
                   options: Options | None = None) -> LoopSimulation:
    """The loop's protocol on each card (``options``: the integrator's, default
    :class:`rram.engine.run.Options`)."""
    st = loop.stimulus()
    res = simulate(loop.circuit, st, cards=list(cards), circuit_params=loop.transistor,
                   record=True, options=options or Options())
    out = np.full((len(cards), len(st.sample_times)), np.nan)
    v_set = np.full(len(cards), np.nan)
    set_segments = np.array([ph == "set" for ph in st.phases]) & (st.cycles == st.cycles[-1])
    gap, width = np.full_like(out, np.nan), np.full_like(out, np.nan)
    for d in range(len(cards)):
        # a loop cut short by the step limit still shows its measured part
        if res.status[d] in (Status.OK, Status.MAX_STEPS):
            a = res.device_arrays(d)
            if len(a["current_A"]) == out.shape[1]:
                out[d] = a["current_A"]
                gap[d], width[d] = a["gap_nm"], a["width_nm"]
            t = res.events["tcross"][d][set_segments]
            hit = t[np.isfinite(t)]
            if hit.size:
                v_set[d] = float(st.voltage(hit[0]))
    return LoopSimulation(current=out, v_set=v_set, gap=gap, width=width)


def protocol_of_loop(loop: MeasuredLoop, v_read: float = 0.2) -> DCLoop:
    """The measurement as a DC loop: sweep amplitudes, rate, compliance."""
    dv, dt = np.abs(np.diff(loop.voltage)), np.diff(loop.time)
    moving = dv > 0
    rate = float(np.median(dv[moving] / dt[moving]))
    if loop.v_gate is not None:
        return DCLoop("1t1r", loop.set.v_peak, loop.reset.v_peak, rate, loop.icc_set,
                      v_gate=loop.v_gate, v_read=v_read, reset_gate=loop.reset_gate,
                      transistor=dict(loop.transistor))
    return DCLoop("compliance", loop.set.v_peak, loop.reset.v_peak, rate, loop.icc_set,
                  v_read=v_read)


def steady_card(loop: MeasuredLoop, card: Card, options: Options | None = None) -> Card:
    """``card`` with its initial state (``x0``, ``w0``) the one its own RESET leaves: the
    state the compared loop of :func:`simulate_loops` starts from, after the burn-in.
    A loop simulated from this card anywhere (``rram sweep``, ngspice, Verilog-A) starts
    in its periodic steady state, as the measured cycles do."""
    sim = simulate_loops(loop, [card], options)
    gap, width = sim.gap[0, 0], sim.width[0, 0]
    if not (np.isfinite(gap) and np.isfinite(width)):
        return card  # the loop failed: nothing to take the state from
    return formed_card(card, gap * NM, width * NM)


def log_residual(model_i: np.ndarray, data_i: np.ndarray) -> np.ndarray:
    """log₁₀|I_model| − log₁₀|I_data|, both floored at :data:`I_FLOOR`."""
    return (np.log10(np.maximum(np.abs(model_i), I_FLOOR))
            - np.log10(np.maximum(np.abs(data_i), I_FLOOR)))


def switching_voltages(loop: MeasuredLoop, current: np.ndarray) -> tuple[float, float]:
    """(V_set, V_reset) of a current trace on the loop's points.

    V_set: where |I| first reaches half the SET compliance on the SET sweep's way out;
    V_reset: where |I| first falls below 0.9 of its running peak on the RESET sweep's way
    out (the engines' ``tcross`` and ``tdrop`` events).  Linear interpolation; NaN when
    the event does not happen.  |I| is first smoothed by a running median of
    :data:`MEDIAN_POINTS` points, so one noisy reading (an instrument's few per cent) is
    no RESET; a smooth model current passes unchanged to within its curvature."""
    n = len(loop.set.time)
    v, i = loop.voltage, _running_median(np.abs(current), MEDIAN_POINTS)
    out = []
    for lo, hi, rule in ((0, n, "set"), (n, len(v), "reset")):
        top = lo + int(np.argmax(np.abs(v[lo:hi])))
        # from the first point off rest: noise near 0 V is no switching event
        first = lo + int(np.argmax(np.abs(v[lo:top + 1]) >= V_MIN))
        vv, ii = v[first:top + 1], i[first:top + 1]
        if rule == "set":
            hit = np.flatnonzero(ii >= SET_FRACTION * loop.icc_set)
        else:
            peak = np.maximum.accumulate(ii)
            hit = np.flatnonzero((ii < DROP * peak) & (peak >= DROP_FLOOR))
        if not len(hit) or hit[0] == 0:
            out.append(np.nan)
            continue
        k = hit[0]
        target = SET_FRACTION * loop.icc_set if rule == "set" else DROP * peak[k - 1]
        f = (target - ii[k - 1]) / (ii[k] - ii[k - 1]) if ii[k] != ii[k - 1] else 1.0
        out.append(float(vv[k - 1] + np.clip(f, 0, 1) * (vv[k] - vv[k - 1])))
    return out[0], out[1]


def set_completion_voltage(loop: MeasuredLoop, current: np.ndarray,
                           fraction: float = 0.9) -> float:
    """Where |I| first reaches ``fraction`` of the SET compliance on the SET sweep's way
    out (after the same running median as :func:`switching_voltages`): with V_set, the
    SET's abruptness.  NaN when it is never reached."""
    n = len(loop.set.time)
    v, i = loop.voltage[:n], _running_median(np.abs(current[:n]), MEDIAN_POINTS)
    top = int(np.argmax(np.abs(v)))
    vv, ii = v[:top + 1], i[:top + 1]
    hit = np.flatnonzero(ii >= fraction * loop.icc_set)
    if not hit.size or hit[0] == 0:
        return float("nan")
    k = hit[0]
    f = (fraction * loop.icc_set - ii[k - 1]) / (ii[k] - ii[k - 1]) if ii[k] != ii[k - 1] \
        else 1.0
    return float(vv[k - 1] + np.clip(f, 0, 1) * (vv[k] - vv[k - 1]))


def _running_median(x: np.ndarray, k: int) -> np.ndarray:
    """Centred running median of odd width ``k`` (the ends use the points there are);
    a trace of fewer than 10·k points is too coarse to filter and is returned as is."""
    if k <= 1 or x.size < 10 * k:
        return x
    pad = k // 2
    padded = np.pad(x, pad, mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, k)
    return np.median(windows, axis=1)


def read_resistances(loop: MeasuredLoop, current: np.ndarray, v_read: float = 0.2
                     ) -> tuple[float, float]:
    """(R_LRS, R_HRS) read at |V| = ``v_read`` on the way back of the SET and RESET
    sweeps (as the instrument extracts them)."""
    n = len(loop.set.time)
    v, i = loop.voltage, current
    out = []
    for lo, hi in ((0, n), (n, len(v))):
        top = lo + int(np.argmax(np.abs(v[lo:hi])))
        vb, ib = np.abs(v[top:hi])[::-1], np.abs(i[top:hi])[::-1]
        out.append(float(v_read / np.interp(v_read, vb, ib)) if vb[-1] >= v_read else np.nan)
    return out[0], out[1]


def trace_metrics(loop: MeasuredLoop, current: np.ndarray | None = None) -> dict[str, float]:
    """V_set, V_reset, R_LRS and R_HRS of a current trace on the loop's points (the
    data's, or a model's), by the rules of :mod:`rram.metrics`."""
    cur = loop.current if current is None else current
    v_set, v_reset = switching_voltages(loop, cur)
    r_lrs, r_hrs = read_resistances(loop, cur)
    return {"v_set_V": v_set, "v_reset_V": v_reset, "r_lrs_ohm": r_lrs, "r_hrs_ohm": r_hrs}


def median_cycle(loops: Sequence[MeasuredLoop]) -> MeasuredLoop:
    """The loop whose V_set, V_reset, ln R_LRS and ln R_HRS lie closest to the medians
    of all loops (each in units of its spread, the median absolute deviation)."""
    if not loops:
        raise InputError("no loops to choose a median cycle from")
    rows = np.array([[m["v_set_V"], m["v_reset_V"], np.log(m["r_lrs_ohm"]),
                      np.log(m["r_hrs_ohm"])] for m in map(trace_metrics, loops)])
    ok = np.all(np.isfinite(rows), axis=1)
    if not ok.any():
        raise InputError("no loop switches (V_set, V_reset, R_LRS and R_HRS all found)")
    med = np.median(rows[ok], axis=0)
    mad = np.median(np.abs(rows[ok] - med), axis=0)
    dist = np.where(ok, np.sum(((rows - med) / np.where(mad > 0, mad, 1.0)) ** 2, axis=1),
                    np.inf)
    return loops[int(np.argmin(dist))]


def simulate_loop_spice(loop: MeasuredLoop, card: Card, model: str = "osdi") -> np.ndarray:
    """Current (A) at the measured points from ngspice (``model``: ``osdi`` for the
    Verilog-A build, ``subckt`` for the subcircuit) with ``card`` as exported."""
    from ..spice import simulate_spice

    stimulus = loop.stimulus()
    res = simulate_spice(loop.circuit, stimulus, cards=[card],
                         circuit_params=loop.transistor, model=model)
    res.raise_on_failure()
    a = res.device_arrays(0)
    return np.interp(stimulus.sample_times, a["time_s"], a["current_A"])
