"""A pulse record (:mod:`.pulses`) as a measurement the staged fit fits (the fit:
:mod:`.pulse_fit`).

The residual of a card is log₁₀ R_model − log₁₀ R_data on the reads of the stage's
points (``all``; ``lrs``: the reads after SET pulses from a sequence's SET on;
``hrs``: the reads of SET sequences before their SET; ``reset``: the reads after RESET
pulses) and each SET staircase's switching amplitude in units of
``recipe.voltage_scale`` (weighed by the stage's ``voltage_weight``, at least 1).

A SET is abrupt: the read after a pulse is the HRS or the LRS, and which pulse switches
moves in whole steps as a parameter moves.  Model and data are judged by one rule: a
sequence SETs where its reads first fall through the geometric middle of the data's
HRS and LRS (:func:`data_switch`, :func:`crossing`); the reads on opposite sides of the
two SETs are left out (:meth:`PulseMeasurement.unlike_states`).  The data say only that
the SET happened within a step, so where the rule puts the model's SET in another pulse
the switching residual is the model's distance outside the data's step — from the time
the current first reached half the limit within that pulse (the engine's ``tcross``),
smooth in the parameters as the SET moves within a pulse, where the reads are flat —
and zero where the rule agrees, so the true card scores the noise of its reads alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..card import Card, CardBatch, carried_at_end, carried_states, formed_state
from ..circuits import saturation_current
from ..constants import NM
from ..engine.run import Options, simulate
from ..errors import InputError
from ..events import SET_FRACTION
from ..status import Status
from .objective import FAILED_RESIDUAL
from .pulses import PulseRecord
from .recipe import Recipe, Stage

#: A sequence whose reads fall by at least this factor holds a SET.
SET_RATIO = 3.0
#: A RESET staircase's switching amplitude: where its reads first reach this multiple of
#: the first read.
RESET_RATIO = 2.0


def set_polarity(record: PulseRecord) -> float:
    """+1 when the pulses that SET are positive, −1 when negative: the sign of the
    pulses after which a read falls by :data:`SET_RATIO` or more from the one before
    (summed over the record in log R, so one noisy read decides nothing)."""
    r = np.log(np.asarray(record.resistance, float))
    change = {1.0: 0.0, -1.0: 0.0}
    for idx in record.sequences:
        prev = np.nan
        for k in idx:
            if np.isfinite(r[k]):
                sign = float(np.sign(record.v_pulse[k]))
                if np.isfinite(prev) and sign and prev - r[k] >= math.log(SET_RATIO):
                    change[sign] += prev - r[k]
                prev = r[k]
    if change[1.0] == change[-1.0]:
        raise InputError(f"{record.source}: cannot tell the SET polarity from the reads "
                         f"(no pulse lowers the resistance {SET_RATIO:g}-fold, or pulses "
                         "of both signs do alike): give it (--set-polarity)")
    return 1.0 if change[1.0] > change[-1.0] else -1.0


@dataclass(frozen=True)
class Switch:
    """The SET of a sequence: the position in the sequence of its first pulse read in
    the LRS, the amplitude of the SET pulse read before it (0 V for the first) and its
    own — the SET happened within that step — and the level (ln Ω) a read falls
    through at the SET: the geometric middle of the sequence's HRS and LRS."""

    position: int
    low: float
    high: float
    level: float = float("nan")

    @property
    def middle(self) -> float:
        return 0.5 * (self.low + self.high)

    def outside(self, amplitude: float) -> float:
        """How far (V) ``amplitude`` lies beyond the step (0 within it; negative
        below)."""
        lo, hi = sorted((self.low, self.high))
        return max(amplitude - hi, 0.0) - max(lo - amplitude, 0.0)


