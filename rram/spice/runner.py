"""Run testbenches in ngspice (subcircuit or OSDI model) or VACASK (OSDI) and return
engine results: one batch runner, a host per simulator.

:func:`simulate_spice` takes the same arguments as :func:`rram.engine.run.simulate` and
returns the same :class:`~rram.engine.run.SimResult`, so ``frame()``,
:func:`rram.metrics.loop_metrics` and every plot work unchanged whichever engine ran.
Per-segment events (peak current, threshold crossing, end states) are computed from
ngspice's own time points, as the Python engine computes them from its steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from ..card import Card, CardBatch
from ..circuits import CIRCUIT_PARAMETERS
from ..dialects import OSDI, dialect
from ..engine.run import SimResult, electrodes, engine_circuit, prepare_inputs
from ..engine.stimulus import Stimulus
from ..errors import ConvergenceError, InputError, SimulationError
from ..events import EVENT_KEYS, OPTIONAL_END_COLUMNS, SET_FRACTION, segment_events
from ..model import Circuit, Model
from ..status import N_STATS, Stat, Status
from . import models
from .ngspice import NgspiceSession
from .testbench import ModelRef, Testbench, render_batch


@dataclass(frozen=True)
class SpiceOptions:
    """``tmax`` caps ngspice's step (s; default :attr:`Testbench.step_max`);
    ``tmax_scale`` multiplies whichever cap applies (time-step convergence studies).
    A device that ends in "timestep too small" is rerun with the cap times each of
    ``retry_scales`` in turn, then at the cap :func:`runaway_step_cap` of its cards, then
    once more at the full cap with each set of ``retry_options`` in turn (``()`` and
    ``runaway=False`` disable them); ``meta["retries"]`` counts them."""

    tmax: float | None = None
    tmax_scale: float = 1.0
    spice_options: Mapping[str, float | str] = field(default_factory=dict)
    retry_scales: tuple[float, ...] = (0.5, 0.3, 0.07)
    #: A runaway (a fitted card's Joule-assisted RESET at ~1000 K) can defeat every step
    #: cap, ngspice's Newton diverging from each predictor; a tighter truncation-error
    #: tolerance takes smaller steps into it, and then converges.
    retry_options: tuple[Mapping[str, float | str], ...] = ({"reltol": 1e-5},)
    runaway: bool = True

    def attempts(self, bench: Testbench) -> list[tuple[float, Mapping[str, float | str]]]:
        """(step cap, extra options) of the first run of ``bench`` and of every retry."""
        cap, runaway = bench.step_max, runaway_step_cap(bench.card)
        caps = [cap, *(cap * s for s in self.retry_scales)]
        if self.runaway and runaway < min(caps):
            caps.append(runaway)
        return [*((c, {}) for c in caps), *((cap, dict(o)) for o in self.retry_options)]

    @classmethod
    def tight(cls, **kw) -> SpiceOptions:
        """Reference-grade tolerances (equivalence tests, fast overshoot transients)."""
        return cls(spice_options=dict(TIGHT_SPICE_OPTIONS), **kw)


#: ngspice's smallest time step is this fraction of the step cap (``CKTdelmin``, set in
#: its TRANinit; no option changes it).
NGSPICE_DELMIN_FRACTION = 1e-11
#: How far the gap may move in one step at the velocity cap: the scale ngspice's error
#: control takes through the runaway of an abrupt SET, where the rate is near ``vcap``
#: (3-4 pm measured on one fitted TUD card; with its 810 Ω contact the re-fitted card's
#: subcircuit needed a cap for 1 pm: 3 ms failed, 1 ms passed).
RUNAWAY_STEP_M = 1e-12


def runaway_step_cap(card: Card) -> float:
    """A step cap (s) whose ngspice floor lets the gap cross a SET runaway at ``vcap``.

    Through the runaway the gap moves ~:data:`RUNAWAY_STEP_M` per step at up to ``vcap``,
    so steps of RUNAWAY_STEP_M/vcap (1e-14 s at 100 m/s) must be allowed; ngspice stops
    at 1e-11 of the cap.  A slow DC sweep's cap (~1/200 of it) puts that floor near
    1e-12 s: a card whose SET reaches the cap then ends in "timestep too small" for any
    retry at a few times smaller cap."""
    return RUNAWAY_STEP_M / card["vcap"] / NGSPICE_DELMIN_FRACTION


#: ngspice tolerances at which its answers stop moving (see tests/test_spice_transient.py).
TIGHT_SPICE_OPTIONS = {"reltol": 1e-6, "chgtol": 1e-18, "abstol": 1e-15}


def model_ref(model: str, device: Model) -> ModelRef:
    """The rendered or compiled file of ``device`` (a model) for ``model``
    (``subckt``: the subcircuit library, ``osdi``: the compiled Verilog-A)."""
    d = dialect(model, "model")
    if d.compiled:  # the runner's session loads the module once
        return ModelRef(d.kind, str(models.osdi_module(device)), in_deck_osdi=False)
    return ModelRef(d.kind, str(models.subckt_library(device)))


def _samples(t, wave: dict[str, np.ndarray], card: Card, st: Stimulus,
             circuit: Circuit) -> np.ndarray:
    """Waveforms on the stimulus output grid, in the Python engine's unknown layout.

    ``ti`` is built from the layout's own top electrode (:func:`electrodes`), so the
    current the layout implies, (top − ti)/rtop, is ngspice's sensed current exactly.
    (Built from v(te) instead, the sub-mV difference ngspice leaves between v(mid) and
    v(te) across the sense source read as 0.45 mA of current through a 1.6 Ω contact.)"""
    ts = st.sample_times

    def at(x):
        return np.interp(ts, t, x)

    lay = circuit.layout
    y = np.empty((ts.size, len(lay.unknowns)))
    v_be, i = at(wave["v_be"]), at(wave["current"])
    y[:, lay.unknown("mid")] = at(wave["mid"])
    top, _ = electrodes(circuit, st.voltage(ts), y[:, lay.unknown("mid")])
    y[:, lay.unknown("ti")] = top - i * card["rtop"]
    y[:, lay.unknown("bi")] = v_be + i * card["rbot"]
    y[:, lay.unknown("tip")] = np.nan_to_num(y[:, lay.unknown("bi")])
    for name, _, _ in lay.states:
        y[:, lay.unknown(name)] = at(wave[name])
    return y


def _waves(run, vec: Mapping[str, str]) -> dict[str, np.ndarray]:
    return {k: run.vectors[v] for k, v in vec.items() if v != "0"}


def _run_with_retries(run: Callable[[list[Testbench]], list[dict[str, np.ndarray]]],
                      bench: Testbench, opts: SpiceOptions
                      ) -> tuple[dict[str, np.ndarray], int]:
    """(waveforms, retries used): ``run`` of the bench at each of
    :meth:`SpiceOptions.attempts`.

    ngspice does not return to the last converged point after a failed Newton iteration
    (it cuts the step from the failed iterate), so a rare step sequence through the
    abrupt SET ends in "timestep too small"; another step cap takes another sequence.
    """
    attempts = opts.attempts(bench)
    for attempt, (cap, extra) in enumerate(attempts):
        tb = replace(bench, tmax=cap, options={**bench.options, **extra})
        try:
            return run([tb])[0], attempt
        except ConvergenceError:
            if attempt == len(attempts) - 1:
                raise
    raise AssertionError("unreachable")


#: A VACASK run longer than this (s) is stopped: a many-cell batch of slow loops.
VACASK_TIMEOUT_S = 3600.0


class _Host(Protocol):
    """A simulator the batch runner drives: its model file, one (batched) deck's
    waveforms per bench, and what it adds to a result's ``meta``."""

    ref: ModelRef

    def run(self, benches: list[Testbench]) -> list[dict[str, np.ndarray]]: ...

    def meta(self) -> dict[str, object]: ...


