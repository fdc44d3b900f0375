"""The model's hints to a SPICE simulator: where the gap runs away (step control), and
which branch voltage Newton's iterates must not fly past (limiting).

The gap has two runaways, and a step must resolve both.

* **SET**: a gap held at its voltage closes faster the more it has closed (the field
  V_g/x rises), so its rate grows with the state itself: the partial growth rate
  ``λ_V = ∂rate/∂x`` at fixed node potentials is positive.
* **RESET**: the runaway goes through the circuit.  As the gap opens the cell's
  resistance rises and, behind a series resistance or a current source, the gap takes
  more of the voltage, which opens it faster.  At a fixed gap current, the worst case of
  a passive series circuit, the growth rate is
  ``λ_I = ∂rate/∂x + ∂rate/∂V_g · dV_g/dx|_I``, with ``dV_g/dx|_I = −(∂I/∂x)/(∂I/∂V_g)``.

In an unstable mode an integration error grows with the state itself, so it
accumulates: trapezoidal steps of h·λ leave a relative error of ~(hλ)²/12 each, about
hλ/12 per e-folding.  The SET's collapse only has to be crossed (its LRS is set by the
compliance), and 0.3 e-folding times per step took ngspice the fewest Newton iterations
of 0.1–3.  The RESET's end gap is the HRS, read through exp(x/xt), so its runaway is
resolved to 0.05 e-folding times: a 4 ms ±2 V loop behind 5 kΩ read R_off 2.4 % apart
from ``tmax`` 10 µs to 0.1 µs with the SET bound alone at ngspice's defaults, 0.5 % with
both (1.1 % and 0.06 % at ``reltol=1e-4``), for 2.5 % more time points
(benchmarks/bench_deck_options.py).  The floor, 1e-12 /s, lets a bound bind only inside
a runaway: a floor of 1 /s capped every step at 0.3 s and an LRS held 1e5 s at V_set/2
took 333 k time points against 38 k without the hint (issue 37).

The hint changes no equation, only where a simulator without predictive step control
tries its steps: without it ngspice doubles its step into the collapse until Newton
fails, and a failed solve costs 100 Newton iterations before the step is cut.  The
Python engine's predictive control meets both runaways early
(:mod:`rram.engine.integrator`) and needs no hint.

**Newton limiting.** Without the step hint (a compiler without ``$bound_step``) ngspice
steps into the SET's collapse until Newton fails. A failed Newton leaves its last
iterate where the next attempt starts (ngspice does not restore the last accepted
solution for an OSDI device), and one such iterate put 83 V across a gap held at 1.6 V
in a SET: the gap's hopping current, sinh(V/vt) continued linearly beyond exp(40), gave
a conductance of 2.6e15 S, the tip and the bottom electrode merged to rounding
("singular matrix: check node n1#tip"), and every shorter step restarted from the same
iterate ("timestep too small"). The 100-cell deck of issue 37 failed so at 0.80 ms with
Sparse 1.3 (KLU recovered); VACASK, which restarts from the accepted point, ran it. A
:class:`NewtonLimit` gives the gap voltage the junction limiting of SPICE's diodes in
the SET direction (``$limit`` with the built-in ``pnjlim``,
:mod:`rram.printers.veriloga_printer`): beyond SPICE's critical voltage of the junction,
vt·ln(vt/(√2·I_s)) with the gap's I_s (5–8 V on the default card, where its current
would be ~0.4 A), an iterate's step grows logarithmically. (A fixed 4·vt, 2.4 V on the
default card, limited the iterates of legitimate pulses too: a 1T1R pulse train's first
edge then stopped on the step floor.) The simulator iterates on while an iterate is
limited, so limiting moves only iterates, never a converged solution; the other
renderings (whose Newton solvers limit their own steps) ignore it. (An analog function
of one's own in ``$limit`` does not do that in ngspice 46 with OpenVAF-Reloaded: an
``.op`` with the junction's voltage forced stopped with the limited value, 1.4e-15 A for
1e-12 A.)
"""

from __future__ import annotations

from dataclasses import dataclass

from .expr import Expr


@dataclass(frozen=True)
class StepBound:
    """A bound on a SPICE simulator's step through a state's runaways.

    ``node``: the state node; ``rate``: its rate (node units/s).  The step is at most
    ``fraction``/λ_V where ``λ_V = ∂rate/∂node`` is positive, and at most
    ``current_fraction``/λ_I where ``λ_I``, the growth rate at a fixed ``current``
    (A, the branch current the state's drive passes through, driven by the potential of
    node ``drive``), is positive; ``floor`` (1/s) is the growth rate below which neither
    binds.  ``sentinel`` (node units/s, of auxiliary nodes) and ``sentinel_floor``: the
    rate driving the SET runaway that the subcircuit's step sentinel watches above that
    floor (:mod:`rram.printers.spice_printer`: ngspice's B-sources have no
    ``$bound_step``)."""

    node: str
    rate: Expr
    fraction: float
    floor: float
    desc: str
    sentinel: Expr
    sentinel_floor: float
    current: Expr
    drive: str
    current_fraction: float


@dataclass(frozen=True)
class NewtonLimit:
    """A branch voltage ``V(p) − V(n)`` (``voltage``: as the equations spell it) that
    conducts like a junction (∝ e^(V/scale)), whose Newton iterates a SPICE simulator
    limits beyond ``critical`` (V, SPICE's vcrit) in its forward direction: V(p, n) where
    ``direction`` (an expression of parameters) is positive, else V(n, p)."""

    p: str
    n: str
    voltage: Expr
    scale: Expr
    critical: Expr
    direction: Expr
    desc: str


__all__ = ["NewtonLimit", "StepBound"]
