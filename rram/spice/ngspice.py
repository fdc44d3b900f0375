"""The one adapter between rram and ngspice's shared library (through PySpice 1.5).

It owns every PySpice trap so nothing else has to know them:

* **Library lookup.** PySpice 1.5 dlopens ``libngspice.so`` at import time; Debian's
  ``libngspice0`` ships only ``libngspice.so.0``.  ``NGSPICE_LIBRARY_PATH`` is set to
  the library actually found *before* PySpice is imported.
* **Version.** The running ngspice version is registered in PySpice's
  ``SIMULATION_TYPE`` table (the vector-type layout has not changed since 34), so there
  is no "Unsupported Ngspice version" warning.
* **Output classification.** PySpice treats any stderr line that does not start with
  "Warning:" as an error and logs it (ngspice ≥ 42 prints "Using SPARSE …", gmin stepping
  prints "Note: …").  The output callback is replaced by one that only collects the lines;
  commands go through the shared library directly and the lines are classified by
  :func:`classify`: real errors become typed exceptions carrying the analysis and the time
  (:class:`NgspiceError`, :class:`~rram.errors.ConvergenceError`), the rest is kept in
  :attr:`RunResult.messages`.
* **Threads.** ``set num_threads=1``: ngspice 46 parallelises OSDI evaluation with
  OpenMP, which starves on a loaded 2-core machine.
* **Memory.** Each run is loaded with ``ngSpice_Circ`` and removed with ``remcirc`` and
  ``destroy all`` afterwards, so thousands of runs in one process stay flat.
* **numpy 2.** Vectors are copied out of ngspice's buffers as float arrays; nothing
  calls ``float()`` on a PySpice ``WaveForm``.
"""

from __future__ import annotations

import ctypes.util
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConvergenceError, SimulationError

LIBRARY_CANDIDATES = ("libngspice.so", "libngspice.so.0")
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                "/usr/lib", "/usr/local/lib")

#: stderr/stdout lines that are information, not errors.
INFO_PATTERNS = tuple(re.compile(p) for p in (
    r"^Using (SPARSE|KLU)", r"^Note:", r"^Trying", r"^Supplies reduced", r"^Warning:",
    r"^Doing analysis", r"^Reference value", r"^No\. of Data Rows", r"^\s*$",
    r"^Circuit:", r"^Initial Transient Solution", r"^\s*(Node|----)", r"^Gmin step",
    r"^gmin step", r"^source step", r"^Source step", r"^Total", r"^Transient",
    r"^binary raw file", r"^ngspice", r"^Executing", r"^Simulation", r"^\s*Date:",
))
ERROR_PATTERNS = tuple(re.compile(p, re.I) for p in (
    r"^Error", r"error:", r"Timestep too small", r"simulation\(s\) aborted",
    r"singular matrix", r"unknown (model|device|subckt)", r"could not find",
    r"Too many iterations", r"no such", r"can't find", r"cannot",
))
TIMESTEP = re.compile(
    r"doAnalyses:\s*(\w+):\s*Timestep too small;\s*time\s*=\s*([-+0-9.eE]+)", re.I)


class NgspiceError(SimulationError):
    """ngspice reported an error (parse, load, analysis); ``messages`` holds its output."""

    def __init__(self, message: str, messages: Iterable[str] = (), **kw):
        super().__init__(message, **kw)
        self.messages = list(messages)


def classify(lines: Iterable[str]) -> list[str]:
    """The lines that report errors (informational lines are dropped)."""
    errors = []
    for line in lines:
        text = line.strip()
        if any(p.search(text) for p in ERROR_PATTERNS) and not text.startswith("Warning:"):
            errors.append(text)
    return errors