class _Ngspice:
    """The host of :func:`simulate_spice`: the shared ngspice session."""

    def __init__(self, ref: ModelRef):
        self.ref, self.session = ref, NgspiceSession.get()
        if ref.dialect.compiled:
            self.session.load_osdi(ref.path)

    def run(self, benches: list[Testbench]) -> list[dict[str, np.ndarray]]:
        """Waveforms of every cell of one (batched) deck; raises if the deck fails."""
        if len(benches) == 1:
            vecs = [benches[0].vectors()]
            text = benches[0].render()
        else:
            vecs = [tb.vectors(f"_{i}") for i, tb in enumerate(benches)]
            text = render_batch(benches)
        wanted = sorted({v for vec in vecs for v in vec.values() if v != "0"})
        run = self.session.run(text, wanted)
        return [_waves(run, vec) for vec in vecs]

    def meta(self) -> dict[str, object]:
        return {"engine": self.ref.dialect.engine, "ngspice_version": self.session.version,
                "model_path": self.ref.path}


class _Vacask:
    """The host of :func:`simulate_vacask`: one VACASK process per (batched) netlist."""

    def __init__(self, ref: ModelRef):
        self.ref = ref

    def run(self, benches: list[Testbench]) -> list[dict[str, np.ndarray]]:
        from .vacask import run_vacask
        from .vacask_deck import render

        text, vecs = render(benches, Path(self.ref.path))
        result = run_vacask(text, timeout=VACASK_TIMEOUT_S)["tr"]
        missing = sorted({v for vec in vecs for v in vec.values()} - set(result) - {"0"})
        if missing:
            raise SimulationError(f"VACASK wrote no vector {', '.join(missing)}",
                                  analysis="vacask")
        return [{k: result[v] for k, v in vec.items() if v != "0"} for vec in vecs]

    def meta(self) -> dict[str, object]:
        return {"engine": "vacask", "model_path": self.ref.path}


