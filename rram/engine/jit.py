"""Load the compiled engines of a model, with a cache keyed by the sources they compile.

numba invalidates a cached function only when *its own* source file changes.  The
integrator inlines the generated kernels of ``rram/_kernels.py`` (and freezes the status
codes and event thresholds as constants), so after the model is regenerated, an engine
file is edited or a different commit is checked out, a plain ``cache=True`` would
silently reuse machine code of the old equations or the old step rule.  The compiled
modules are therefore imported with ``numba.config.CACHE_DIR`` pointing at a directory
named after the sha256 of every source they compile or import from
(:data:`COMPILED_SOURCES`, the kernels' text in place of ``_kernels.py``); the previous
setting is restored immediately (numba reads it only when a function is decorated).  The
key also holds numba's code-generation settings (:data:`CODEGEN_DEFAULTS`): a run under
``NUMBA_ENABLE_PROFILING=1`` (``perf``) or ``NUMBA_OPT=0`` compiles slower code
(measured: 6x slower kernels), which must not be what every later run loads.

The engines are keyed to the model (:func:`load_compiled`): the default model's kernels
are the committed ``rram/_kernels.py`` (a test re-renders them; another model whose
kernels render to the same text shares them), and the compiled modules are the
package's own.  Another model's kernels are rendered into
``$XDG_CACHE_HOME/rram/kernels/<key>/`` and imported under a name of their own, and each
compiled module is imported again from its own file under a name carrying the key, with
``rram._kernels`` (and the compiled modules it imports) bound to that model's for the
time of the import: the same engine code, compiled once per model.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numba

from ..model import MODEL, Model

PACKAGE = Path(__file__).resolve().parent.parent
#: Sources the compiled engines inline or take constants from: any change gives a new
#: cache directory (tests check that every package module a compiled module imports is
#: here).
COMPILED_SOURCES = tuple(PACKAGE / name for name in (
    "_kernels.py", "events.py", "status.py", "engine/dense.py",
    "engine/newton.py", "engine/integrator.py", "array/_condense.py"))
#: The modules compiled with the keyed cache (what :func:`load_compiled` is given).
COMPILED = ("rram.engine.newton", "rram.engine.integrator", "rram.array._condense")


#: numba settings that change the machine code of a compiled engine, at their defaults.
CODEGEN_DEFAULTS = {"OPT": 3, "DEBUGINFO_DEFAULT": 0, "ENABLE_PROFILING": 0,
                    "BOUNDSCHECK": None, "CPU_NAME": None, "CPU_FEATURES": None}


def _cache_base() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rram"


def cache_dir(kernels: str | None = None) -> Path:
    """``$XDG_CACHE_HOME/rram/numba/<key>``: the key hashes the compiled sources (with
    ``kernels``, a model's kernel text, in place of ``rram/_kernels.py``) and the
    code-generation settings that differ from their defaults."""
    current = {name: getattr(numba.config, name, None) for name in CODEGEN_DEFAULTS}
    extra = "".join(f"{name}={value!r};" for name, value in current.items()
                    if value != CODEGEN_DEFAULTS[name]).encode()
    sources = [k.read_bytes() if kernels is None or k.name != "_kernels.py"
               else kernels.encode() for k in COMPILED_SOURCES]
    digest = hashlib.sha256(b"".join(sources) + extra).hexdigest()[:16]
    return _cache_base() / "numba" / digest


@functools.lru_cache(maxsize=8)
def _kernel_text(model: Model) -> str:
    from ..circuits import kernel_source

    return kernel_source(model)


@functools.lru_cache(maxsize=1)
def _committed_kernels() -> str:
    return (PACKAGE / "_kernels.py").read_text()


def load_integrator(model: Model) -> ModuleType:
    """The compiled integrator of ``model``."""
    return load_compiled("rram.engine.integrator", model)


def load_compiled(name: str, model: Model) -> ModuleType:
    """Import module ``name`` (one of :data:`COMPILED`), whose numba functions inline the
    generated kernels of ``model``, with the kernel-keyed cache directory (see the module
    docstring)."""
    if name not in COMPILED:
        raise ValueError(f"{name!r} is not a compiled engine module ({', '.join(COMPILED)})")
    if model is MODEL:  # the committed kernels are its (tests/test_generated.py)
        return _import(name, cache_dir())
    text = _kernel_text(model)
    if text == _committed_kernels():
        return _import(name, cache_dir())
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    alias = f"{name}__{key}"
    if alias in sys.modules:
        return sys.modules[alias]
    kernels = _kernels_module(text, key)
    bound = {"rram._kernels": kernels}
    # the compiled modules a compiled module imports, bound to this model's copies
    for dep in ("rram.engine.newton", "rram.engine.integrator"):
        if dep != name and _imports(name, dep):
            bound[dep] = load_compiled(dep, model) if dep in COMPILED \
                else _copy(dep, f"{dep}__{key}", bound, cache_dir(text))
    return _copy(name, alias, bound, cache_dir(text))


def _import(name: str, cache: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(cache)
    try:
        return importlib.import_module(name)
    finally:
        numba.config.CACHE_DIR = previous


def _imports(name: str, dep: str) -> bool:
    """Whether module ``name`` imports module ``dep`` (directly)."""
    import ast

    path = Path(importlib.util.find_spec(name).origin)
    package = name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                 package) if node.level else node.module
            if target == dep:
                return True
    return False


def _kernels_module(text: str, key: str) -> ModuleType:
    """A model's kernels, written into the cache and imported as ``rram._kernels_<key>``."""
    from ..io import write_text_atomic

    name = f"rram._kernels_{key}"
    if name in sys.modules:
        return sys.modules[name]
    path = _cache_base() / "kernels" / key / f"kernels_{key}.py"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)  # the cache is ours to create
        write_text_atomic(path, text)
    return _copy(name, name, {}, cache_dir(text), path)


def _copy(name: str, alias: str, bound: dict[str, ModuleType], cache: Path,
          path: Path | None = None) -> ModuleType:
    """Module ``name`` (or the file ``path``) executed as ``alias``, with the modules of
    ``bound`` in ``sys.modules`` under their names while it runs."""
    if alias in sys.modules:
        return sys.modules[alias]
    origin = path or Path(importlib.util.find_spec(name).origin)
    spec = importlib.util.spec_from_file_location(alias, origin)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = name.rsplit(".", 1)[0] if path is None else "rram"
    saved = {k: sys.modules.get(k) for k in bound}
    previous = numba.config.CACHE_DIR
    sys.modules.update(bound)
    sys.modules[alias] = module
    numba.config.CACHE_DIR = str(cache)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(alias, None)
        raise
    finally:
        numba.config.CACHE_DIR = previous
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module