def data_switch(record: PulseRecord, pulses: np.ndarray, r: np.ndarray, sign: float
                ) -> Switch | None:
    """The :class:`Switch` of the first SET-polarity pulse whose read is below the
    geometric middle of the sequence's highest read before it and its lowest read after.
    None when the sequence holds no SET (reads falling less than :data:`SET_RATIO`)."""
    is_set = np.sign(record.v_pulse[pulses]) == sign
    rr = np.asarray(r, float)[pulses]
    read = np.isfinite(rr) & is_set
    if read.sum() < 2:
        return None
    first = int(np.flatnonzero(read)[0])
    hi, lo = np.nanmax(rr[: first + 1]), np.nanmin(rr[read])
    if hi / lo < SET_RATIO:
        return None
    middle = math.sqrt(hi * lo)
    k = int(np.flatnonzero(read & (rr <= middle))[0])
    prev = [j for j in range(k) if read[j]]
    a_prev = float(record.v_pulse[pulses[prev[-1]]]) if prev else 0.0
    return Switch(k, a_prev, float(record.v_pulse[pulses[k]]), math.log(middle))


def crossing(record: PulseRecord, pulses: np.ndarray, r: np.ndarray, sign: float,
             level: float) -> tuple[int, float]:
    """(position, amplitude) where the reads after the SET pulses of ``pulses`` first
    fall through ``level`` (ln Ω), the amplitude interpolated in ln R between that read
    and the one before (from 0 V for the first): continuous in the reads, and so in a
    card's parameters, as the crossing moves from one pulse to the next (at the
    boundary both sides give the pulse's amplitude).  (−1, NaN) when they never do."""
    is_set = np.sign(record.v_pulse[pulses]) == sign
    lr = np.log(np.asarray(r, float)[pulses])
    read = np.flatnonzero(np.isfinite(lr) & is_set)
    below = [j for j in read if lr[j] <= level]
    if not below:
        return -1, float("nan")
    k = int(below[0])
    a_k = float(record.v_pulse[pulses[k]])
    prev = read[read < k]
    if not prev.size:
        return k, a_k
    p = int(prev[-1])
    f = (lr[p] - level) / (lr[p] - lr[k])
    a_p = float(record.v_pulse[pulses[p]])
    return k, a_p + float(np.clip(f, 0.0, 1.0)) * (a_k - a_p)


def reset_amplitude(record: PulseRecord, pulses: np.ndarray, r: np.ndarray, sign: float
                    ) -> float:
    """Amplitude (V) where the reads after RESET pulses first reach :data:`RESET_RATIO`
    times the first of them (log-linear between reads); NaN if they never do."""
    is_reset = (np.sign(record.v_pulse[pulses]) == -sign) & np.isfinite(r[pulses])
    if is_reset.sum() < 2:
        return float("nan")
    a = record.v_pulse[pulses][is_reset]
    lr = np.log(np.asarray(r, float)[pulses][is_reset])
    level = lr[0] + math.log(RESET_RATIO)
    hit = np.flatnonzero(lr >= level)
    if not hit.size:
        return float("nan")
    k = int(hit[0])
    f = (level - lr[k - 1]) / (lr[k] - lr[k - 1])
    return float(a[k - 1] + f * (a[k] - a[k - 1]))


@dataclass(frozen=True)
class PulseSimulation:
    """Per card: the resistance read after each pulse (Ω, NaN where not read or the run
    failed) and, per sequence, where the current first reached half the limit in a SET
    pulse: the position of that pulse in the sequence (−1: never) and the amplitude
    ``a_prev + f·(a_k − a_prev)``, ``f`` the elapsed fraction of the pulse (V, NaN:
    never), smooth in the parameters as the SET moves within a pulse."""

    resistance: np.ndarray
    v_switch: np.ndarray
    switch_at: np.ndarray


def _thresholds(record: PulseRecord, st_gates: np.ndarray, n: int) -> np.ndarray | None:
    """Per segment, the current that marks a SET: half the transistor's saturation
    current at the segment's gate (1T1R), else half the compliance (the default)."""
    if record.circuit != "1t1r":
        return None
    i_sat = saturation_current(st_gates, record.transistor)
    thr = np.where(i_sat > 0, SET_FRACTION * i_sat, 1.0)
    return np.broadcast_to(thr, (n, len(thr))).copy()


