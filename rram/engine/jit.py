"""Load the compiled engines with a cache keyed by the sources they compile.

numba invalidates a cached function only when *its own* source file changes.  The
integrator inlines the generated kernels of ``rram/_kernels.py`` (and freezes the status
codes and event thresholds as constants), so after the model is regenerated, an engine
file is edited or a different commit is checked out, a plain ``cache=True`` would
silently reuse machine code of the old equations or the old step rule.  The compiled
modules are therefore imported with ``numba.config.CACHE_DIR`` pointing at a directory
named after the sha256 of every source they compile or import from
(:data:`COMPILED_SOURCES`); the previous setting is restored immediately (numba reads it
only when a function is decorated).  The key also holds numba's code-generation settings
(:data:`CODEGEN_DEFAULTS`): a run under ``NUMBA_ENABLE_PROFILING=1`` (``perf``) or
``NUMBA_OPT=0`` compiles slower code (measured: 6x slower kernels), which must not be
what every later run loads.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import numba

PACKAGE = Path(__file__).resolve().parent.parent
#: Sources the compiled engines inline or take constants from: any change gives a new
#: cache directory (tests check that every package module a compiled module imports is
#: here).
COMPILED_SOURCES = tuple(PACKAGE / name for name in (
    "_kernels.py", "events.py", "status.py", "circuits.py", "engine/dense.py",
    "engine/newton.py", "engine/integrator.py", "array/_condense.py"))
#: The modules compiled with the keyed cache (what :func:`load_compiled` is given).
COMPILED = ("rram.engine.integrator", "rram.array._condense")


#: numba settings that change the machine code of a compiled engine, at their defaults.
CODEGEN_DEFAULTS = {"OPT": 3, "DEBUGINFO_DEFAULT": 0, "ENABLE_PROFILING": 0,
                    "BOUNDSCHECK": None, "CPU_NAME": None, "CPU_FEATURES": None}


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/rram/numba/<key>``: the key hashes the kernel sources and the
    code-generation settings that differ from their defaults (so the default key is the
    kernels' hash alone, as before the settings were keyed)."""
    current = {name: getattr(numba.config, name, None) for name in CODEGEN_DEFAULTS}
    extra = "".join(f"{name}={value!r};" for name, value in current.items()
                    if value != CODEGEN_DEFAULTS[name]).encode()
    digest = hashlib.sha256(b"".join(k.read_bytes() for k in COMPILED_SOURCES) + extra
                            ).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rram" / "numba" / digest


def load_integrator() -> ModuleType:
    return load_compiled("rram.engine.integrator")


def load_compiled(name: str) -> ModuleType:
    """Import module ``name`` (the integrator, the array's condensation), whose numba
    functions inline the generated kernels, with the kernel-keyed cache directory (see
    the module docstring)."""
    if name in sys.modules:
        return sys.modules[name]
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(cache_dir())
    try:
        return importlib.import_module(name)
    finally:
        numba.config.CACHE_DIR = previous


integrator = load_integrator()
