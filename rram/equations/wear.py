"""Wear-out: the oxygen reservoir each switching event depletes, closing the window.

Over 10⁴–10⁶ cycles a filamentary oxide cell's window closes, most often by its HRS
falling toward a steady LRS, and the cell ends stuck: in the LRS (the RESET no longer
opens the gap) or in the HRS (the SET no longer closes it).  In HfOₓ and TaOₓ cells with
an oxygen-exchange layer (Ti, Hf, Ta) the RESET re-oxidises the gap with O²⁻ from that
reservoir, and each cycle loses a share of what it moves (O²⁻ trapped at the interface,
out-diffused, bound in the electrode), so the reservoir can re-oxidise less and less of
the gap: the HRS falls, the LRS, set by the compliance, stays (Chen et al., "Balancing
SET/RESET pulse for >10¹⁰ endurance in HfO₂/Hf 1T1R bipolar RRAM", IEEE TED 59, 3243,
2012; Nail et al., "Understanding RRAM endurance, retention and window margin trade-off
using experimental results and simulations", IEDM 2016).

The state ``D`` (node ``dwear``, from the instance's ``wear0``) is the reservoir's
depletion, in e-folds: what the reservoir can re-oxidise is

    x_top = xres·exp(−D)              (m; the gap's upper bound under RESET, ≤ l0)

and each metre of the gap's ion traffic |dx/dt| (m/s; SET, RESET or diffusion) loses
the share ``kwear`` of what is left (first-order depletion):

    dD/dt = kwear·|dx/dt|

While x_top is above the gap the RESET opens by itself (x_R), a cycle adds
2·kwear·x_R; once the bound binds the gap reaches only x_top, each cycle adds
2·kwear·x_top and the HRS falls with it: x_HRS(N) = 1/(1/x_R + 2·kwear·(N − N_on)),
with N_on = ln(xres/x_R)/(2·kwear·x_R).  The window, exp of the gap over the hopping
length, closes as 1/N: the cell ends stuck in the LRS.

The defects the traffic leaves also pin the CF's tip, raising the SET's
vacancy-generation barrier:

    E_a = ea + dea + ews·D

``ews`` > 0 holds the window until a SET of fixed amplitude no longer closes the gap:
the cell ends stuck in the HRS, abruptly, at the D where ews·D exceeds the SET's margin.

The block is optional (:data:`rram.equations.WEAR_BLOCKS`) and comes in two parts: the
state and what it changes build right after the cell (the kinetics read them), the drive
after every rate has added to ``dx_dt``.  ``kwear`` = 0 switches it off: D stays at
``wear0``, and at D = 0 with ``xres`` = ``l0`` (the defaults) the model is the default
model.
"""

from __future__ import annotations

from ..expr import safe_exp, sqrt
from ..params import parameter as _p
from .ions import restoring
from .scope import Block, Constraint, Scope, V

#: Floor of the ion traffic's smooth |dx/dt| (m/s): √(r² + r₀²) − r₀ is |r| above it
#: (within 0.05 % at a 1 kV/s sweep's RESET, 2e-6 m/s; 10 % short at 1e-8 m/s, a RESET
#: slower than a 1 V/s sweep) and r²/2r₀ below, so a read's creep (1e-20 m/s) wears
#: nothing.  A sharper corner broke ngspice: at 1e-12 m/s the OSDI module failed a SET
#: pulse from the LRS at its first 0.1 ns, where the gap held on its bound jitters about
#: r = 0 (1e-10 passed).
TRAFFIC_FLOOR = 1e-9

PARAMETERS = (
    _p("wear0", 0.0, "", "Initial depletion of the oxygen reservoir (e-folds), from earlier "
       "cycles: carried from one run to the next", "instance", 0, 50, kind="instance",
       role="state"),
    _p("kwear", 0.0, "1/m", "Depletion of the oxygen reservoir per metre of the gap's ion "
       "traffic |dx/dt| (e-folds/m); 0 switches wear-out off", "wear", 0, 1e12,
       role="kinetic"),
    _p("xres", 3.5e-9, "m", "Gap the fresh oxygen reservoir can re-oxidise: the RESET's "
       "bound, xres*exp(-D) (at most l0)", "wear", 1e-10, 5e-8, kind="instance",
       role="bound"),
    _p("ews", 0.0, "eV", "Rise of the vacancy-generation barrier (SET) per e-fold of "
       "depletion: with ews > 0 the cell can end stuck in the HRS before its window closes",
       "wear", 0, 10, role="kinetic"),
)


def _reservoir_beyond_layer(v):
    return v["xres"] > v["l0"] * (1 + 1e-12)


CONSTRAINTS = (
    Constraint(_reservoir_beyond_layer,
               "parameter xres: {xres:g} m exceeds l0 = {l0:g} m (valid xres <= l0: the "
               "reservoir re-oxidises at most the layer)"),
)


def build_state(s: Scope) -> None:
    P = s.P
    wear = s.provide("wear", P.wear0 + V("dwear"))
    x_top = s.provide("x_top", P.xres * safe_exp(-wear))
    # the RESET's bound at x_top, as a state's own bound (1 inside, 0 on it, -1 beyond)
    s.provide("reservoir_gate", restoring(P, x_top - s["x"]))
    s.provide("e_wear_set", P.ews * wear)
    s.output("wear", wear, "", "depletion of the oxygen reservoir (e-folds)")


def build_drive(s: Scope) -> None:
    rate = s.total("dx_dt")
    traffic = s.provide("ion_traffic",
                        sqrt(rate * rate + TRAFFIC_FLOOR * TRAFFIC_FLOOR) - TRAFFIC_FLOOR)
    # the channel dwear_dt brings the state node dwear and its branch (rram.model)
    s.add("dwear_dt", s.P.kwear * traffic)


STATE_BLOCK = Block("wear", "Wear-out: the depleted oxygen reservoir and the pinned CF tip",
                    PARAMETERS, build_state, CONSTRAINTS)
DRIVE_BLOCK = Block("wear_drive", "Wear-out: the depletion the gap's ion traffic drives", (),
                    build_drive)
