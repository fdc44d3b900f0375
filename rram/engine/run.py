"""The vectorised Python engine: N devices, each with its own card and stimulus.

``simulate`` packs cards and stimuli into arrays, integrates them in chunks (each chunk in
parallel over the cores, see :mod:`rram.engine.integrator`) and returns a
:class:`SimResult` whose :meth:`~SimResult.frame` is the tidy output table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..card import Card, CardBatch, default_card
from ..checks import is_number
from ..circuits import CIRCUIT_KINDS, CIRCUIT_PARAMETERS, build_circuit
from ..errors import ConvergenceError, InputError
from ..events import GAP_CLOSED_NM, OPTIONAL_END_COLUMNS, SET_FRACTION
from ..model import Circuit, Layout, Model
from ..status import N_STATS, Stat, Status, succeeded
from .stimulus import Stimulus

COLUMNS = ("device", "cycle", "time_s", "v_applied_V", "v_cell_V", "current_A", "gap_nm",
           "width_nm", "temperature_K")

CIRCUIT_DEFAULTS = {p.name: p.default for p in CIRCUIT_PARAMETERS}
#: Absolute tolerance of the wear's increment in a run (dimensionless): the smallest
#: wear a realistic card adds in one cycle is ~1e-6.
ATOL_WEAR = 1e-12
#: The tidy table's column of each state node: its value from the node's anchor.
STATE_COLUMNS = {"dgap": "gap_nm", "dwidth": "width_nm", "dtemp": "temperature_K",
                 "dsettle": "disorder_nm", "dwear": "wear"}
#: The event table's column of each programmed state at the end of a segment: what the
#: next run of a cell starts from (its x0, w0 and the optional blocks' u0, wear0).
END_COLUMNS = {"dgap": "gap_end", "dwidth": "width_end", **OPTIONAL_END_COLUMNS}


def engine_circuit(kind: str, model: Model) -> Circuit:
    """The engine's circuit ``kind`` around a cell of ``model``, the name checked."""
    if kind not in CIRCUIT_KINDS:
        raise InputError(f"unknown circuit {kind!r}; valid: {', '.join(CIRCUIT_KINDS)}")
    return build_circuit(kind, model)


