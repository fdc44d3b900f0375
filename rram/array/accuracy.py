"""Accuracy of vector–matrix products through a crossbar: wires and device variation.

The weights a crossbar should hold are the cells' conductances on the nominal card
(no device-to-device draws): the *target* product is t = x·G_nominal.  What the array
computes differs in two ways, taken apart here:

* **variation** only: x·G_drawn, each cell at the chord conductance of its own drawn
  card (ideal wires, ideal drivers and sense);
* **wires** only: the linear solve (:class:`rram.array.solve.LinearSolver`) with the
  nominal cells: IR drop along rows and columns, driver and sense resistances;
* **both**: the linear solve with the drawn cells, what the hardware delivers.

Each is scored against the target by :func:`score`: the relative error ‖y − t‖/‖t‖, the
signal-to-noise ratio 20·log₁₀(‖t‖/‖y − t‖) (dB), each column's relative RMS error,
and the error left after the best single gain (an IR drop that scales every output
alike is calibrated out by a read-out gain; what remains is not).

:func:`vmm_monte_carlo` repeats the study over independent arrays: sample k draws its
cells from its own seed (:func:`sample_seed`, a counter-based stream of the study's
seed), so any sample can be recomputed alone and the result does not depend on how the
samples are split among workers (in this process, or on a Dask cluster as the device
Monte Carlo).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..card import formed_state
from ..constants import NM
from ..errors import InputError
from .build import build, output_sources
from .cells import States, cell_parameters
from .read import chord_conductance, vmm_inputs
from .solve import LinearSolver
from .spec import ArraySpec
from .tables import provenance, write_table


@dataclass(frozen=True)
class Score:
    """How outputs ``y`` (vectors × columns, A) match the target ``t``: ``relative_error``
    ‖y − t‖/‖t‖, ``snr_db`` 20·log₁₀(‖t‖/‖y − t‖), ``column_error`` per column
    RMS(y − t)/RMS(t) over the vectors, ``gain`` the least-squares g of y ≈ g·t and
    ``relative_error_after_gain`` ‖y − g·t‖/‖g·t‖."""

    relative_error: float
    snr_db: float
    column_error: np.ndarray
    gain: float
    relative_error_after_gain: float

    @property
    def worst_column_error(self) -> float:
        return float(np.max(self.column_error))


def score(y: np.ndarray, t: np.ndarray) -> Score:
    """:class:`Score` of outputs ``y`` against the target ``t`` (same shape)."""
    y, t = np.atleast_2d(np.asarray(y, float)), np.atleast_2d(np.asarray(t, float))
    if y.shape != t.shape:
        raise InputError(f"outputs {y.shape} and target {t.shape} differ in shape")
    norm_t = float(np.linalg.norm(t))
    if norm_t == 0.0:
        raise InputError("the target product is zero: give non-zero input vectors")
    err = float(np.linalg.norm(y - t))
    col = np.sqrt(np.mean((y - t) ** 2, axis=0) / np.maximum(np.mean(t ** 2, axis=0),
                                                              np.finfo(float).tiny))
    gain = float(np.sum(y * t) / norm_t ** 2)
    after = float(np.linalg.norm(y - gain * t) / (abs(gain) * norm_t)) if gain else np.inf
    snr = 20.0 * np.log10(norm_t / err) if err > 0 else np.inf
    return Score(err / norm_t, float(snr), col, gain, after)


@dataclass(frozen=True)
class VmmAccuracy:
    """Target product ``target`` (vectors × columns, A) and the scores of the three
    departures from it: ``variation`` (cells drawn, ideal wires), ``wires`` (nominal
    cells, real wires) and ``both``; the nominal and drawn conductances (S, rows × cols)."""

    target: np.ndarray
    outputs: np.ndarray
    variation: Score
    wires: Score
    both: Score
    g_nominal: np.ndarray
    g_drawn: np.ndarray


def _nominal(spec: ArraySpec) -> ArraySpec:
    return dataclasses.replace(spec, variation=None)


def _linear_outputs(c, g: np.ndarray, x: np.ndarray, spec: ArraySpec) -> np.ndarray:
    volts = np.zeros((len(c.src), x.shape[0]))
    volts[: spec.rows] = x.T
    _, i_src = LinearSolver(c, g).solve(volts)
    return -i_src[output_sources(spec)].T


def programmed_conductance(spec: ArraySpec, states: States | None, v_ref: float
                           ) -> np.ndarray:
    """Chord conductances (S, flattened) of the cells of ``spec`` written to ``states``:
    each cell's card with its device-to-device draws, and its state off the target by
    the draw of the formed state: gap + (x0 − x0_nominal), width · w0/w0_nominal.  The
    spread of the state a cell is left in is the device-to-device spread of the state
    (``x0``/``w0`` entries of the variation spec); without states, the drawn x0/w0."""
    cards = cell_parameters(spec)
    if states is not None:
        card = spec.card
        gap = states.gap_nm.reshape(-1) + (cards["x0"] - card["x0"]) / NM
        width = states.width_nm.reshape(-1) * cards["w0"] / card["w0"]
        cards = formed_state(cards, gap * NM, width * NM)
    return chord_conductance(spec, None, v_ref, params=cards)


def vmm_accuracy(spec: ArraySpec, inputs: np.ndarray, states: States | None = None,
                 v_ref: float = 0.2) -> VmmAccuracy:
    """The products of the input vectors ``inputs`` (k × rows, V) through ``spec`` (a
    1R crossbar; its variation and seed draw the cells) against the target product of
    the nominal cells, cells at their chord conductance at ``v_ref`` (V) and at
    ``states`` (the weights; default each card's x0/w0)."""
    x = vmm_inputs(spec, inputs)
    g_nom = chord_conductance(_nominal(spec), states, v_ref)
    g_drawn = programmed_conductance(spec, states, v_ref) if spec.variation else g_nom
    c = build(spec, 0.0, states)
    target = x @ g_nom.reshape(spec.shape)
    wires = _linear_outputs(c, g_nom, x, spec)
    both = wires if g_drawn is g_nom else _linear_outputs(c, g_drawn, x, spec)
    return VmmAccuracy(target, both, score(x @ g_drawn.reshape(spec.shape), target),
                       score(wires, target), score(both, target),
                       g_nom.reshape(spec.shape), g_drawn.reshape(spec.shape))


def sample_seed(seed: int, sample: int) -> int:
    """The cells' seed of Monte Carlo array ``sample`` of a study seeded ``seed``: a
    counter-based stream, so a sample depends on nothing but the two numbers."""
    ss = np.random.SeedSequence(int(seed), spawn_key=(int(sample),))
    return int(ss.generate_state(1, np.uint32)[0])


COLUMNS = ("sample", "seed", "relative_error", "snr_db", "worst_column_error", "gain",
           "relative_error_after_gain", "variation_relative_error")


def _samples(spec: ArraySpec, x: np.ndarray, states: States | None, v_ref: float,
             seed: int, first: int, last: int) -> list[tuple]:
    """Rows of :data:`COLUMNS` for samples [first, last)."""
    g_nom = chord_conductance(_nominal(spec), states, v_ref)
    target = x @ g_nom.reshape(spec.shape)
    c = build(spec, 0.0, states)
    rows = []
    for k in range(first, last):
        s = sample_seed(seed, k)
        g = programmed_conductance(dataclasses.replace(spec, seed=s), states, v_ref)
        both = score(_linear_outputs(c, g, x, spec), target)
        var = score(x @ g.reshape(spec.shape), target)
        rows.append((k, s, both.relative_error, both.snr_db, both.worst_column_error,
                     both.gain, both.relative_error_after_gain, var.relative_error))
    return rows


@dataclass(frozen=True)
class VmmStudy:
    """Per-sample scores (:data:`COLUMNS`), the deterministic wires-only score and the
    study's provenance."""

    frame: pd.DataFrame
    wires: Score
    provenance: dict
    seconds: float

    def summary(self) -> pd.DataFrame:
        """Median, 5 % and 95 % of each score over the samples."""
        cols = [c for c in COLUMNS if c not in ("sample", "seed")]
        return self.frame[cols].quantile([0.05, 0.5, 0.95]).T.rename(
            columns=lambda q: f"q{100 * q:g}")


def check_study(spec: ArraySpec, samples: int, workers: int = 1, chunk: int = 1) -> None:
    """Refuse a Monte Carlo over arrays that cannot run (before any work)."""
    if spec.variation is None or not spec.variation.of_kind("d2d"):
        raise InputError("a Monte Carlo over arrays needs a variation spec with "
                         "device-to-device entries (e.g. --variation default)")
    if not 1 <= samples <= 10**6:
        raise InputError(f"samples {samples}: valid is 1 .. 1000000")
    if chunk < 1:
        raise InputError(f"chunk ({chunk}) must be >= 1")
    from ..mc.pool import check_workers

    check_workers(workers)


def vmm_monte_carlo(spec: ArraySpec, inputs: np.ndarray, samples: int, seed: int = 0,
                    states: States | None = None, v_ref: float = 0.2, *,
                    workers: int = 1, chunk: int = 25, progress: bool = True,
                    log: Callable[[str], None] | None = None) -> VmmStudy:
    """VMM accuracy (:func:`vmm_accuracy`'s ``both`` and ``variation`` scores) over
    ``samples`` arrays whose cells are drawn from ``spec.variation`` with
    :func:`sample_seed` (``seed``, k); ``workers`` > 1 runs chunks of ``chunk`` samples
    on an embedded Dask cluster."""
    x = vmm_inputs(spec, inputs)
    check_study(spec, samples, workers, chunk)
    t0 = time.perf_counter()
    wires = vmm_accuracy(_nominal(spec), x, states, v_ref).wires
    bounds = [(a, min(a + chunk, samples)) for a in range(0, samples, chunk)]
    from tqdm import tqdm

    from ..mc.pool import TaskPool

    parts: dict[int, list[tuple]] = {}
    tasks = ((spec, x, states, v_ref, seed, a, b) for a, b in bounds)
    with TaskPool(workers) as pool, tqdm(total=samples, unit="array",
                                         desc=f"vmm mc {spec.rows}x{spec.cols}",
                                         disable=None if progress else True) as bar:
        for args, rows in pool.run(_samples, tasks):
            parts[args[-2]] = rows
            bar.update(len(rows))
    frame = pd.DataFrame([r for a, _ in bounds for r in parts[a]], columns=list(COLUMNS))
    seconds = time.perf_counter() - t0
    if log:
        log(f"{samples} arrays in {seconds:.1f} s")
    prov = provenance(spec, study_seed=int(seed), samples=int(samples), v_ref=float(v_ref),
                      inputs_sha256=_digest(x),
                      states_sha256=None if states is None else _digest(
                          np.stack([states.gap_nm, states.width_nm])))
    return VmmStudy(frame, wires, prov, seconds)


def _digest(a: np.ndarray) -> str:
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(a, float).tobytes()).hexdigest()


def save_study(study: VmmStudy, path: str | Path) -> Path:
    """The per-sample table (``.csv`` or ``.parquet``) and its provenance sidecar
    ``<path>.json`` (with the wires-only score and the summary)."""
    path = Path(path)
    if path.suffix not in (".csv", ".parquet"):
        raise InputError(f"--out {path}: the file must end in .csv or .parquet")
    write_table(path, study.frame, {
        **study.provenance,
        "wires_only": {"relative_error": study.wires.relative_error,
                       "snr_db": study.wires.snr_db, "gain": study.wires.gain,
                       "relative_error_after_gain": study.wires.relative_error_after_gain},
        "summary": json.loads(study.summary().to_json())})
    return path
