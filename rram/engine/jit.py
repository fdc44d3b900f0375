"""Load the compiled integrator with a cache keyed by the generated kernels.

numba invalidates a cached function only when *its own* source file changes.  The
integrator inlines the generated kernels of ``rram/_kernels.py``, so after the model is
regenerated (or a different commit is checked out) a plain ``cache=True`` would silently
reuse machine code of the old equations.  The integrator is therefore imported with
``numba.config.CACHE_DIR`` pointing at a directory named after the sha256 of the kernel
source; the previous setting is restored immediately (numba reads it only when a
function is decorated).
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
#: Sources the compiled engines inline: any change gives a new cache directory.
KERNELS = (PACKAGE / "_kernels.py", PACKAGE / "_kernels_soa.py", PACKAGE / "vmath.py")


def cache_dir() -> Path:
    digest = hashlib.sha256(b"".join(k.read_bytes() for k in KERNELS)).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rram" / "numba" / digest


def load_integrator() -> ModuleType:
    return load_compiled("rram.engine.integrator")


def load_compiled(name: str) -> ModuleType:
    """Import module ``name`` (the per-device integrator, ``rram.engine.lockstep``, the
    array's condensation), whose numba functions inline the generated kernels, with the
    kernel-keyed cache directory (see the module docstring)."""
    if name in sys.modules:
        return sys.modules[name]
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(cache_dir())
    try:
        return importlib.import_module(name)
    finally:
        numba.config.CACHE_DIR = previous


integrator = load_integrator()
