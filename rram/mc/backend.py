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

import itertools
import json
import logging
import os
import re
import shutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, InterruptedRunError
from ..io import write_atomic, write_text_atomic
from ..resources import MiB, require_disk, require_memory, worker_room
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
#: A Dask scheduler address: [protocol://]host:port (IPv6 hosts in brackets).
SCHEDULER = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?"
                       r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
                       r":(\d{1,5})")
#: Seconds to reach a scheduler before giving up (Dask's default is 30).
CONNECT_TIMEOUT = 5.0
#: Measured costs of a study, for the checks made before it starts: resident memory of
#: a chunk (its rows, ~1.1 kB each measured from 5 000 to 20 000 cycles of one device,
#: and the engine's work arrays, ~3.6 kB a device measured at 20 000 and 40 000
#: devices), of an idle worker process (numba and the model loaded: ~280 MB), and disk
#: per row (a Parquet part ~175 B, the merged output ~175 B as Parquet and ~360 B as
#: CSV).
CHUNK_BASE = 300 * MiB
BYTES_PER_ROW = 1_500
BYTES_PER_DEVICE = 4_000
#: Tasks in flight per Dask worker.
IN_FLIGHT = 2
WORKER_BYTES = 320 * MiB
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


def check_workers(workers: int) -> None:
    """Refuse a local cluster larger than the cores or the memory can serve."""
    cores = os.cpu_count() or 1
    most = min(max(2, cores), worker_room(WORKER_BYTES))
    if workers > most:
        raise InputError(f"--workers {workers}: this machine runs at most {most} worker "
                         f"processes ({cores} cores, ~{WORKER_BYTES // MiB} MiB each); more "
                         "only slow the study down: give at most that, or --scheduler for "
                         "a cluster")


def check_scheduler(address: str) -> str:
    """``address`` if it looks like a Dask scheduler address, else :class:`InputError`."""
    m = SCHEDULER.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 1 <= int(m.group(1)) <= 65535:
        raise InputError(f"--scheduler {address!r}: expected [tcp|tls|ucx|ws|wss://]host:port "
                         "with a port in [1, 65535], e.g. tcp://10.0.0.5:8786")
    return address


def _run_chunk(mc: MonteCarlo, a: int, b: int, path: str) -> tuple[str, int, int]:
    """Task: simulate devices [a, b) and write their rows (atomically)."""
    frame = run_devices(mc, range(a, b))
    write_part(mc, frame, a, b, Path(path))
    return path, len(frame), int((~frame["converged"]).sum())


def _connect(scheduler: str):
    """A client of the scheduler at ``scheduler``, within :data:`CONNECT_TIMEOUT` and a
    few seconds more: Dask's own timeout covers the connection, not the handshake, and
    a port that accepts and never answers would hold it forever.  The attempt runs in a
    daemon thread, abandoned when the deadline passes."""
    from dask.distributed import Client

    box: dict = {}

    def attempt() -> None:
        try:
            box["client"] = Client(scheduler, timeout=f"{CONNECT_TIMEOUT}s")
        except Exception as exc:  # refused, timed out, not a scheduler (any type)
            box["error"] = exc

    thread = threading.Thread(target=attempt, daemon=True, name="rram-connect")
    thread.start()
    thread.join(CONNECT_TIMEOUT + 3.0)
    if "client" in box:
        return box["client"]
    why = box.get("error", f"no answer within {CONNECT_TIMEOUT + 3.0:g} s")
    raise InputError(f"--scheduler {scheduler}: cannot connect ({why})")