@dataclass(frozen=True)
class Options:
    """Integrator settings.

    ``rtol`` is relative; ``atol_nm`` (nm) and ``atol_k`` (K) are the absolute error
    tolerances of the gap/width states and the temperature rise; node voltages are tested
    through their capacitor charge against ``chgtol`` (C), as SPICE does, and converge in
    Newton to ``atol_v`` (V).  Steps are capped at ``hfrac`` of the current stimulus
    segment and at ``hmax`` (s).  A device that takes more than ``max_steps`` accepted
    steps in one stimulus segment stops (:attr:`~rram.status.Status.MAX_STEPS`): a guard
    against a stalled integration that does not grow with the number of cycles.
    """

    rtol: float = 1e-3
    atol_v: float = 1e-6
    # ~xt·rtol: the hopping current's exp(−x/xt) turns a 3e-4 nm gap error into a
    # 1e-3 relative current error.  Tighter mostly costs steps: a gap held at its bound
    # jitters by ~1e-4 nm and took 30x the steps at 1e-4 (a slow sweep's RESET).
    atol_nm: float = 3e-4
    atol_k: float = 1.0
    chgtol: float = 1e-15
    hmax: float = np.inf
    hfrac: float = 0.1
    hmin: float = 1e-18
    max_steps: int = 200_000
    chunk: int = 2048

    @classmethod
    def tight(cls, **kw) -> Options:
        """Reference-grade tolerances (equivalence tests, fast overshoot transients)."""
        return cls(rtol=1e-6, chgtol=1e-17, atol_nm=1e-6, **kw)

    def tightened(self, factor: float) -> Options:
        """Every error tolerance divided by ``factor`` (> 0; 2 halves them)."""
        if not (is_number(factor) and math.isfinite(factor) and factor > 0):
            raise InputError(f"tolerance factor must be a finite number > 0, got {factor!r}")
        return replace(self, rtol=self.rtol / factor, atol_v=self.atol_v / factor,
                       atol_nm=self.atol_nm / factor, atol_k=self.atol_k / factor,
                       chgtol=self.chgtol / factor)

    def arrays(self, layout: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(absolute tolerance, error test, Newton limit) of each unknown of ``layout``,
        by its unit: node voltages (V) are tested through their charge (SPICE); the gap
        and width (nm) absolutely (they hold the change since x0/w0, and the current's
        sensitivity exp(-x/xt) is absolute in x); the temperature rise (K) relatively
        and absolutely."""
        atol = layout.per_unit({"V": self.atol_v, "nm": self.atol_nm, "K": self.atol_k,
                                "1": ATOL_WEAR})
        # the wear (1) relatively: a run's unknown is its increment since wear0, whose
        # accuracy follows the gap's (it integrates the gap's traffic)
        errkind = layout.per_unit({"V": 1, "nm": 2, "K": 0, "1": 0}).astype(np.int64)
        return atol, errkind, newton_limits(layout)


def newton_limits(layout: Layout) -> np.ndarray:
    """The largest change of each unknown per Newton iteration (SPICE-style limiting):
    0.5 V or 0.5 nm, 100 K, 0.5 of wear."""
    return layout.per_unit({"V": 0.5, "nm": 0.5, "K": 100.0, "1": 0.5})


def electrodes(circuit: Circuit, v_app: np.ndarray, mid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """(top, bottom) electrode voltages of the cell in the unknown layout, from the
    nets its ports sit on in the circuit's netlist (:func:`rram.circuits.device_netlist`):
    the bit line and ``mid`` in the 1T1R cell, ``mid`` and ground in a series circuit."""
    nets = {"0": np.zeros_like(mid), "mid": mid, "bl": v_app}  # bl: SOURCES' v_app
    ports = circuit.device_nodes
    return nets[ports["te"]], nets[ports["be"]]


@dataclass
class SimResult:
    """Sampled unknowns of every device, with what is needed to label them."""

    circuit: str
    cards: CardBatch
    circuit_params: np.ndarray
    stimuli: list[Stimulus]
    samples: list[np.ndarray]  # per device: (M_d, unknowns of the circuit's layout)
    status: np.ndarray
    stats: np.ndarray
    events: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def engine_circuit(self) -> Circuit:
        return build_circuit(self.circuit, self.cards.model)

    @property
    def layout(self) -> Layout:
        """Where each unknown sits in :attr:`samples` and the events' ``yend``."""
        return self.engine_circuit.layout

    def failures(self) -> list[tuple[int, str, float]]:
        return [
            (d, Status(int(s)).text, float(self.stats[d, Stat.FAIL_TIME]))
            for d, s in enumerate(self.status)
            if not succeeded(s)
        ]

    @property
    def stop_times(self) -> np.ndarray:
        """Time (s) each device reached its stop current; NaN where it did not."""
        return np.where(self.status == Status.STOPPED, self.stats[:, Stat.STOP_TIME], np.nan)

    def raise_on_failure(self) -> None:
        fails = self.failures()
        if fails:
            d, why, t = fails[0]
            more = f" ({len(fails) - 1} more devices failed)" if len(fails) > 1 else ""
            raise ConvergenceError(f"device {d}: {why} at t = {t:.6g} s{more}", time_s=t,
                                   analysis="tran", device=d)

    def device_arrays(self, d: int) -> dict[str, np.ndarray]:
        """Waveforms of device ``d``: time, applied and cell voltage, current, states."""
        st = self.stimuli[d]
        y = self.samples[d]
        t = st.sample_times
        keep = np.isfinite(y).all(axis=1)  # samples after a stop or failure are NaN
        y, t = y[keep], t[keep]
        v_app = st.voltage(t)
        lay, card = self.layout, self.cards.card(d)
        mid, ti = y[:, lay.unknown("mid")], y[:, lay.unknown("ti")]
        v_te, v_be = electrodes(self.engine_circuit, v_app, mid)
        seg = st.segment_of(t)
        return {
            "time_s": t,
            "cycle": st.cycles[seg],
            "phase": np.array(st.phases)[seg],
            "v_applied_V": v_app,
            "v_cell_V": v_te - v_be,
            "current_A": (v_te - ti) / card["rtop"],
            **{STATE_COLUMNS[node]: card[anchor] / scale + y[:, lay.unknown(node)]
               for node, anchor, scale in lay.states},
        }

    def frame(self, devices: Sequence[int] | None = None) -> pd.DataFrame:
        """The tidy table: one row per device and output time, columns :data:`COLUMNS`."""
        parts = []
        for d in range(len(self.stimuli)) if devices is None else devices:
            a = self.device_arrays(d)
            a = {k: a[k] for k in COLUMNS if k != "device"}
            df = pd.DataFrame(a)
            df.insert(0, "device", d)
            parts.append(df)
        return pd.concat(parts, ignore_index=True)[list(COLUMNS)]


def _circuit_matrix(params: Mapping[str, object] | None, n: int) -> np.ndarray:
    """(n, len(CIRCUIT_PARAMETERS)): scalars broadcast, sequences per device; validated."""
    given = dict(params or {})
    unknown = sorted(set(given) - set(CIRCUIT_DEFAULTS))
    if unknown:
        raise InputError(
            f"unknown circuit parameter(s) {', '.join(unknown)}; valid: "
            + ", ".join(CIRCUIT_DEFAULTS)
        )
    cols = []
    for p in CIRCUIT_PARAMETERS:
        v = np.broadcast_to(np.asarray(given.get(p.name, p.default), float), (n,))
        for x in np.unique(v):
            problem = p.check(float(x))
            if problem:
                raise InputError(f"circuit parameter {p.name}: {problem} "
                                 f"(valid range {p.range_text})")
        cols.append(v)
    return np.stack(cols, axis=1)


def _pad(stimuli: Sequence[Stimulus], record: bool = True):
    """Stack per-device stimuli into padded arrays (zero-length segments, +inf samples).

    Each distinct stimulus object is padded once and copied to its devices in one
    assignment, and without ``record`` the sample grid is not allocated (n × 0): a
    million devices sharing one loop cost three small arrays, not a Python loop and
    6 GB of sample times."""
    n = len(stimuli)
    k = max(s.times.size for s in stimuli)
    m = max(s.sample_times.size for s in stimuli) if record else 0
    TP = np.empty((n, k))
    VP = np.empty((n, k))
    ICC = np.empty((n, k - 1))
    VG = np.empty((n, k - 1))
    OUT = np.full((n, m), np.inf)
    for s, devices in _groups(stimuli):
        kk = s.times.size
        TP[devices, :kk], VP[devices, :kk] = s.times, s.volts
        TP[devices, kk:], VP[devices, kk:] = s.times[-1], s.volts[-1]
        ICC[devices, : kk - 1] = s.icc
        ICC[devices, kk - 1 :] = s.icc[-1]
        VG[devices, : kk - 1] = s.gates
        VG[devices, kk - 1 :] = s.gates[-1]
        if record:
            OUT[devices, : s.sample_times.size] = s.sample_times
    return TP, VP, ICC, VG, OUT


def _groups(items: Sequence) -> list[tuple[object, np.ndarray]]:
    """Each distinct object of ``items`` (by identity) with the indices where it occurs."""
    index: dict[int, tuple[object, list[int]]] = {}
    for d, item in enumerate(items):
        index.setdefault(id(item), (item, []))[1].append(d)
    return [(item, np.asarray(devices)) for item, devices in index.values()]


def _card_matrix(cards: CardBatch, cp: np.ndarray) -> np.ndarray:
    """(n, card + circuit parameters): the layout of the circuits' parameter vectors."""
    return np.hstack([cards.values, cp])


def initial_guess(circuit: Circuit, n: int) -> np.ndarray:
    """Unknowns at rest: nodes at 0 V, states at their anchors (zero change), no heating."""
    return np.zeros((n, len(circuit.unknowns)))


def prepare_inputs(circuit: str, stimuli: Stimulus | Sequence[Stimulus],
                   cards: Card | Sequence[Card] | CardBatch | None,
                   circuit_params: Mapping[str, object] | None, n_devices: int | None
                   ) -> tuple[list[Stimulus], CardBatch, np.ndarray]:
    """The inputs of a simulation, checked and broadcast to one entry per device: the
    stimuli, the cards (a batch) and the circuit-parameter matrix (shared by every
    engine)."""
    if circuit not in CIRCUIT_KINDS:
        raise InputError(f"unknown circuit {circuit!r}; valid: {', '.join(CIRCUIT_KINDS)}")
    if isinstance(stimuli, Stimulus):
        n = n_devices or (1 if cards is None or isinstance(cards, Card) else len(cards))
        stimuli = [stimuli] * n
    stimuli = list(stimuli)
    if not stimuli:
        raise InputError("no devices to simulate")
    n = len(stimuli)
    batch = CardBatch.of(default_card() if cards is None else cards,
                         n if cards is None or isinstance(cards, Card) else None)
    if len(batch) != n:
        raise InputError(f"got {len(batch)} cards for {n} devices")
    return stimuli, batch, _circuit_matrix(circuit_params, n)


def integrate_arrays(circuit: Circuit, P: np.ndarray, TP: np.ndarray, VP: np.ndarray,
                     ICC: np.ndarray, VG: np.ndarray, OUT: np.ndarray, model: Model,
                     options: Options | None = None,
                     stop_current: float | Sequence[float] | np.ndarray | None = None,
                     thresholds: np.ndarray | None = None,
                     gap_closed: np.ndarray | None = None, progress: bool = False
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The compiled integration of ``n`` devices given as arrays (what :func:`simulate`
    packs from cards and stimuli) in ``circuit`` around cells of ``model``: ``P`` (n,
    the circuit layout's parameters), the PWL stimulus ``TP`` (s) / ``VP`` (V) (n,
    breakpoints), compliance ``ICC`` (A, n, segments), gate voltages ``VG`` (V, n, segments) and
    output times ``OUT`` (s, n, samples; +inf pads).  The initial state is each card's
    ``x0``/``w0`` at the operating point of the stimulus' first value.  Returns the
    sampled unknowns (n, samples, the layout's unknowns), the status and statistics per
    device and the per-segment events (see :func:`simulate`)."""
    opts = options or Options()
    lay = circuit.layout
    n, m = P.shape[0], len(lay.unknowns)
    kind = CIRCUIT_KINDS.index(circuit_kind(circuit))
    atol, errkind, lim = opts.arrays(lay)
    Y0 = initial_guess(circuit, n)
    out_y = np.full((n, OUT.shape[1], m), np.nan)
    nseg = TP.shape[1] - 1
    thr = SET_FRACTION * ICC if thresholds is None else thresholds
    ev = {"imax": np.full((n, nseg), -np.inf), "timax": np.full((n, nseg), np.nan),
          "tcross": np.full((n, nseg), np.nan), "dtmax": np.full((n, nseg), -np.inf),
          "yend": np.full((n, nseg, m), np.nan), "iend": np.full((n, nseg), np.nan),
          "tdrop": np.full((n, nseg), np.nan), "tclose": np.full((n, nseg), np.nan)}
    if gap_closed is None:
        gap_closed = gap_closure_threshold(lay, P)
    istop = np.broadcast_to(np.asarray(np.inf if stop_current is None else stop_current,
                                       float), (n,)).copy()
    from .jit import load_integrator  # compiled on first simulation

    batch = load_integrator(model).integrate_batch
    # the operating point at t0 holds the states at x0, w0 (the SPICE renderings' dc_hold)
    frozen = np.zeros(m, np.bool_)
    frozen[lay.held()] = True

    status = np.zeros(n, np.int64)
    stats = np.zeros((n, N_STATS))
    chunks = range(0, n, opts.chunk)
    if progress:
        from tqdm import tqdm

        chunks = tqdm(chunks, total=len(chunks), unit="chunk",
                      desc=f"{circuit_kind(circuit)} x{n}", disable=None)
    for a in chunks:
        b = min(n, a + opts.chunk)
        batch(kind, P[a:b], TP[a:b], VP[a:b], ICC[a:b], VG[a:b], Y0[a:b],
              OUT[a:b], out_y[a:b], atol, errkind, opts.chgtol, opts.rtol, lim,
              opts.hmax, opts.hfrac, opts.hmin, opts.max_steps, istop[a:b],
              status[a:b], stats[a:b], thr[a:b], ev["imax"][a:b],
              ev["timax"][a:b], ev["tcross"][a:b], ev["dtmax"][a:b],
              ev["yend"][a:b], ev["iend"][a:b], ev["tdrop"][a:b],
              gap_closed[a:b], lay.unknown("dgap"), lay.unknown("dtemp"),
              ev["tclose"][a:b], frozen)
    return out_y, status, stats, ev


def circuit_kind(circuit: Circuit) -> str:
    """The kind (:data:`rram.circuits.CIRCUIT_KINDS`) a built circuit is of."""
    return circuit.name.replace("one_t_one_r", "1t1r")


def gap_closure_threshold(layout: Layout, P: np.ndarray) -> np.ndarray:
    """:data:`rram.events.GAP_CLOSED_NM` in the gap node's units: the change of the gap
    since each device's ``x0``."""
    anchor, scale = layout.anchor("dgap")
    return GAP_CLOSED_NM - P[:, layout.column(anchor)] / scale


def simulate(
    circuit: str,
    stimuli: Stimulus | Sequence[Stimulus],
    cards: Card | Sequence[Card] | CardBatch | None = None,
    circuit_params: Mapping[str, object] | None = None,
    options: Options | None = None,
    n_devices: int | None = None,
    progress: bool = False,
    stop_current: float | Sequence[float] | None = None,
    thresholds: np.ndarray | None = None,
    record: bool = True,
    integrate=None,
) -> SimResult:
    """Simulate devices in ``circuit`` (``resistor``, ``compliance`` or ``1t1r``).

    ``stimuli`` is one stimulus for all devices or one per device; ``cards`` a card for
    all, one per device, or a :class:`~rram.card.CardBatch` (its model's kernels run);
    ``circuit_params`` maps names of :data:`rram.circuits.CIRCUIT_PARAMETERS` to a scalar
    or one value per device.  Failed devices are reported in ``status`` (see
    :meth:`SimResult.raise_on_failure`), never silently dropped.  ``stop_current`` (A, per
    device or scalar) ends a device's run when its |current| reaches it; the time is in
    :attr:`SimResult.stop_times` and later samples are NaN.

    Per stimulus segment the engine records events at its own steps (``events``): peak
    |I| (``imax``) and its time (``timax``), the first time |I| reaches ``thresholds``
    (``tcross``; default half of the segment's compliance), the first time |I| falls
    below ``DROP`` (0.9) times its peak so far (``tdrop``), the first closure of the gap
    (``tclose``; :mod:`rram.events`), the peak temperature rise (``dtmax``), the unknowns,
    cell voltage and device current at the segment's end (``yend``, ``gap_end``,
    ``width_end``, ``vcell_end``, ``iend``).  ``record=False`` skips the sampled
    waveforms (large batches that need only events).  ``integrate``: the integration of
    the packed arrays (:func:`integrate_arrays`, the compiled engine, by default; the
    lockstep torch engine, :func:`rram.torch.transient.integrate_arrays`, takes the same
    arguments).
    """
    opts = options or Options()
    stimuli, batch, cp = prepare_inputs(circuit, stimuli, cards, circuit_params, n_devices)
    n = len(stimuli)
    circ = build_circuit(circuit, batch.model)
    lay = circ.layout
    P = _card_matrix(batch, cp)
    TP, VP, ICC, VG, OUT = _pad(stimuli, record)
    nseg = TP.shape[1] - 1
    thr = SET_FRACTION * ICC if thresholds is None \
        else np.broadcast_to(thresholds, (n, nseg)).copy()
    out_y, status, stats, ev = (integrate or integrate_arrays)(
        circ, P, TP, VP, ICC, VG, OUT, batch.model, opts, stop_current, thr,
        gap_closure_threshold(lay, P), progress=progress)
    samples = ([out_y[d, : s.sample_times.size] for d, s in enumerate(stimuli)] if record
               else [out_y[0]] * n)  # (0, unknowns) each: one shared empty view
    for node, column in END_COLUMNS.items():
        if node not in lay.unknowns:  # a model without the block
            ev[column] = np.zeros_like(ev["yend"][:, :, 0])
            continue
        anchor, scale = lay.anchor(node)
        ev[column] = P[:, lay.column(anchor), None] / scale + ev["yend"][:, :, lay.unknown(node)]
    mid = ev["yend"][:, :, lay.unknown("mid")]
    v_te, v_be = electrodes(circ, VP[:, 1:], mid)
    ev["vcell_end"] = v_te - v_be
    return SimResult(circuit, batch, cp, stimuli, samples, status, stats, ev)