def find_library() -> str:
    """Path of the ngspice shared library (``NGSPICE_LIBRARY_PATH`` wins)."""
    env = os.environ.get("NGSPICE_LIBRARY_PATH")
    if env and Path(env).exists():
        return env
    for d in LIBRARY_DIRS:
        for name in LIBRARY_CANDIDATES:
            if (Path(d) / name).exists():
                return str(Path(d) / name)
    found = ctypes.util.find_library("ngspice")
    if found:
        return found
    raise SimulationError(
        "the ngspice shared library (libngspice.so) was not found; run `make test` or "
        "install libngspice0 (Debian: apt-get install -t bookworm-backports libngspice0), "
        "or set NGSPICE_LIBRARY_PATH")


def ngspice_version_of_binary() -> int | None:
    """Major version of the ``ngspice`` executable on PATH, or None."""
    try:
        out = subprocess.run(["ngspice", "-v"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"ngspice-(\d+)", out.stdout + out.stderr)
    return int(m.group(1)) if m else None


@dataclass
class RunResult:
    vectors: dict[str, np.ndarray]
    messages: list[str]


class NgspiceSession:
    """One ngspice shared-library instance in this process (created on first use)."""

    _instance: NgspiceSession | None = None

    def __init__(self) -> None:
        library = find_library()
        os.environ["NGSPICE_LIBRARY_PATH"] = library
        # PySpice reads the variable when the module is imported: import only now.
        from PySpice.Spice.NgSpice import Shared
        from PySpice.Spice.NgSpice.SimulationType import SIMULATION_TYPE

        Shared.NgSpiceShared.LIBRARY_PATH = library
        self._register_version(SIMULATION_TYPE)
        self._ffi = Shared.ffi
        self._ng = _quiet_shared_class(Shared).new_instance()
        self._lib = self._ng._ngspice_shared
        self.version = int(self._ng._ngspice_version)
        self._loaded_osdi: set[str] = set()
        self.command("set num_threads=1")
        self.runs = 0
        #: When set, each run's ``rusage all`` figures (timepoints, iterations, load and
        #: analysis times) are kept in :attr:`rusage` (benchmarks; off by default).
        self.record_rusage = False
        self.rusage: dict[str, float] = {}

    @staticmethod
    def _register_version(table: dict) -> None:
        # The vector-type table is the same from ngspice 34 on; register versions up to
        # 60 so PySpice does not warn about a version it has not seen.
        for v in range(34, 61):
            table.setdefault(v, table["last"])

    @classmethod
    def get(cls) -> NgspiceSession:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    # Low-level commands ------------------------------------------------------
    def _collect(self) -> list[str]:
        lines = list(self._ng._stdout) + list(self._ng._stderr)
        self._ng.clear_output()
        self._ng._error_in_stdout = self._ng._error_in_stderr = False
        return lines

    def command(self, text: str) -> list[str]:
        """Run one ngspice command; returns its output lines (errors are not raised)."""
        if "\n" in text or len(text) > 1000:
            raise ValueError("an ngspice command is one short line")
        self._ng.clear_output()
        self._lib.ngSpice_Command(text.encode("ascii"))
        return self._collect()

    def load_osdi(self, path: str | Path) -> None:
        path = str(Path(path).resolve())
        if path in self._loaded_osdi:
            return
        lines = self.command(f"osdi {path}")
        errors = classify(lines)
        if errors:
            raise NgspiceError(f"ngspice could not load {path}: {errors[0]}", lines,
                               analysis="load")
        self._loaded_osdi.add(path)

    def run(self, deck: str, vectors: Iterable[str] | None = None) -> RunResult:
        """Load ``deck`` (with its analysis line), run it, return the vectors.

        Raises :class:`~rram.errors.ConvergenceError` for "timestep too small" (with the
        time and the analysis) and :class:`NgspiceError` for other failures.
        """
        lines = [ln for ln in deck.splitlines() if ln.strip()] + [""]
        keep = [self._ffi.new("char[]", ln.encode("utf-8")) for ln in lines]
        array = self._ffi.new("char *[]", [*keep, self._ffi.NULL])
        self._ng.clear_output()
        self._lib.ngSpice_Circ(array)
        messages = self._collect()
        errors = classify(messages)
        if errors:
            self._cleanup()
            raise NgspiceError(f"ngspice rejected the deck: {errors[0]}", messages,
                               analysis="parse")
        self._lib.ngSpice_Command(b"run")
        messages += self._collect()
        try:
            self._raise_for(messages)
            result = RunResult(self._vectors(vectors), messages)
            if self.record_rusage:
                self.rusage = parse_rusage(self.command("rusage all"))
        finally:
            self._cleanup()
        self.runs += 1
        return result

    def _raise_for(self, messages: list[str]) -> None:
        for line in messages:
            m = TIMESTEP.search(line)
            if m:
                raise ConvergenceError(
                    f"ngspice: timestep too small in {m.group(1).lower()} at t = "
                    f"{float(m.group(2)):.6g} s ({line.strip()})",
                    time_s=float(m.group(2)), analysis=m.group(1).lower())
        errors = classify(messages)
        if errors:
            raise NgspiceError(f"ngspice failed: {errors[0]}", messages, analysis="run")

    def _vectors(self, wanted: Iterable[str] | None) -> dict[str, np.ndarray]:
        plot = self._ffi.string(self._lib.ngSpice_CurPlot()).decode()
        names_c = self._lib.ngSpice_AllVecs(plot.encode())
        names, i = [], 0
        while names_c[i] != self._ffi.NULL:
            names.append(self._ffi.string(names_c[i]).decode())
            i += 1
        want = None if wanted is None else {w.lower() for w in wanted}
        out: dict[str, np.ndarray] = {}
        for name in names:
            key = name.lower()
            if want is not None and key not in want and _alias(key) not in want:
                continue
            info = self._lib.ngGet_Vec_Info(f"{plot}.{name}".encode())
            n = info.v_length
            if info.v_realdata != self._ffi.NULL:
                buf = self._ffi.buffer(info.v_realdata, n * 8)
                out[_alias(key)] = np.frombuffer(buf, dtype=np.float64).copy()
        if want is not None:
            missing = sorted(w for w in want if w not in out)
            if missing:
                raise NgspiceError(f"ngspice produced no vector(s) {', '.join(missing)}",
                                   analysis="run")
        return out

    def _cleanup(self) -> None:
        for cmd in (b"destroy all", b"remcirc"):
            self._lib.ngSpice_Command(cmd)
        self._collect()


RUSAGE_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z .()]*?)\s*=\s*([-+0-9.eE]+)\s*$")


