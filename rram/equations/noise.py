"""Read noise: thermal noise of the ohmic elements, and traps at the CF that give RTN and 1/f.

* **Thermal (Johnson) noise** of the CF body at its own temperature, 4k·T·G_CF, and of
  the two contacts at the ambient, 4k·T_amb/r.  The gap's hopping current passes a chain
  of traps, which suppresses its shot noise (Fano factor ≪ 1): not modelled, nor the
  leakage's.
* **Traps at the CF.**  A charged trap at the CF's surface blocks conduction through an
  area π r_t² of its cross-section π w²/4: while it is occupied the conductance of the
  CF path (body and gap, both ∝ area) falls by the fraction

      Δ = a/(1 + a),  a = (2 r_t/w)²,

  which grows as 1/w² (∝ R in the LRS, where R ∝ 1/w²) and saturates at 1 where the
  trap's reach covers the CF: the resistance-dependent amplitude of RTN (Ielmini, Nardi,
  Cagli, APL 96, 053503, 2010; Ambrogio et al., IEEE TED 61, 2014, part II).  A trap of
  correlation time τ (occupancy ½, switching each way at rate 1/(2τ)) is a random
  telegraph signal of the CF current I: variance Δ²I²/4, one-sided density
  Δ²I²·τ/(1 + (2πfτ)²), corner frequency 1/(2πτ).  ``ntrap`` traps per decade of τ,
  log-uniform over [taumin, taumax], add up to

      S_I(f) = ntrap·Δ²·I²/(4·ln 10·f)

  between 1/(2π·taumax) and 1/(2π·taumin): the 1/f noise of a trap ensemble
  (McWhorter).  That density is what a SPICE ``.noise`` analysis sees (Verilog-A
  ``flicker_noise`` across the CF path); the time domain draws the traps themselves
  (:mod:`rram.noise`), so a small cell shows the few telegraph levels it has.

Noise is small-signal: it adds no term to any channel, and a DC or transient solution is
the same with it.  ``ntrap = 0`` (the default) leaves thermal noise only.
"""

from __future__ import annotations

from ..constants import P_K
from ..params import parameter as _p
from .scope import Block, Constraint, NoiseSource, Scope

#: ln 10: traps per decade of τ to traps per unit of ln τ.
LN10 = 2.302585092994046

PARAMETERS = (
    _p("ntrap", 0, "", "Active traps at the CF per decade of their correlation time "
       "(0: no RTN or 1/f noise)", "noise", 0, 1e4),
    _p("rtrap", 0.5e-9, "m", "Reach of a charged trap: it blocks pi*rtrap^2 of the CF "
       "cross-section", "noise", 1e-11, 1e-8),
    _p("taumin", 1e-7, "s", "Shortest correlation time of the traps (the 1/f density holds "
       "below 1/(2*pi*taumin))", "noise", 1e-12, 1e3),
    _p("taumax", 1e4, "s", "Longest correlation time of the traps (the 1/f density holds "
       "above 1/(2*pi*taumax))", "noise", 1e-6, 1e9),
)


def _tau_order(v) -> object:
    return v["taumin"] >= v["taumax"]


CONSTRAINTS = (Constraint(_tau_order, "taumin {taumin:g} s must be below taumax {taumax:g} s"),)


def build(s: Scope) -> None:
    P = s.P
    w = s["w"]
    reach = (2.0 * P.rtrap / w) * (2.0 * P.rtrap / w)
    blocked = s.provide("trap_blocked", reach / (1.0 + reach))
    # 1/f density of the CF path's relative conductance at 1 Hz (1/Hz · Hz)
    flicker = s.provide("trap_flicker", P.ntrap * blocked * blocked / (4.0 * LN10))
    i_cf = s["i_cf"]
    s.noise(NoiseSource("traps", "br_leak", flicker * i_cf * i_cf, 1.0,
                        "RTN of the traps at the CF, summed to 1/f (across the CF path)"))
    s.noise(NoiseSource("thermal_cf", "br_cf", 4.0 * (P_K * s["t_safe"]) * s["g_cf"], 0.0,
                        "thermal noise of the CF body at its temperature"))
    s.noise(NoiseSource("thermal_top", "br_ctop", 4.0 * (P_K * P.tamb) / P.rtop, 0.0,
                        "thermal noise of the top contact"))
    s.noise(NoiseSource("thermal_bottom", "br_cbot", 4.0 * (P_K * P.tamb) / P.rbot, 0.0,
                        "thermal noise of the bottom contact"))


BLOCK = Block("noise", "Read noise: thermal, and the RTN and 1/f of traps at the CF",
              PARAMETERS, build, CONSTRAINTS)