def initial_state(record: PulseRecord, card: Card) -> tuple[float, float]:
    """The (gap, width) (m) the record starts from: ``card``'s programmed LRS or HRS, or
    its ``x0``, ``w0`` (:attr:`PulseRecord.start`).  A fit takes it from its start card
    and holds it: the record's cell was where it was, whatever card describes it."""
    gap, width = {"lrs": ("xlrs", "wlrs"), "hrs": ("xhrs", "whrs"),
                  "card": ("x0", "w0")}[record.start]
    return float(card[gap]), float(card[width])


def simulate_pulses(record: PulseRecord, cards: Sequence[Card], sign: float,
                    initial: tuple[float, float], options: Options | None = None
                    ) -> PulseSimulation:
    """The record's sequences on each card (``sign``: the SET polarity), one batched
    run per sequence, from the state ``initial`` (gap, width; m): each sequence from
    where the one before it ended (:attr:`PulseRecord.chain`), or each from
    ``initial``."""
    n = len(cards)
    res_out = np.full((n, len(record.v_pulse)), np.nan)
    v_sw = np.full((n, len(record.sequences)), np.nan)
    at = np.full((n, len(record.sequences)), -1)
    batch = CardBatch.of(list(cards))
    gap, width = np.full(n, initial[0]), np.full(n, initial[1])
    # a model with an optional block chains its state (u0, wear0) as it chains the gap
    carried = {p: batch[p].copy() for p in carried_states(batch.model)}
    alive = np.ones(n, bool)
    for s, idx in enumerate(record.sequences):
        st, first = record.stimulus(idx)
        res = simulate(record.circuit, st, cards=formed_state(batch, gap, width,
                                                              state=np.zeros(n),
                                                              **carried),
                       circuit_params=record.circuit_params(), options=options or Options(),
                       thresholds=_thresholds(record, st.gates, n))
        is_set = np.sign(record.v_pulse[idx]) == sign
        for d in range(n):
            if not alive[d] or res.status[d] != Status.OK:
                alive[d] = False  # a chained record has no state to go on from
                continue
            a = res.device_arrays(d)
            if len(a["current_A"]) != len(idx):
                alive[d] = False
                continue
            v = a["v_cell_V"] if record.read == "cell" else np.full(len(idx), record.v_read)
            res_out[d, idx] = np.abs(v / a["current_A"])
            tc, a_prev = res.events["tcross"][d], 0.0
            for j, k in enumerate(idx):
                if not is_set[j]:
                    continue
                segs = slice(first[j], first[j] + 3)  # rise, flat top, fall
                hit = tc[segs][np.isfinite(tc[segs])]
                if hit.size:
                    t0, t1 = st.times[first[j]], st.times[first[j] + 3]
                    f = float(np.clip((hit[0] - t0) / (t1 - t0), 0.0, 1.0))
                    v_sw[d, s], at[d, s] = a_prev + f * (record.v_pulse[k] - a_prev), j
                    break
                a_prev = float(record.v_pulse[k])
        if record.chain:
            gap = np.where(alive, res.events["gap_end"][:, -1] * NM, initial[0])
            width = np.where(alive, res.events["width_end"][:, -1] * NM, initial[1])
            ended = carried_at_end(batch.model, res.events, slice(None), -1, carried)
            carried = {p: np.where(alive, ended[p], v) for p, v in carried.items()}
            alive &= np.isfinite(gap) & np.isfinite(width)
            gap, width = np.nan_to_num(gap, nan=initial[0]), np.nan_to_num(width,
                                                                            nan=initial[1])
        else:
            alive[:] = True
    return PulseSimulation(res_out, v_sw, at)


