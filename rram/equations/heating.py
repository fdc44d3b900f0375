"""Joule heating that scales with the CF (Ielmini, Nardi, Cagli, IEEE TED 58, 3246, 2011).

The CF's thermal resistance follows its electrical one (Wiedemann–Franz: both ∝
length/area), R_th,CF = k_th·ρ₀·(L₀ − x)/(π w²/4), in parallel with the heat path through
the surrounding oxide, r_th,ox.  With P = V·I of the CF and the gap, ΔT = R_th·P ≈
k_th·V²·R_CF/R: independent of the CF's size, so the compliance-limited SET stops and the
RESET starts at the same temperature for every compliance (R_LRS ≈ V_hold/I_cc,
I_reset ≈ I_cc).  The thermal node relaxes in ``tauth``: τ·dΔT/dt = R_th·P + ΔT_i − ΔT,
where ΔT_i (``dtamb``) is the instance's offset over the simulation's ambient.

Provides ``power``, ``rth_cf``, ``rth`` and ``tau_thermal``; adds the channel ``heat``.
"""

from __future__ import annotations

from ..params import parameter as _p
from .scope import Block, Scope

PARAMETERS = (
    _p("kth", 3200, "K/(W*Ohm)", "Thermal over electrical resistance of the CF body, "
       "R_th,CF = kth*rho0*(l0 - x)/area (Wiedemann-Franz: 1/(8*L*T) ~ 6e3 for a wire cooled "
       "at both ends, less for the heat lost into the oxide)", "thermal", 0, 1e6,
       kind="instance", role="filament"),
    _p("rthox", 2e9, "K/W", "Thermal resistance of the heat path through the oxide around "
       "the CF, in parallel with the CF's own", "thermal", 1e3, 1e13, role="kinetic"),
    _p("tauth", 1e-11, "s", "Thermal time constant of the CF (l0^2/D for HfO2: 10 ps)",
       "thermal", 1e-15, 1e-6, role="kinetic"),
    _p("tvalid", 2000, "K", "Highest CF temperature the model represents: above it the oxide "
       "melts (Ta2O5 ~2145 K, HfO2 ~3030 K) and a rupture or breakdown the model does not "
       "describe takes over; every device-cycle above it is reported (rram.validity)",
       "thermal", 500, 5000),
    _p("dtamb", 0, "K", "Temperature offset of this instance over the simulation's ambient "
       "(a hotter die region, a heater)", "instance", -100, 400, kind="instance"),
)


def build(s: Scope) -> None:
    P = s.P
    # Each term is ≥ 0 for any node voltages (odd, monotone paths), so no |·| is needed.
    power = s.provide("power", s["i_cf"] * s["v_body"] + s["i_gap"] * s["v_gap"])
    rth_cf = s.provide("rth_cf", P.kth * P.rho0 * s["cf_length"] / s["area_cf"])
    rth = s.provide("rth", rth_cf * P.rthox / (rth_cf + P.rthox))
    s.provide("tau_thermal", P.tauth)
    s.add("heat", rth * power + P.dtamb)
    s.output("power", power, "W", "Joule power in the filament path")
    s.output("rth", rth, "K/W", "thermal resistance of the CF and its surroundings")


BLOCK = Block("heating", "Joule heating of the CF", PARAMETERS, build)
