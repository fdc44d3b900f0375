"""Scale-out of a Monte Carlo study: chunks of devices, Parquet parts, resume.

The devices are split into chunks; each chunk (all its cycles) is one task, run in this
process (``workers=1``, the default of the Python engine, whose kernels are already
parallel over devices) or on a Dask cluster: an embedded ``LocalCluster`` with one
single-threaded worker process per core (the default of the ngspice engines), or the
scheduler at ``scheduler``.
Each finished chunk is written atomically to ``<out>.parts/chunk-<first>-<last>.parquet``
with its provenance, next to a manifest of the study's fingerprint; the run holds a lock
on the folder throughout (:mod:`rram.mc.store`).  A killed run restarted with ``resume``
verifies the chunks already written and skips them, so no row is lost or duplicated.  At
the end the parts are streamed, in device order, into ``out`` (``.parquet`` or ``.csv``)
with a provenance sidecar ``<out>.json``; memory stays bounded by one chunk per worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, InterruptedRunError
from ..io import write_atomic, write_text_atomic
from ..resources import MiB, require_disk, require_memory
from .pool import TaskPool
from .run import MonteCarlo, run_devices
from .store import (
    Store,
    chunk_path,
    discard_if_empty,
    lock,
    parts_dir,
    prepare,
    write_part,
)

FORMATS = (".parquet", ".csv")
#: Measured costs of a study, for the checks made before it starts: resident memory of
#: a chunk (its rows, ~1.1 kB each measured from 5 000 to 20 000 cycles of one device,
#: and the engine's work arrays, ~3.6 kB a device measured at 20 000 and 40 000
#: devices), and disk per row (a Parquet part ~175 B, the merged output ~175 B as
#: Parquet and ~360 B as CSV).
CHUNK_BASE = 300 * MiB
BYTES_PER_ROW = 1_500
BYTES_PER_DEVICE = 4_000
ROW_BYTES = {".parquet": 200, ".csv": 400}
PART_ROW_BYTES = 200


@dataclass(frozen=True)
class RunInfo:
    out: Path
    rows: int
    failed_rows: int
    chunks_run: int
    chunks_reused: int
    seconds: float


def default_chunk(mc: MonteCarlo) -> int:
    """Devices per chunk: ~20 k device-cycles for the Python engine (a few MB of rows and
    work arrays), ~20 for ngspice (one deck per device)."""
    per = 20_000 if mc.engine == "python" else 20
    return max(1, min(mc.devices, per // (mc.burn_in + mc.cycles) or 1))


def chunk_bytes(mc: MonteCarlo, size: int) -> float:
    """Resident memory (bytes) of simulating a chunk of ``size`` devices."""
    return CHUNK_BASE + size * (BYTES_PER_DEVICE + BYTES_PER_ROW * (mc.burn_in + mc.cycles))


def _run_chunk(mc: MonteCarlo, a: int, b: int, path: str) -> tuple[str, int, int]:
    """Task: simulate devices [a, b) and write their rows (atomically)."""
    frame = run_devices(mc, range(a, b))
    write_part(mc, frame, a, b, Path(path))
    return path, len(frame), int((~frame["converged"]).sum())


def run_mc(mc: MonteCarlo, out: str | Path, *, workers: int | None = None,
           scheduler: str | None = None, chunk: int | None = None, resume: bool = False,
           progress: bool = True, log: Callable[[str], None] | None = None) -> RunInfo:
    """Run the study and write ``out``; see the module docstring.

    ``chunk`` defaults to :func:`default_chunk`, or on resume to the interrupted run's."""
    t0 = time.perf_counter()
    out = Path(out)
    if out.suffix not in FORMATS:
        raise InputError(f"--out {out}: the file must end in {' or '.join(FORMATS)}")
    # the Python engine is already parallel over devices (numba threads): in-process is
    # fastest on one machine (measured 280 vs 191 device-cycles/s with 2 Dask workers)
    if scheduler is not None and workers is not None:
        raise InputError("--workers sizes the local cluster; with --scheduler the cluster's "
                         "own workers run the chunks: leave --workers out")
    workers = workers or (1 if mc.engine == "python" else os.cpu_count() or 1)
    if chunk is not None and chunk < 1:
        raise InputError(f"chunk must be >= 1, got {chunk}")
    pool = TaskPool(workers, scheduler)  # checks both before anything is made
    rows = mc.devices * mc.cycles
    require_disk(f"a study of {mc.devices} devices x {mc.cycles} cycles ({rows} rows)",
                 out.parent, rows * (ROW_BYTES[out.suffix] + PART_ROW_BYTES),
                 "use fewer devices or cycles, or write to another disk")
    parts = parts_dir(out)
    fd = lock(parts, out)  # held until the parts are merged and removed
    try:
        store = prepare(mc, parts, resume, chunk, default_chunk(mc))
        in_memory = 1 if scheduler else workers  # chunks held at once on this machine
        size = min(store.size, mc.devices)
        chunks = "a chunk" if in_memory == 1 else f"{in_memory} chunks"
        require_memory(f"{chunks} of {size} devices x {mc.burn_in + mc.cycles} cycles",
                       in_memory * chunk_bytes(mc, size),
                       "use a smaller --chunk or fewer --workers")
        info = _run(mc, out, store, pool, progress, log)
        shutil.rmtree(parts)
    except KeyboardInterrupt:
        kept = discard_if_empty(parts)
        raise InterruptedRunError(
            f"interrupted: {kept} finished chunk(s) kept in {parts}; the same command with "
            "--resume completes the study" if kept else
            "interrupted before any chunk finished; nothing was written") from None
    except BaseException:
        discard_if_empty(parts)
        raise
    finally:
        os.close(fd)
    return RunInfo(out, info[0], info[1], info[2], len(store.done),
                   time.perf_counter() - t0)


