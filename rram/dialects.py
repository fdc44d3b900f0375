"""The two ways an ngspice deck holds the cell, each spelt once: the subcircuit library
(``subckt``: B-sources, ``.include``) and the compiled Verilog-A module (``osdi``:
``pre_osdi``, a ``.model`` card, OpenMP threads pinned).

Every netlister (testbenches, array decks, statistical libraries, the runner's labels,
the command line's choices) asks its :class:`Dialect` how to load the model, name an
instance, name an internal node's vector and whether model parameters need a ``.model``
card, instead of testing the kind itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

#: Why every OSDI deck sets ``num_threads=1`` (written into the deck as a comment).
#: ngspice 46 evaluates OSDI models with OpenMP; Debian's spinit sets
#: ``num_threads=8``, and on a loaded 2-core machine a 20-loop 1T1R deck took 5.6-7.9 s
#: with it and 0.5 s with one thread.  ``.options num_threads=1`` alone does not help
#: there: the spinit's global variable shadows the deck's option, so decks that load the
#: model themselves also ``set num_threads=1`` in their ``.control`` block (the runner's
#: session sets it once for the shared library, :mod:`rram.spice.ngspice`).
OSDI_THREADS_NOTE = ("* num_threads=1: ngspice 46 evaluates OSDI models with OpenMP threads, "
                     "10-80x slower on a loaded machine; 'set num_threads=1' beside pre_osdi "
                     "overrides spinit's value, which .options alone does not")
ONE_THREAD = "num_threads=1"


@dataclass(frozen=True)
class Dialect:
    """How a deck spells a cell of one model rendering.

    ``kind`` is the rendering (``subckt``, ``osdi``); ``engine`` the name results and
    the command line give it (``ngspice``: the subcircuit; ``veriloga``: the module);
    ``export_format`` the ``rram export --format`` that writes its source; ``suffix``
    its model file's; ``prefix`` its instances' SPICE letter; ``separator`` what joins
    an instance and its internal node in ngspice's vector names.  A ``compiled`` model
    takes its model parameters on a ``.model`` card (instance parameters on the
    instance line) and runs with one OpenMP thread.  ``solver`` is the linear solver of
    its transient decks (an ``.options`` word; empty: ngspice's default, Sparse 1.3).

    The solvers differ.  OSDI decks use KLU: with Sparse 1.3 a 1T1R cell whose
    transistor is off at t = 0 meets a near-singular DC matrix.  Subcircuit decks use
    Sparse 1.3: KLU refactorises with the pivots of the first factorisation, and the
    B-sources' Jacobian changes by decades at the abrupt SET and at a RESET through a
    series resistance (KLU then reports a singular matrix and the step collapses),
    while Sparse 1.3 re-pivots and runs every deck."""

    kind: str
    engine: str
    export_format: str
    suffix: str
    prefix: str
    separator: str
    compiled: bool
    solver: str

    def instance(self, name: str) -> str:
        """The instance name of cell ``name`` (``Xcell``, ``Ncell``)."""
        return self.prefix + name

    def vector(self, instance: str, internal: str) -> str:
        """ngspice's vector of ``internal`` node of ``instance`` (its full name)."""
        return f"v({instance.lower()}{self.separator}{internal})"

    def load(self, path: str, threads: str = ONE_THREAD) -> list[str]:
        """The deck lines that load the model file ``path`` (validated by the caller)."""
        if not self.compiled:
            return [f".include {path}"]
        return [".control", f"pre_osdi {path}", f"set {threads}", ".endc"]

    def note(self) -> list[str]:
        """The comment a deck of this dialect carries (why one thread)."""
        return [OSDI_THREADS_NOTE] if self.compiled else []


SUBCKT = Dialect("subckt", "ngspice", "spice", ".lib", "X", ".", compiled=False, solver="")
OSDI = Dialect("osdi", "veriloga", "veriloga", ".osdi", "N", "#", compiled=True, solver="klu")
DIALECTS = {d.kind: d for d in (SUBCKT, OSDI)}
#: The renderings' kinds, for choices and messages.
KINDS = tuple(DIALECTS)
#: Engine name (results, ``--engine``) → the rendering it runs.
BY_ENGINE = {d.engine: d for d in DIALECTS.values()}
#: ``rram export --format`` → the rendering it writes the source of.
BY_FORMAT = {d.export_format: d for d in DIALECTS.values()}


def dialect(kind: str, what: str = "model kind") -> Dialect:
    """The dialect of ``kind``; an :class:`InputError` naming the valid kinds otherwise."""
    try:
        return DIALECTS[kind]
    except (KeyError, TypeError):
        raise InputError(f"{what} {kind!r} is not one of {', '.join(KINDS)}") from None


__all__ = ["BY_ENGINE", "BY_FORMAT", "DIALECTS", "KINDS", "ONE_THREAD", "OSDI", "OSDI_THREADS_NOTE",
           "SUBCKT", "Dialect", "dialect"]
