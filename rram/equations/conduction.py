"""Conduction paths of the CF: the metallic body in series with the hopping gap.

* Metallic CF body:  R_CF = ρ(T)·(L₀ − x)/(π w²/4), ρ(T) = ρ₀·e^(tcr·(T − tnom)).
* Gap: trap-assisted hopping  I_gap = J₀·(π w²/4)·e^(−x/X_T)·sinh(V_g/V_T).  At
  x → 0 this is the CF's contact to the electrode, ∝ area like the body, so the LRS
  is ohmic to within the sinh's curvature and symmetric in bias.

No contact blend: the gap at x → 0 is the hopping element at its shortest; the LRS is
the CF body in series with it (both ∝ 1/area), so nothing switches between conduction
laws and nothing oscillates.  Provides ``area_cf``, ``rho``, ``cf_length``, ``g_cf``,
``v_body``, ``i_cf``, ``i_gap`` and ``r_cf``; adds the channels ``i_cf`` and ``i_gap``.
"""

from __future__ import annotations

from ..constants import PI
from ..expr import ln, safe_exp, safe_sinh, soft_floor
from ..params import parameter as _p
from .scope import AuxNode, Block, Scope

SQRT2 = 2.0 ** 0.5

PARAMETERS = (
    _p("j0", 1e13, "A/m^2", "Hopping current density prefactor of the gap (v2.0 I0)",
       "conduction", 1e6, 1e18),
    _p("xt", 0.4e-9, "m", "Hopping-current decay length (v2.0 XT)", "conduction",
       5e-11, 5e-9),
    _p("vt", 0.6, "V", "Hopping I-V nonlinearity voltage (v2.0 VT 0.4 V)", "conduction",
       0.01, 5),
    _p("rho0", 1.9635e-5, "Ohm*m", "CF resistivity at tnom (v2.0 rou)", "conduction",
       1e-9, 1e-1),
    _p("tnom", 300, "K", "Temperature at which rho0 is given (the card's measurement "
       "temperature)", "conduction", 150, 700),
    _p("tcr", 1e-3, "1/K", "Temperature coefficient of the CF resistivity (metallic CF)",
       "conduction", 0, 5e-3),
    _p("lmin", 1e-11, "m", "Soft floor of the CF body length (x -> l0; 0.01 nm keeps the CF's "
       "conductance in a Newton iterate that reaches l0 within a few siemens)", "numerics",
       1e-15, 1e-10, role="smoothing"),
)


def build(s: Scope) -> None:
    P = s.P
    x, w, t_safe = s["x"], s["w"], s["t_safe"]
    v_cell, v_gap = s["v_cell"], s["v_gap"]
    area_cf = s.provide("area_cf", PI / 4.0 * w * w)
    rho = s.provide("rho", P.rho0 * safe_exp(P.tcr * (t_safe - P.tnom)))
    cf_length = s.provide("cf_length", soft_floor(P.l0 - x, P.lmin, P.lmin))
    g_cf = s.provide("g_cf", area_cf / (rho * cf_length),
                     aux=AuxNode("g_cf", "uS", scale=1e-6))
    v_body = s.provide("v_body", v_cell - v_gap)
    i_cf = s.provide("i_cf", g_cf * v_body)
    # the hopping length: the gap, plus its relaxing disorder in a model with the
    # relaxation block (rram.equations.relaxation)
    hop_length = s["x_hop"] if "x_hop" in s else x  # noqa: SIM401 (a Scope, no .get)
    hop = safe_exp(-hop_length / P.xt)
    i_gap = s.provide("i_gap", P.j0 * area_cf * hop * safe_sinh(v_gap / P.vt))
    # SPICE's critical voltage of a junction, vt·ln(vt/(√2·I_s)), for the gap's
    # I_s·e^(V/vt) with I_s = j0·area·hop/2: beyond it a Newton iterate's step is limited
    # (rram.step_hint.NewtonLimit); a converged gap stays far below it (its current
    # there is ~vt/√2 A)
    s.provide("v_gap_critical", P.vt * ln(SQRT2 * P.vt / (P.j0 * area_cf * hop)))
    r_cf = s.provide("r_cf", 1.0 / g_cf)
    s.add("i_cf", i_cf)
    s.add("i_gap", i_gap)
    s.output("rcf", r_cf, "Ohm", "CF body resistance")


BLOCK = Block("conduction", "Conduction: the metallic CF body and the hopping gap",
              PARAMETERS, build)
