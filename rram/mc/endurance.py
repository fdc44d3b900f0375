"""Endurance: the window of pulsed SET/RESET cycles up to 10⁶ cycles, and how it fails.

Each simulated cycle is two runs of the cell (:class:`~rram.engine.stimulus.PulseCycle`:
a SET pulse, then a RESET pulse), each with the parameters in effect for that operation
(the card, the device's D2D draw, the operation's C2C draw: :mod:`rram.mc.draws`), the
state carried from one to the next (gap, width and the optional blocks' states, the wear
among them), and the cell read after each (R_LRS, R_HRS at ``v_read``).

A model with wear-out (:mod:`rram.equations.wear`) changes over 10⁴–10⁶ cycles only
through its wear D, which each cycle moves by a small ΔD; every other state returns
within a cycle to where the pulses put it.  With ``skip`` the run therefore jumps: after
a simulated cycle it advances the device by J cycles and its wear by J·ΔD, with J set so
that no jump moves D by more than ``max_wear_step`` (the reservoir's bound by as much) or
the SET barrier by more than ``max_barrier_step`` (eV), and at most doubling from one jump
to the next.  A jump is the forward-Euler step of the slow map D → D + ΔD(D); the cycles
it skips repeat the simulated one.  :func:`closure_cycle` gives the cycle at which a card's
window closes from its parameters alone (docs/model.md §11), against which both the
every-cycle run and the jumps are tested (tests/test_wear.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from ..card import Card, CardBatch, carried_at_end, carried_states, formed_state
from ..constants import NM
from ..engine.static import read_resistance
from ..engine.stimulus import PulseCycle
from ..errors import InputError
from ..experiment import simulate_with
from ..resources import MiB, require_memory
from ..status import Status
from ..variation import VariationSpec
from .draws import draw, draw_d2d
from .run import check_study

#: The table of an endurance run: one row per device and simulated cycle.
ENDURANCE_COLUMNS = ("device", "cycle", "jump", "r_lrs_ohm", "r_hrs_ohm", "window", "wear",
                     "gap_lrs_nm", "width_lrs_nm", "gap_hrs_nm", "width_hrs_nm",
                     "converged", "error")
#: Memory of the run (bytes): the engine's batch of one operation per device, and each
#: table row (13 columns of Python objects, ~40 B each, and the frame made from them).
RUN_BASE, BYTES_PER_DEVICE, BYTES_PER_ROW = 300 * MiB, 40_000, 1_000
#: The state columns after each operation: what an array of cycled cells is read in.
STATE_COLUMNS = {"set": ("gap_lrs_nm", "width_lrs_nm"), "reset": ("gap_hrs_nm", "width_hrs_nm")}
#: The R_HRS/R_LRS below which a window is closed.
CLOSED_WINDOW = 2.0
#: Failure modes of a device whose window closed: it reads low after the RESET (the
#: RESET no longer opens the gap) or high after the SET (the SET no longer closes it).
STUCK_LRS, STUCK_HRS = "stuck-LRS", "stuck-HRS"
#: A device whose first cycle already reads a closed window: the pulses do not switch it
#: (too weak a RESET or SET for its card), which no wear-out explains.
NO_WINDOW = "no-window"


@dataclass(frozen=True)
class Endurance:
    """``devices`` cells of ``card`` cycled ``cycles`` times by ``protocol``.

    ``spec``: D2D and C2C variation (fast C2C only: a slow part or a mode follows every
    cycle, which a jump skips); ``skip``: jump over cycles (module docstring) or simulate
    every one; ``closed_window``: the R_HRS/R_LRS below which the window is closed."""

    card: Card
    cycles: int = 10**6
    devices: int = 1
    seed: int = 0
    spec: VariationSpec | None = None
    protocol: PulseCycle = field(default_factory=PulseCycle)
    engine: str = "python"
    skip: bool = True
    max_wear_step: float = 0.01
    max_barrier_step: float = 0.005
    closed_window: float = CLOSED_WINDOW

    def __post_init__(self) -> None:
        check_study(self, (("cycles", 1, 10**9), ("devices", 1, 10**6)))
        for name, lo, hi in (("max_wear_step", 1e-6, 1.0), ("max_barrier_step", 1e-6, 1.0),
                             ("closed_window", 1.0 + 1e-9, 1e3)):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise InputError(f"{name} must be in [{lo:g}, {hi:g}], got {v!r}")
        if self.spec is not None:
            if any(v.slow for v in self.spec.of_kind("c2c")) or self.spec.mode is not None \
                    or self.spec.episodes is not None:
                raise InputError("an endurance run jumps over cycles: its variation spec "
                                 "takes D2D and fast C2C entries only (no slow part, no "
                                 "mode, no episodes); run rram.mc.MonteCarlo for those")
            unknown = set(self.spec.parameters) - set(self.card.model.parameter_names)
            if unknown:
                raise InputError("the variation spec varies parameter(s) the card's model "
                                 "does not have: " + ", ".join(sorted(unknown)))

    def fingerprint(self) -> dict:
        """What identifies the run (its provenance)."""
        from .. import __version__

        spec = None if self.spec is None else hashlib.sha256(
            self.spec.to_json().encode()).hexdigest()
        return {"rram_version": __version__, "card_sha256": self.card.digest,
                "variation_sha256": spec, "cycles": int(self.cycles),
                "devices": int(self.devices), "seed": int(self.seed), "engine": self.engine,
                "protocol": asdict(self.protocol), "skip": self.skip,
                "max_wear_step": self.max_wear_step,
                "max_barrier_step": self.max_barrier_step}


@dataclass(frozen=True)
class EnduranceResult:
    """The simulated cycles (:data:`ENDURANCE_COLUMNS`), each device's failure
    (:meth:`failures`) and the run's provenance."""

    table: pd.DataFrame
    study: Endurance
    provenance: dict

    def states_at(self, cycle: int) -> pd.DataFrame:
        """Per device (in device order), the LRS and HRS states (nm) of its last simulated
        cycle at or before ``cycle`` (a jump's cycles repeat it)."""
        t = self.table[self.table["cycle"] <= cycle]
        if t.empty or t["device"].nunique() != self.study.devices:
            raise InputError(f"cycle {cycle}: before the first simulated cycle of every "
                             "device")
        return t.groupby("device", sort=True).last()[
            [c for pair in STATE_COLUMNS.values() for c in pair]]

    def failures(self) -> pd.DataFrame:
        """Per device: the cycle its window closed and the failure mode there
        (:func:`failure_of`)."""
        rows = [(device, *failure_of(t, self.study.closed_window))
                for device, t in self.table.groupby("device", sort=True)]
        return pd.DataFrame(rows, columns=["device", "closure_cycle", "mode"])