@dataclass(frozen=True)
class PulseMeasurement:
    """A pulse record as a :class:`~.objective.Measurement` (``sign``: the SET
    polarity, from the data by default)."""

    record: PulseRecord
    #: the (gap, width) (m) the record starts from (:func:`initial_state`)
    initial: tuple[float, float]
    sign: float = 0.0
    point_sets: tuple[str, ...] = ("all", "lrs", "hrs", "reset")

    def __post_init__(self) -> None:
        if self.sign == 0.0:
            object.__setattr__(self, "sign", set_polarity(self.record))

    @property
    def log_r(self) -> np.ndarray:
        return np.log10(np.asarray(self.record.resistance, float))

    def point_mask(self, points: str) -> np.ndarray:
        reads = self.record.reads
        is_set = np.sign(self.record.v_pulse) == self.sign
        after = np.zeros_like(reads)
        before = np.zeros_like(reads)
        for idx, sw in zip(self.record.sequences, self.switches(), strict=True):
            if sw is not None:
                after[idx[sw.position:]] = True
                before[idx[:sw.position]] = True
        is_reset = np.sign(self.record.v_pulse) == -self.sign  # a 0 V "pulse": a read
        return {"all": reads, "lrs": reads & is_set & after, "hrs": reads & before,
                "reset": reads & is_reset}[points]

    def switches(self) -> list[Switch | None]:
        """The data's SET per sequence (:func:`data_switch`)."""
        return [data_switch(self.record, idx, self.record.resistance, self.sign)
                for idx in self.record.sequences]

    def simulate(self, cards: Sequence[Card], options: Options | None) -> PulseSimulation:
        return simulate_pulses(self.record, cards, self.sign, self.initial, options)

    def rows(self, cards: Sequence[Card | None], mask: np.ndarray, stage: Stage,
             recipe: Recipe, options: Options | None) -> np.ndarray:
        data_sw = self.switches()
        # the reads on opposite sides of a SET are left to the switching amplitude's
        # rows (:meth:`unlike_states`), so every stage has them, at weight 1 or more
        weight = max(stage.voltage_weight, 1.0)
        n_rows = int(mask.sum()) + len(data_sw)
        good = [c for c in cards if c is not None]
        sim = self.simulate(good, options) if good else None
        rows, j = [], 0
        for c in cards:
            if c is None:
                rows.append(np.full(n_rows, FAILED_RESIDUAL))
                continue
            model_r = sim.resistance[j]
            switched = [crossing(self.record, idx, model_r, self.sign, d.level) if d
                        else (-1, np.nan)
                        for idx, d in zip(self.record.sequences, data_sw, strict=True)]
            r = np.log10(model_r) - self.log_r
            r = np.where(np.isfinite(r), r, FAILED_RESIDUAL)
            r[self.unlike_states([k for k, _ in switched])] = 0.0
            dv = [self._switch_row(d, kr, ar, sim.switch_at[j, q], sim.v_switch[j, q])
                  / recipe.voltage_scale
                  for q, (d, (kr, ar)) in enumerate(zip(data_sw, switched, strict=True))]
            j += 1
            rows.append(np.r_[r[mask], weight * np.array(dv)])
        return np.array(rows)

    @staticmethod
    def _switch_row(data: Switch | None, k_read: int, a_read: float, k_current: int,
                    a_current: float) -> float:
        """The switching residual of one sequence (V): zero where the model's reads
        fall through the data's level after the data's pulse (one rule for both, so the
        true card scores zero); else the model's distance outside the data's step, from
        the time its current reached half the limit when that happened in the pulse its
        reads say (smooth in the parameters), else from its reads (continuous, flat
        within a pulse); 1 V when it never SETs."""
        if data is None:
            return 0.0  # the data show no SET there
        if k_read == data.position:
            return 0.0
        m = a_current if k_current == k_read >= 0 else a_read if k_read >= 0 else \
            a_current
        return data.outside(m) if np.isfinite(m) else 1.0

    def unlike_states(self, switch_at: Sequence[int]) -> np.ndarray:
        """The reads where the model and the data are on opposite sides of a SET (the
        model's reads fall through the data's level after an earlier or a later pulse):
        their log R residual jumps by the window as the switching pulse moves, so they
        are left to the switching amplitude's residual.  A model that never SETs keeps
        them: their residual, continuous, pulls it towards the SET."""
        out = np.zeros(len(self.record.v_pulse), bool)
        for idx, sw, k in zip(self.record.sequences, self.switches(), switch_at,
                              strict=True):
            if sw is None or k < 0:
                continue
            out[idx[min(k, sw.position):max(k, sw.position)]] = True
        return out

    def rms(self, resistance: np.ndarray, reads: np.ndarray | None = None) -> float:
        """RMS log₁₀ error (dec) of ``resistance`` over the record's reads (or those of
        ``reads``)."""
        r = (np.log10(resistance) - self.log_r)[self.record.reads if reads is None
                                                 else reads]
        return float(np.sqrt(np.mean(np.where(np.isfinite(r), r, FAILED_RESIDUAL) ** 2)))

    def switching(self, resistance: np.ndarray) -> tuple[float, float]:
        """(mean SET amplitude over the SET sequences, mean RESET amplitude over the
        RESET sequences) of reads ``resistance`` (V), by the data's rules."""
        sets, resets = [], []
        for idx in self.record.sequences:
            sw = data_switch(self.record, idx, resistance, self.sign)
            if sw is not None:
                sets.append(sw.middle)
            ra = reset_amplitude(self.record, idx, np.asarray(resistance, float), self.sign)
            if np.isfinite(ra):
                resets.append(ra)
        return (float(np.mean(sets)) if sets else float("nan"),
                float(np.mean(resets)) if resets else float("nan"))

    def figures(self, card: Card, options: Options | None) -> np.ndarray:
        r = self.simulate([card], options).resistance[0]
        return np.array([self.rms(r), *self.switching(r)])

    def switching_points(self) -> np.ndarray:
        # a read is a state after a whole pulse, not a sample inside an event: every
        # read stays (the switching amplitudes are weighed by their own rows)
        return np.zeros(len(self.record.reads), bool)


