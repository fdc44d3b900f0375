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


def artefacts() -> dict[Path, Callable[[], str]]:
    """Generated file path -> function rendering its content."""
    return {PACKAGE_DIR / "_kernels.py": render_kernels}


def write_all() -> list[Path]:
    from .io import write_text_atomic

    changed = []
    for path, render in artefacts().items():
        text = render()
        if not path.exists() or path.read_text() != text:
            write_text_atomic(path, text)
            changed.append(path)
    return changed