def parse_rusage(lines: Iterable[str]) -> dict[str, float]:
    """``rusage all`` output as {name: value}, e.g. "Transient iterations" -> 4259."""
    out = {}
    for line in lines:
        m = RUSAGE_LINE.match(line)
        if m:
            out[m.group(1).strip()] = float(m.group(2))
    return out


def _quiet_shared_class(Shared):
    """PySpice's shared-library class with an output callback that only collects.

    The stock callback logs every stderr line as an error (or a warning) and flags an
    error for "Using SPARSE ..." and "Note: ..." lines; here the lines are kept for
    :func:`classify`, which decides what an error is.
    """

    class QuietShared(Shared.NgSpiceShared):
        @staticmethod
        def _send_char(message_c, ngspice_id, user_data):
            self = Shared.ffi.from_handle(user_data)
            prefix, _, content = Shared.ffi_string_utf8(message_c).partition(" ")
            (self._stderr if prefix == "stderr" else self._stdout).append(content)
            return 0

    return QuietShared


def _alias(name: str) -> str:
    """ngspice vector name as written in a deck: 'x.y' node names become 'v(x.y)'."""
    if name in ("time",) or name.startswith(("v(", "i(")):
        return name
    if name.endswith("#branch"):
        return f"i({name[:-7]})"
    return f"v({name})"