def trends(record: PulseRecord, resistance: np.ndarray, sign: float
           ) -> dict[str, dict[float, float]]:
    """The staircases' trends from reads ``resistance``: ``set_by_gate`` (or
    ``set_by_compliance``), the last read of each SET staircase against its gate
    voltage (V) or compliance (A); ``reset_by_amplitude``, each read after a RESET
    pulse against the pulse's amplitude (V; the median over sequences)."""
    r = np.asarray(resistance, float)
    by_limit: dict[float, list[float]] = {}
    by_amp: dict[float, list[float]] = {}
    limits = record.gates if record.circuit == "1t1r" else np.asarray(record.icc, float)
    for idx in record.sequences:
        sw = data_switch(record, idx, record.resistance, sign)
        if sw is not None:
            read = idx[np.isfinite(r[idx]) & (np.sign(record.v_pulse[idx]) == sign)]
            if read.size:  # (a failed model run reads nothing)
                by_limit.setdefault(float(limits[read[-1]]), []).append(float(r[read[-1]]))
            continue
        for k in idx[(np.sign(record.v_pulse[idx]) == -sign) & np.isfinite(r[idx])]:
            by_amp.setdefault(float(record.v_pulse[k]), []).append(float(r[k]))
    key = "set_by_gate" if record.circuit == "1t1r" else "set_by_compliance"
    return {key: {g: float(np.median(v)) for g, v in sorted(by_limit.items())},
            "reset_by_amplitude": {a: float(np.median(v)) for a, v in
                                   sorted(by_amp.items(), key=lambda kv: abs(kv[0]))}}
