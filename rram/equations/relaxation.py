"""Relaxation: the disorder a switching event quenches into the gap, relaxing in log-time.

After a write, an RRAM cell's conductance drifts linearly in the logarithm of time, faster
when hotter (Zhao et al., IEDM 2017, "Investigation of statistical retention of
filamentary analog RRAM for neuromorphic computing").  The mechanism is structural
relaxation, as in the drift of amorphous phase-change memory (Ielmini, Lacaita,
Mantegazza, IEEE TED 54, 308, 2007): the defects a hot event leaves in metastable
configurations relax toward equilibrium, each relaxation raising the barrier of the next,
so the rate falls exponentially with the progress made and the progress grows with ln t.

The state ``u`` (m, node ``dsettle``) is the excess of the gap's hopping length over the
gap: the hopping sees ``x_hop = x + u`` (rram.equations.conduction); the ion kinetics
and the CF body see ``x``.  The disorder's equilibrium grows with the CF's heating, as a
fictive temperature does:

    u_eq = urel·(T − T_amb)/T                       (0 at the ambient, → urel when hot)

and ``u`` approaches it by thermally activated events whose rate rises exponentially with
the distance still to go (``lrel`` per e-fold):

    du/dt = −2·urel·f₀·exp(−E_rel/kT)·sinh((u − u_eq)/lrel),   (at most vcap)
    E_rel = erel − arel·|V_gap|                     (a field lowers the barrier)

Hot during a SET or RESET (ns at 1000 K) ``u`` follows ``u_eq``; as the cell cools the
rate freezes it at the ``u_eq`` of the temperature where its relaxation time meets the
cooling time.  At the read temperature, far from equilibrium, the sinh is one
exponential and ``u(t) = u_q − lrel·ln(1 + t/t₀)``: log-linear in time, ``lrel·ln10``
per decade, so a gap-dominated resistance drifts by ``lrel·ln10/xt`` in ln R per decade
of time, downward (the write-verify record's −5.5 %/decade is lrel ≈ 0.01 nm with
xt = 0.4 nm).  Its onset t₀ and its end scale as exp(E_rel/kT): an Arrhenius law in the
simulator's temperature.

The block is optional (:data:`rram.equations.RELAXATION_BLOCKS`, built right after the
cell so the conduction sees ``x_hop``): it brings its own state node, so the default
model's equations, its Jacobian's structure and every simulator's pivoting are those of
a model without it.  ``urel`` = 0 switches it off within it: both the equilibrium and the
rate carry it, so ``u`` stays at ``u0`` and the hopping sees the gap.
"""

from __future__ import annotations

from ..constants import NM
from ..expr import ln, safe_exp, safe_sinh, softplus, sqrt
from ..params import parameter as _p
from .scope import Block, Scope, V

PARAMETERS = (
    _p("u0", 0.0, "m", "Initial relaxing disorder of the gap (excess hopping length): the "
       "disorder a switching event left, carried from one run to the next",
       "instance", 0, 5e-9, kind="instance", role="state"),
    _p("urel", 0.0, "m", "Excess hopping length of the gap's disorder in equilibrium with a "
       "hot CF (T >> ambient); 0 switches relaxation off", "relaxation", 0, 2e-9,
       role="kinetic"),
    _p("erel", 1.3, "eV", "Barrier of the disorder's relaxation (its Arrhenius law: onset "
       "and end of the log-time drift scale as exp(erel/kT))", "relaxation", 0.3, 3,
       role="kinetic"),
    _p("lrel", 0.01e-9, "m", "Progress of the relaxation per e-fold of its rate: the "
       "drift is lrel*ln(10) of hopping length per decade of time", "relaxation", 1e-12,
       1e-9, role="kinetic"),
    _p("arel", 0.0, "eV/V", "Lowering of the relaxation barrier per volt across the gap "
       "(bias-accelerated relaxation)", "relaxation", 0, 1, role="kinetic"),
)


def build(s: Scope) -> None:
    P = s.P
    kt = s["kt"]
    # the state (node dsettle, from u0) and the length the gap's hopping sees
    u = s.provide("u", P.u0 + V("dsettle") * NM)
    s.provide("x_hop", s["x"] + u)
    u_eq = s.provide("u_eq", P.urel * s["dtemp"] / s["t_safe"])
    v_gap = s["v_gap"]
    e_rel = s.provide("e_rel", P.erel - P.arel * sqrt(v_gap * v_gap + P.vs * P.vs))
    # events per second, never above the attempt frequency (a field that removes the
    # barrier leaves f0)
    ln_rate = ln(P.f0) - e_rel / kt
    rate = s.provide("rate_settle", safe_exp(ln_rate - softplus(ln_rate - ln(P.f0))))
    # the net drive as one sinh, not as the difference of two capped rates: both capped
    # at f0, their difference cancelled to 1e-10 of f0 and each rendering rounded it
    # apart (1e-5 relative); urel is a factor, so urel = 0 is exact
    excess = (u - u_eq) / P.lrel
    drive = s.provide("settle_drive", 2.0 * P.urel * rate * safe_sinh(excess))
    # never faster than every ion rate's cap (vcap): a wild Newton iterate of u stays finite
    # the channel du_dt brings the state node dsettle and its branch (rram.model)
    s.add("du_dt", -drive / sqrt(1.0 + (drive / P.vcap) ** 2))
    s.output("hopm", s["x_hop"], "m", "hopping length: the gap plus its relaxing disorder")


BLOCK = Block("relaxation", "Relaxation: the gap's quenched disorder relaxing in log-time",
              PARAMETERS, build)
