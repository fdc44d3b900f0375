"""Where the tasks of a study run: this process, an embedded Dask cluster, or a scheduler.

:class:`TaskPool` is the one way the Monte Carlo of devices and the Monte Carlo over
arrays spread their chunks: in this process (one worker, no scheduler), or on a Dask
cluster (an embedded ``LocalCluster`` of single-threaded worker processes, or the
scheduler at an address), with a bounded window of tasks in flight, so that the tasks
are made as they are run (10^8 chunks are never a list).  The cluster is started or
reached when the pool is entered, before any work, and closed when it is left.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import InputError
from ..resources import MiB, worker_room

#: A Dask scheduler address: [protocol://]host:port (IPv6 hosts in brackets).
SCHEDULER = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?"
                       r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
                       r":(\d{1,5})")
#: Seconds to reach a scheduler before giving up (Dask's default is 30).
CONNECT_TIMEOUT = 5.0
#: Tasks in flight per Dask worker.
IN_FLIGHT = 2
#: Resident memory of an idle worker process (numba and the model loaded: ~280 MB).
WORKER_BYTES = 320 * MiB


def check_scheduler(address: str) -> str:
    """``address`` if it looks like a Dask scheduler address, else :class:`InputError`."""
    m = SCHEDULER.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 1 <= int(m.group(1)) <= 65535:
        raise InputError(f"--scheduler {address!r}: expected [tcp|tls|ucx|ws|wss://]host:port "
                         "with a port in [1, 65535], e.g. tcp://10.0.0.5:8786")
    return address


def check_workers(workers: int) -> None:
    """Refuse a local cluster larger than the cores or the memory can serve."""
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    cores = os.cpu_count() or 1
    most = min(max(2, cores), worker_room(WORKER_BYTES))
    if workers > most:
        raise InputError(f"--workers {workers}: this machine runs at most {most} worker "
                         f"processes ({cores} cores, ~{WORKER_BYTES // MiB} MiB each); more "
                         "only slow the study down: give at most that, or --scheduler for "
                         "a cluster")


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


def _local_cluster(workers: int):
    from dask.distributed import Client, LocalCluster

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
        # Dask's own logs stay quiet below CRITICAL: a task's failure reaches the study as
        # its exception, and the lines a Ctrl-C's shutdown logs ("Couldn't gather keys",
        # a worker's lost heartbeat) are not errors the user should read
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
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


def _quiet_dask() -> None:
    """Silence Dask's own logging while a study stops (its cancelled futures are not
    errors the user should read)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


class TaskPool:
    """Runs ``task(*args)`` for each ``args`` (see the module docstring): ``workers`` = 1
    and no ``scheduler`` run them here, in order; otherwise on a Dask cluster."""

    def __init__(self, workers: int = 1, scheduler: str | None = None) -> None:
        if scheduler is not None:
            check_scheduler(scheduler)
        else:
            check_workers(workers)
        self.workers, self.scheduler = workers, scheduler
        self.client = self.cluster = None

    @property
    def local(self) -> bool:
        return self.workers == 1 and self.scheduler is None

    def __enter__(self) -> TaskPool:
        if self.scheduler is not None:
            self.client = _connect(self.scheduler)
        elif not self.local:
            self.client, self.cluster = _local_cluster(self.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            _quiet_dask()  # the study stops: the study's message is the one line
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def run(self, task: Callable[..., Any], args: Iterable[tuple]
            ) -> Iterator[tuple[tuple, Any]]:
        """``(args, task(*args))`` for each ``args``, as each task ends."""
        todo = iter(args)
        if self.client is None:
            for a in todo:
                yield a, task(*a)
            return
        from dask.distributed import as_completed

        def submit(a: tuple):
            future = self.client.submit(task, *a, pure=False)
            submitted[future.key] = a
            return future

        submitted: dict[str, tuple] = {}
        window = IN_FLIGHT * max(1, len(self.client.scheduler_info()["workers"]))
        running = as_completed([submit(a) for a in itertools.islice(todo, window)])
        try:
            for future in running:
                yield submitted.pop(future.key), future.result()
                if (a := next(todo, None)) is not None:
                    running.add(submit(a))
        except KeyboardInterrupt:
            # the scheduler logs the futures a Ctrl-C forgets ("Couldn't gather keys")
            # as they go: a second line after the one the user should read
            _quiet_dask()
            raise