def _client(workers: int, scheduler: str | None):
    from dask.distributed import Client, LocalCluster

    if scheduler:
        return _connect(scheduler), None
    # one single-threaded process per worker: numba and ngspice stay serial inside.  The
    # workers inherit the variable as they start; this process must not keep it (numba
    # refuses a thread count that changes once its threads run).
    before = os.environ.get("NUMBA_NUM_THREADS")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    # The workers start with SIGINT ignored, which they inherit and keep: a Ctrl-C reaches
    # every process of the terminal's group, and it is this process that stops the study
    # (each worker printed a traceback).  A Ctrl-C in those ~2 s of start-up is not seen.
    main = threading.current_thread() is threading.main_thread()  # signals live there
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        if main:
            signal.signal(signal.SIGINT, handler)
        if before is None:
            os.environ.pop("NUMBA_NUM_THREADS", None)
    try:
        return Client(cluster), cluster
    except BaseException:
        cluster.close()
        raise


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
    if scheduler is not None:
        check_scheduler(scheduler)
        if workers is not None:
            raise InputError("--workers sizes the local cluster; with --scheduler the "
                             "cluster's own workers run the chunks: leave --workers out")
    workers = workers or (1 if mc.engine == "python" else os.cpu_count() or 1)
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if chunk is not None and chunk < 1:
        raise InputError(f"chunk must be >= 1, got {chunk}")
    if scheduler is None:
        check_workers(workers)
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
        info = _run(mc, out, store, workers, scheduler, progress, log)
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


def _run(mc: MonteCarlo, out: Path, store: Store, workers: int, scheduler: str | None,
         progress: bool, log: Callable[[str], None] | None) -> tuple[int, int, int]:
    """Simulate the missing chunks and merge; (rows, failed rows, chunks run)."""
    parts, bounds = store.parts, store.bounds
    todo = ((a, b) for a, b in bounds if (a, b) not in store.done)
    n_todo = len(bounds) - len(store.done)
    if log and store.done:
        log(f"resuming: {len(store.done)} of {len(bounds)} chunks already done")
    # connect first: a scheduler that cannot be reached fails before any progress bar
    client, cluster = _client(workers, scheduler) if n_todo and (workers > 1 or scheduler) \
        else (None, None)
    from tqdm import tqdm

    failed = sum(store.done.values())
    # the bar is closed (its line ended) before any error is printed
    with tqdm(total=mc.devices * mc.cycles,
              initial=sum(b - a for a, b in store.done) * mc.cycles, unit="device-cycle",
              desc=f"mc {mc.engine}", smoothing=0.1, disable=None if progress else True
              ) as bar:
        if client is None:
            for a, b in todo:
                _, rows, bad = _run_chunk(mc, a, b, str(chunk_path(parts, a, b)))
                failed += bad
                bar.update(rows)
        else:
            try:
                from dask.distributed import as_completed

                def submit(ab: tuple[int, int]):
                    return client.submit(_run_chunk, mc, *ab, str(chunk_path(parts, *ab)),
                                         pure=False)

                # a bounded window of tasks in flight: chunks are made as they are run
                window = IN_FLIGHT * max(1, len(client.scheduler_info()["workers"]))
                running = as_completed([submit(ab) for ab in itertools.islice(todo, window)])
                for fut in running:
                    _, rows, bad = fut.result()
                    failed += bad
                    bar.update(rows)
                    if (ab := next(todo, None)) is not None:
                        running.add(submit(ab))
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    rows = _assemble(mc, parts, bounds, out)
    write_text_atomic(out.with_name(out.name + ".json"), json.dumps(
        {**mc.fingerprint(), "rows": rows, "failed_rows": failed,
         "variation": json.loads(mc.spec.to_json()), "card": json.loads(mc.card.to_json())},
        indent=2, sort_keys=True) + "\n")
    return rows, failed, n_todo


def _assemble(mc: MonteCarlo, parts: Path, bounds, out: Path) -> int:
    """Stream the parts into ``out`` in device order (one part in memory at a time)."""
    import pyarrow.parquet as pq

    rows = 0

    def write(tmp: Path) -> None:
        nonlocal rows
        writer = None
        try:
            for i, (a, b) in enumerate(bounds):
                table = pq.read_table(chunk_path(parts, a, b))
                rows += table.num_rows
                if out.suffix == ".csv":
                    table.to_pandas().to_csv(tmp, mode="w" if i == 0 else "a",
                                             header=i == 0, index=False)
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
    return rows