def failure_of(t: pd.DataFrame, closed_window: float = CLOSED_WINDOW) -> tuple[float, str]:
    """One device's rows (``cycle``, ``r_lrs_ohm``, ``r_hrs_ohm``, in cycle order): the
    first cycle whose R_HRS/R_LRS is below ``closed_window`` (NaN: none) and the failure
    mode there, :data:`STUCK_HRS` if the cell reads above the geometric middle of its
    first cycle's R_LRS and R_HRS after its SET, else :data:`STUCK_LRS` (empty: none);
    :data:`NO_WINDOW` if that is its first cycle."""
    first = t.iloc[0]
    middle = np.sqrt(first["r_lrs_ohm"] * first["r_hrs_ohm"])
    closed = t[t["r_hrs_ohm"] / t["r_lrs_ohm"] < closed_window]
    if closed.empty:
        return np.nan, ""
    c = closed.iloc[0]
    if c.name == first.name:
        return float(c["cycle"]), NO_WINDOW
    return float(c["cycle"]), STUCK_HRS if c["r_lrs_ohm"] > middle else STUCK_LRS


def _values(study: Endurance, devices: np.ndarray, cycles: np.ndarray, event: str,
            d2d: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The varied parameters of ``devices``, each at its own cycle, for ``event``."""
    spec = study.spec
    if spec is None:
        return {}
    out = {p: np.empty(devices.size) for p in spec.parameters}
    for j, (d, c) in enumerate(zip(devices, cycles, strict=True)):
        row = {p: v[d:d + 1] for p, v in d2d.items()}
        for p, v in draw(spec, study.card.values, study.seed, [int(d)], int(c), event,
                         row).items():
            out[p][j] = v[0]
    return out


def _jump(study: Endurance, ews: np.ndarray, dwear: np.ndarray, last: np.ndarray,
          left: np.ndarray) -> np.ndarray:
    """Cycles to advance each device: the wear may move by ``max_wear_step`` and the SET
    barrier by ``max_barrier_step`` per jump, the jump at most double the last one."""
    if not study.skip:
        return np.ones_like(last)
    limit = np.minimum(study.max_wear_step,
                       study.max_barrier_step / np.maximum(ews, 1e-300))
    with np.errstate(divide="ignore", invalid="ignore"):
        allowed = np.where(dwear > 0, np.floor(limit / dwear), np.inf)
    jump = np.clip(np.minimum(allowed, 2 * last), 1, None)
    return np.minimum(jump, left).astype(np.int64)


def least_rows(study: Endurance) -> int:
    """The fewest simulated cycles per device: every cycle, or jumps that double."""
    return study.cycles if not study.skip else min(study.cycles,
                                                   int(np.log2(study.cycles)) + 2)


def run_bytes(study: Endurance) -> float:
    """A lower bound of the run's resident memory (bytes): :func:`least_rows`."""
    return RUN_BASE + study.devices * (BYTES_PER_DEVICE + BYTES_PER_ROW * least_rows(study))


def require_room(study: Endurance) -> None:
    """Refuse a run whose :func:`run_bytes` exceeds the memory left."""
    require_memory(f"an endurance run of {study.devices} devices x {study.cycles} cycles",
                   run_bytes(study), "use fewer devices")


def run_endurance(study: Endurance, progress: bool = False) -> EnduranceResult:
    """Cycle every device to ``study.cycles`` (module docstring); a device whose run fails
    to converge stops there, with the error in its last row."""
    base = study.card
    n = study.devices
    require_room(study)
    ids = np.arange(n)
    d2d = draw_d2d(study.spec, base.values, study.seed, ids) if study.spec else {}
    gap = np.asarray(d2d.get("x0", np.full(n, base["x0"])), float).copy()
    width = np.asarray(d2d.get("w0", np.full(n, base["w0"])), float).copy()
    carried = {p: np.full(n, base[p]) for p in carried_states(base.model)}
    wearing = "wear0" in carried
    kinetic = [p for p in (study.spec.parameters if study.spec else ())
               if p not in base.model.with_role("state")]
    cycle = np.zeros(n, np.int64)
    last = np.ones(n, np.int64)
    error = [""] * n
    sign = float(base["polarity"])
    table: dict[str, list] = {c: [] for c in ENDURANCE_COLUMNS}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n * study.cycles, unit="cycle", desc="endurance")
    try:  # the bar closes before an interrupt's one-line message
        while True:
            idx = np.flatnonzero((cycle < study.cycles) & np.array([not e for e in error]))
            if not idx.size:
                break
            start = {p: v[idx].copy() for p, v in carried.items()}
            reads, ok = {}, np.ones(idx.size, bool)
            cards = None
            pulses = (("set", study.protocol.v_set), ("reset", study.protocol.v_reset))
            for event, v_pulse in pulses:
                values = _values(study, idx, cycle[idx], event, d2d)
                cards = formed_state(CardBatch.of(base, idx.size), gap[idx], width[idx],
                                     **{p: values[p] for p in kinetic},
                                     **{p: v[idx] for p, v in carried.items()})
                res = simulate_with(study.engine, study.protocol.circuit,
                                    study.protocol.pulse(v_pulse, sign), cards, record=False)
                ev = res.events
                end = PulseCycle.SEGMENTS - 1
                for j, i in enumerate(idx):
                    if res.status[j] != Status.OK and ok[j]:
                        ok[j] = False
                        why = dict((d, (w, t)) for d, w, t in res.failures())[j]
                        error[i] = f"{event} of cycle {cycle[i]}: {why[0]} at t = {why[1]:.4g} s"
                good = idx[ok]
                rows = np.flatnonzero(ok)
                gap[good] = np.clip(ev["gap_end"][rows, end] * NM, 0.0, None)
                width[good] = ev["width_end"][rows, end] * NM
                for p, v in carried_at_end(base.model, ev, rows, end,
                                           {p: v[good] for p, v in carried.items()}).items():
                    carried[p][good] = v
                after = formed_state(cards, gap[idx], width[idx],
                                     **{p: v[idx] for p, v in carried.items()})
                for column, state in zip(STATE_COLUMNS[event], (gap, width), strict=True):
                    table[column] += (state[idx] / NM).tolist()
                reads[event] = np.full(idx.size, np.nan)
                if rows.size:
                    sub = after.take(rows)
                    reads[event][rows] = read_resistance(sub, sub["x0"] / NM, sub["w0"] / NM,
                                                         study.protocol.v_read)
            dwear = carried["wear0"][idx] - start["wear0"] if wearing else np.zeros(idx.size)
            ews = cards["ews"] if wearing else np.zeros(idx.size)
            jump = _jump(study, ews, np.clip(dwear, 0.0, None), last[idx],
                         study.cycles - cycle[idx])
            table["device"] += idx.tolist()
            table["cycle"] += cycle[idx].tolist()
            table["jump"] += jump.tolist()
            table["r_lrs_ohm"] += reads["set"].tolist()
            table["r_hrs_ohm"] += reads["reset"].tolist()
            table["window"] += (reads["reset"] / reads["set"]).tolist()
            table["wear"] += (carried["wear0"][idx] if wearing else np.zeros(idx.size)).tolist()
            table["converged"] += [not error[i] for i in idx]
            table["error"] += [error[i] for i in idx]
            if wearing:  # the skipped cycles repeat the simulated one
                carried["wear0"][idx] += np.clip(dwear, 0.0, None) * (jump - 1)
            cycle[idx] += jump
            last[idx] = jump
            if bar is not None:
                bar.update(int(jump.sum()))
    finally:
        if bar is not None:
            bar.close()
    frame = pd.DataFrame(table, columns=list(ENDURANCE_COLUMNS))
    frame = frame.sort_values(["device", "cycle"], kind="stable").reset_index(drop=True)
    fingerprint = study.fingerprint()
    fingerprint["run_sha256"] = hashlib.sha256(
        json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
    return EnduranceResult(frame, study, fingerprint)


@dataclass(frozen=True)
class FreshCycle:
    """A cycled cell of a card with its wear off, under a :class:`PulseCycle`: the gap
    and width after its SET and RESET (m), its R_LRS (Ω), and the reads of an HRS that
    a reservoir stops short (the CF thinned in proportion to the gap opened, as the
    RESET's ``kwr`` thins it)."""

    card: Card
    protocol: PulseCycle
    x_set: float
    w_set: float
    x_reset: float
    w_reset: float
    r_lrs: float

    @classmethod
    def of(cls, card: Card, protocol: PulseCycle | None = None) -> FreshCycle:
        protocol = protocol or PulseCycle()
        fresh = card.replace(kwear=0.0, wear0=0.0, xres=card["l0"]) \
            if "kwear" in card.model.parameter_names else card
        batch = CardBatch.of(fresh)
        ends = []
        # two cycles: the second is a cycled cell's (the first SET starts from x0)
        for v in (protocol.v_set, protocol.v_reset) * 2:
            res = simulate_with("python", protocol.circuit,
                                protocol.pulse(v, float(card["polarity"])), batch, record=False)
            res.raise_on_failure()
            end = PulseCycle.SEGMENTS - 1
            ends.append((max(res.events["gap_end"][0, end], 0.0) * NM,
                         res.events["width_end"][0, end] * NM))
            batch = formed_state(batch, np.array([ends[-1][0]]), np.array([ends[-1][1]]))
        (x_set, w_set), (x_reset, w_reset) = ends[2:]
        r_lrs, r_hrs = read_resistance([fresh] * 2, np.array([x_set, x_reset]) / NM,
                                       np.array([w_set, w_reset]) / NM, protocol.v_read)
        if r_hrs / r_lrs < CLOSED_WINDOW:
            raise InputError(
                f"the card does not switch under these pulses: its fresh cycle reads R_LRS "
                f"{r_lrs:.4g} Ohm and R_HRS {r_hrs:.4g} Ohm (window {r_hrs / r_lrs:.3g}, below "
                f"{CLOSED_WINDOW:g}) with v_set {protocol.v_set:g} V, v_reset "
                f"{protocol.v_reset:g} V, width {protocol.width:g} s, v_gate "
                f"{protocol.v_gate:g} V: give pulses that switch it (those of its record)")
        return cls(fresh, protocol, x_set, w_set, x_reset, w_reset, float(r_lrs))

    def r_hrs(self, gap_m: float) -> float:
        """R_HRS (Ω) of a RESET that ended at ``gap_m`` (≤ x_reset)."""
        w = self.w_set - (self.w_set - self.w_reset) * gap_m / self.x_reset
        return float(read_resistance([self.card], gap_m / NM, w / NM, self.protocol.v_read)[0])

    def gap_of(self, r_hrs: float) -> float:
        """The RESET's gap (m) that reads ``r_hrs``, within [0, x_reset] (an R_HRS above
        the fresh cell's: x_reset; below its LRS: 0)."""
        lo, hi = np.log(self.r_hrs(0.0)), np.log(self.r_hrs(self.x_reset))
        target = np.log(r_hrs)
        if target >= hi:
            return self.x_reset
        if target <= lo:
            return 0.0
        return float(brentq(lambda x: np.log(self.r_hrs(x)) - target, 0.0, self.x_reset,
                            xtol=1e-14))


def cycled_in_one_run(card: Card, cycles: int, engine: str = "python",
                      protocol: PulseCycle | None = None) -> pd.DataFrame:
    """``cycles`` pulsed cycles of one cell of ``card`` from its initial state, every one
    simulated in one transient of ``engine`` (no jumps): the table of
    :data:`ENDURANCE_COLUMNS`, each cycle's states at the ends of its SET and RESET
    pulses and its reads (by :func:`read_resistance` at ``protocol.v_read``), so that
    :func:`failure_of` finds its closure.  What the renderings' wear is compared on."""
    protocol = protocol or PulseCycle()
    res = simulate_with(engine, protocol.circuit,
                        protocol.stimulus(cycles, float(card["polarity"])), [card],
                        record=False)
    res.raise_on_failure()
    ev, table = res.events, {"device": 0, "cycle": np.arange(cycles), "jump": 1}
    batch = CardBatch.of(card, cycles)
    reads = {}
    for event, segments in zip(("set", "reset"), protocol.ends(cycles), strict=True):
        gap, width = (ev[f"{k}_end"][0, segments] * NM for k in ("gap", "width"))
        carried = carried_at_end(card.model, ev, 0, segments,
                                 {p: batch[p] for p in carried_states(card.model)})
        after = formed_state(batch, gap, width, **carried)
        reads[event] = read_resistance(after, after["x0"] / NM, after["w0"] / NM,
                                       protocol.v_read)
        for column, state in zip(STATE_COLUMNS[event], (gap, width), strict=True):
            table[column] = state / NM
        if event == "reset":
            table["wear"] = carried.get("wear0", np.zeros(cycles))
    table.update(r_lrs_ohm=reads["set"], r_hrs_ohm=reads["reset"],
                 window=reads["reset"] / reads["set"], converged=True, error="")
    return pd.DataFrame(table, columns=list(ENDURANCE_COLUMNS))


def closure_cycle(card: Card, protocol: PulseCycle | None = None,
                  closed_window: float = 2.0) -> dict[str, float]:
    """The cycle at which ``card``'s window closes to ``closed_window`` under
    ``protocol``, from the wear block's law (docs/model.md §11) and two figures of the
    fresh cell (:class:`FreshCycle`): the gap x_R its RESET opens by itself and the gap
    x_c at which R_HRS reads ``closed_window``·R_LRS.

    Until the reservoir's bound xres·e^(−D) meets x_R each cycle adds 2·kwear·x_R to D;
    after it the gap reaches only the bound, each cycle adds 2·kwear·x_HRS, and
    1/x_HRS grows by 2·kwear per cycle.  Returns ``onset_cycle``, ``closure_cycle``,
    ``x_reset_m``, ``x_closed_m``."""
    if "kwear" not in card.model.parameter_names or card["kwear"] <= 0:
        raise InputError("closure_cycle needs a card of the wearing model with kwear > 0 "
                         "(rram.model.wearing_model)")
    fresh = FreshCycle.of(card, protocol)
    x_reset = fresh.x_reset
    x_closed = fresh.gap_of(closed_window * fresh.r_lrs)
    k = card["kwear"]
    onset = onset_cycle(k, card["xres"] * np.exp(-card["wear0"]), x_reset, card["x0"])
    start = min(x_reset, card["xres"] * np.exp(-card["wear0"]))
    closure = onset + max(1.0 / x_closed - 1.0 / start, 0.0) / (2.0 * k)
    return {"onset_cycle": float(onset), "closure_cycle": float(closure),
            "x_reset_m": float(x_reset), "x_closed_m": float(x_closed)}


def onset_cycle(kwear: float, top: float, x_reset: float, x0: float) -> float:
    """The cycle at which a reservoir that can re-oxidise ``top`` (m) meets the gap
    ``x_reset`` its RESET opens: the first SET closes ``x0``, then each cycle moves the
    gap by 2·x_R (the cycle of index c has ended with D = k·(x0 − x_R) + 2·k·x_R·(c + 1)
    more than it began)."""
    first = kwear * (x0 - x_reset)
    return max(np.log(top / x_reset) - first, 0.0) / (2.0 * kwear * x_reset) - 1.0


def reservoir_at_onset(kwear: float, onset: float, x_reset: float, x0: float) -> float:
    """The reservoir (m, ``xres`` at ``wear0`` = 0) whose bound meets x_R at the cycle
    ``onset``: the inverse of :func:`onset_cycle`."""
    return x_reset * float(np.exp(kwear * (x0 - x_reset)
                                  + 2.0 * kwear * x_reset * (onset + 1.0)))


__all__ = ["ENDURANCE_COLUMNS", "STATE_COLUMNS", "STUCK_HRS", "STUCK_LRS", "Endurance",
           "EnduranceResult", "FreshCycle", "closure_cycle", "cycled_in_one_run", "failure_of",
           "onset_cycle", "reservoir_at_onset", "run_endurance"]