def _run(mc: MonteCarlo, out: Path, store: Store, pool: TaskPool, progress: bool,
         log: Callable[[str], None] | None) -> tuple[int, int, int]:
    """Simulate the missing chunks and merge; (rows, failed rows, chunks run)."""
    from tqdm import tqdm

    parts, bounds = store.parts, store.bounds
    todo = ((mc, a, b, str(chunk_path(parts, a, b))) for a, b in bounds
            if (a, b) not in store.done)
    n_todo = len(bounds) - len(store.done)
    if log and store.done:
        log(f"resuming: {len(store.done)} of {len(bounds)} chunks already done")
    failed = sum(store.done.values())
    # the pool first: a scheduler that cannot be reached fails before any progress bar,
    # which is closed (its line ended) before any error is printed
    with pool if n_todo else contextlib.nullcontext(pool), \
            tqdm(total=mc.devices * mc.cycles,
                 initial=sum(b - a for a, b in store.done) * mc.cycles,
                 unit="device-cycle", desc=f"mc {mc.engine}", smoothing=0.1,
                 disable=None if progress else True) as bar:
        for _, (_, rows, bad) in pool.run(_run_chunk, todo):
            failed += bad
            bar.update(rows)
    rows, left = _assemble(mc, parts, bounds, out)
    write_text_atomic(out.with_name(out.name + ".json"), json.dumps(
        {**mc.fingerprint(), "rows": rows, "failed_rows": failed,
         "out_of_range_rows": left,
         "variation": json.loads(mc.spec.to_json()), "card": json.loads(mc.card.to_json())},
        indent=2, sort_keys=True) + "\n")
    return rows, failed, n_todo


def _assemble(mc: MonteCarlo, parts: Path, bounds, out: Path) -> tuple[int, int]:
    """Stream the parts into ``out`` in device order (one part in memory at a time);
    (rows, rows that left the model's range of validity)."""
    import pyarrow.parquet as pq

    from ..validity import count_out_of_range

    rows = left = 0

    def write(tmp: Path) -> None:
        nonlocal rows, left
        writer = None
        try:
            for i, (a, b) in enumerate(bounds):
                table = pq.read_table(chunk_path(parts, a, b))
                rows += table.num_rows
                frame = table.to_pandas()
                left += count_out_of_range(frame)
                if out.suffix == ".csv":
                    frame.to_csv(tmp, mode="w" if i == 0 else "a", header=i == 0,
                                 index=False)
                else:
                    if writer is None:
                        meta = {b"rram": json.dumps(mc.fingerprint()).encode()}
                        writer = pq.ParquetWriter(tmp, table.schema.with_metadata(meta))
                    writer.write_table(table.replace_schema_metadata(
                        writer.schema.metadata))
        finally:
            if writer is not None:
                writer.close()

    write_atomic(out, write)
    return rows, left