def _groups(stimuli: Sequence[Stimulus], batch: int) -> list[list[int]]:
    """Devices in runs of up to ``batch`` that share one stimulus (in device order)."""
    groups: list[list[int]] = []
    for d, st in enumerate(stimuli):
        last = groups[-1] if groups else None
        if last and len(last) < batch and stimuli[last[0]] is st:
            last.append(d)
        else:
            groups.append([d])
    return groups


def simulate_spice(
    circuit: str,
    stimuli: Stimulus | Sequence[Stimulus],
    cards: Card | Sequence[Card] | CardBatch | None = None,
    circuit_params: Mapping[str, object] | None = None,
    model: str = "osdi",
    options: SpiceOptions | None = None,
    n_devices: int | None = None,
    progress: bool = False,
    thresholds: np.ndarray | None = None,
    batch: int = 1,
) -> SimResult:
    """Simulate each device in ngspice; see :func:`rram.engine.run.simulate`.

    ``batch`` > 1 puts up to that many devices that share a stimulus into one deck (one
    ngspice run, one matrix); a batch that does not converge is rerun device by device.
    A device that does not converge gets a failure status and its time (see
    :meth:`SimResult.raise_on_failure`, which raises the typed
    :class:`~rram.errors.ConvergenceError`); other ngspice errors raise at once.
    """
    return _simulate(lambda device: _Ngspice(model_ref(model, device)), f"ngspice {model}",
                     circuit, stimuli, cards, circuit_params, options, n_devices, progress,
                     thresholds, batch)


def simulate_vacask(
    circuit: str,
    stimuli: Stimulus | Sequence[Stimulus],
    cards: Card | Sequence[Card] | CardBatch | None = None,
    circuit_params: Mapping[str, object] | None = None,
    options: SpiceOptions | None = None,
    n_devices: int | None = None,
    progress: bool = False,
    thresholds: np.ndarray | None = None,
    batch: int = 1,
) -> SimResult:
    """Simulate each device in VACASK with the compiled Verilog-A module, the circuits
    spelt by :mod:`rram.spice.vacask_deck`; arguments and result as
    :func:`simulate_spice`.  Of ``options.spice_options`` (and the retries' options) the
    tolerances VACASK shares with ngspice apply (``reltol``, ``abstol``, ``vntol``,
    ``chgtol``: :data:`rram.spice.vacask_deck.SHARED_OPTIONS`); ngspice's own solver and
    integration settings (``method``, ``trtol``, ``klu``, ...) do not."""
    def host(device: Model) -> _Vacask:
        return _Vacask(model_ref(OSDI.kind, device))

    return _simulate(host, "vacask", circuit, stimuli, cards, circuit_params, options,
                     n_devices, progress, thresholds, batch)


