"""Render every generated artefact from the single model definition.

Generated files are deterministic (no dates) and committed; ``tests/test_generated.py``
re-renders them and fails on any difference.  Run ``rram generate`` after changing the
equations, the card or a printer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .circuits import build_circuit
from .model import MODEL

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent

#: Circuit kinds of the Python engine, in kernel-dispatch order.
CIRCUIT_KINDS = ("resistor", "compliance", "1t1r")


def render_kernels() -> str:
    from .printers.numpy_printer import render_module

    return render_module(MODEL, [build_circuit(k) for k in CIRCUIT_KINDS])


def render_subckt_library() -> str:
    from .printers.spice_printer import render_subckt

    return render_subckt(MODEL)


def render_veriloga() -> str:
    from .printers.veriloga_printer import render_module

    return render_module(MODEL)


def render_testbench(kind: str) -> str:
    from .spice.decks import build
    from .spice.testbench import ModelRef

    return build(kind, model=ModelRef("subckt", "../ngspice/rram.lib"),
                 print_results=True).render()


def render_netlists_readme() -> str:
    from .spice.decks import KINDS, SETTINGS

    rows = "\n".join(f"| `testbenches/{k}.cir` | " + "; ".join(
        f"{n} = {v[0]:g}" for n, v in SETTINGS[k].items()) + " |" for k in KINDS)
    return NETLISTS_README.format(rows=rows)


NETLISTS_README = """# Generated netlists

Everything in this folder is rendered by `rram generate` from the model equations
(`rram/equations.py`) and the default card; do not edit it by hand
(`tests/test_generated.py` fails on any difference).

- `ngspice/rram.lib`: `.subckt rram te be`, every card parameter an instance parameter
  (B-sources; no Verilog-A needed).  Use it with `.include`.
- `veriloga/rram.va`: CMC-style Verilog-A module `rram (te, be)`; compile it with
  `openvaf-r rram.va` and load the `.osdi` in ngspice with `pre_osdi`.
- `testbenches/*.cir`: standalone decks using the subcircuit; run `ngspice -b FILE`.

Testbench settings (change them with `rram netlist KIND --set NAME=VALUE --out FILE`,
which also writes OSDI decks with `--model osdi --model-path FILE.osdi`):

| deck | settings |
|---|---|
{rows}

Decks use `.options klu method=gear reltol=1e-4`: Gear (BDF2) is L-stable, while
trapezoidal integration rings on the ~10 ps thermal node and on the stiff SET; at
ngspice's default reltol = 1e-3 the RESET onset of a 1T1R cell can move by tens of per
cent.  For reference-grade accuracy of fast transients (overshoot), tighten further
(`--option reltol=1e-6 --option chgtol=1e-18 --option abstol=1e-15`).
"""


def artefacts() -> dict[Path, Callable[[], str]]:
    """Generated file path -> function rendering its content."""
    from functools import partial

    from .spice.decks import KINDS

    netlists = REPO_DIR / "netlists"
    out: dict[Path, Callable[[], str]] = {
        PACKAGE_DIR / "_kernels.py": render_kernels,
        netlists / "ngspice" / "rram.lib": render_subckt_library,
        netlists / "veriloga" / "rram.va": render_veriloga,
        netlists / "README.md": render_netlists_readme,
    }
    for kind in KINDS:
        out[netlists / "testbenches" / f"{kind}.cir"] = partial(render_testbench, kind)
    return out


def write_all() -> list[Path]:
    from .io import write_text_atomic

    changed = []
    for path, render in artefacts().items():
        text = render()
        if not path.exists() or path.read_text() != text:
            write_text_atomic(path, text)
            changed.append(path)
    return changed