def _simulate(make_host: Callable[[Model], _Host], label: str, circuit: str,
              stimuli: Stimulus | Sequence[Stimulus],
              cards: Card | Sequence[Card] | CardBatch | None,
              circuit_params: Mapping[str, object] | None, options: SpiceOptions | None,
              n_devices: int | None, progress: bool, thresholds: np.ndarray | None,
              batch: int) -> SimResult:
    """The batch runner every simulator host shares: decks per device or per batch,
    retries, events from the host's own time points, the result."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError(f"batch must be a positive integer, got {batch!r}")
    opts = options or SpiceOptions()
    stimuli, batch_cards, cp = prepare_inputs(circuit, stimuli, cards, circuit_params,
                                              n_devices)
    card_list = batch_cards.cards()
    circ = engine_circuit(circuit, batch_cards.model)
    n = len(stimuli)
    names = [p.name for p in CIRCUIT_PARAMETERS]
    host = make_host(batch_cards.model)
    nseg_max = max(s.times.size - 1 for s in stimuli)
    events = {k: np.full((n, nseg_max), np.nan) for k in EVENT_KEYS}
    status = np.zeros(n, np.int64)
    stats = np.zeros((n, N_STATS))
    samples: list[np.ndarray | None] = [None] * n
    retries = np.zeros(n, np.int64)

    def bench(d: int) -> Testbench:
        tb = Testbench(circuit, stimuli[d], card_list[d], dict(zip(names, cp[d], strict=True)),
                       host.ref, options=opts.spice_options)
        cap = opts.tmax if opts.tmax is not None else tb.step_max
        return replace(tb, tmax=cap * opts.tmax_scale)

    def store(d: int, wave: dict[str, np.ndarray]) -> None:
        st, card = stimuli[d], card_list[d]
        t = wave["time"]
        wave.setdefault("v_be", np.zeros_like(t))
        vcell = wave["v_te"] - wave["v_be"]
        lay = circ.layout
        def held(node: str) -> np.ndarray:  # a state from its anchor (nm)
            anchor, scale = lay.anchor(node)
            return card[anchor] / scale + wave[node]

        optional = [n for n in OPTIONAL_END_COLUMNS if n in wave]
        states = np.column_stack([held("dgap"), held("dwidth"), wave["dtemp"]]
                                 + [held(n) for n in optional])
        thr = SET_FRACTION * st.icc if thresholds is None else np.broadcast_to(
            thresholds, (n, st.icc.size))[d]
        ev = segment_events(t, wave["current"], vcell, states, st.times, thr, optional)
        for k in EVENT_KEYS:
            events[k][d, : st.icc.size] = ev[k]
        stats[d, Stat.STEPS] = t.size
        samples[d] = _samples(t, wave, card, st, circ)

    def single(d: int) -> None:
        tb = bench(d)
        try:
            wave, retries[d] = _run_with_retries(host.run, tb, opts)
        except ConvergenceError as err:
            status[d] = Status.STEP_TOO_SMALL
            retries[d] = len(opts.attempts(tb)) - 1
            stats[d, Stat.FAIL_TIME] = err.time_s if err.time_s is not None else np.nan
            samples[d] = np.full((stimuli[d].sample_times.size, len(circ.unknowns)), np.nan)
            return
        store(d, wave)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n, unit="device", desc=f"{label} {circuit}",
                   disable=None)
    for group in _groups(stimuli, batch):
        if len(group) == 1:
            single(group[0])
        else:
            try:
                for d, wave in zip(group, host.run([bench(d) for d in group]),
                                   strict=True):
                    store(d, wave)
            except ConvergenceError:
                for d in group:
                    single(d)
        if bar is not None:
            bar.update(len(group))
    if bar is not None:
        bar.close()
    meta = {**host.meta(), "retries": retries}
    return SimResult(circuit, batch_cards, cp, stimuli, samples, status, stats, events, meta)

