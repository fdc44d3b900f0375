"""Retention: vacancy diffusion at any bias, the process a bake accelerates.

With no bias every switching rate vanishes (P₊ = P₋ = 0), yet programmed states decay
in a bake: the CF's vacancies diffuse out into the oxide around it, so it narrows (the
LRS rises), and the CF tip's vacancies diffuse into the depleted gap, so it fills (the
HRS falls).  Both are driven by the vacancy concentration's gradient, not by a field,
and share one barrier:  r_d = k_d·a·f·exp(−E_d/kT), with k_d the hop distance over the
gradient's length.

In filamentary HfO₂ the LRS drift of a bake is fitted with the activation energy of the
switching model itself (the hourglass model's retention: Microelectronic Engineering
2017, doi:10.1016/j.mee.2017.04.032): E_d = ``edif`` + ``dea``, and a loop fit puts
``edif`` at the fitted E_a (rram.fit.iv), so a card fitted to loops alone bakes at its
own SET barrier.  A lower E_d than the SET's would dissolve the CF in a slow sweep's hot
seconds (the TUD card's LRS read 8x higher with E_d = 1.65 eV against its E_a of
1.87 eV); the variation's ``dea`` shifts both barriers, so a hotter hold does not
dissolve it either.

The time to a 2x change is ∝ exp(E_d/kT): an Arrhenius law in the simulator's
temperature.  At room temperature r_d is ~1e-25 m/s (nothing moves in a thousand
years); at a SET's hold (~650 K) ~0.4 nm/s, against the growth's 30 nm/s.

Adds −r_d·restoring(x) to ``dx_dt`` and −r_d·restoring(w − w_min) to ``dw_dt``.
"""

from __future__ import annotations

from ..params import parameter as _p
from .ions import capped_rate, restoring
from .scope import Block, Scope

PARAMETERS = (
    _p("edif", 1.65, "eV", "Barrier of vacancy diffusion at any bias (retention: the CF "
       "narrows, the gap fills); a loop fit puts it at the fitted ea, and the variation's "
       "dea shifts it as it shifts ea", "kinetics", 0.5, 4, role="kinetic"),
    # 1e-4: an LRS half-selected at V_set/2 self-heats to 556 K, where kdif = 1 doubled
    # its R in 680 s (the CF narrowing); a bake-fitted card sets its own
    _p("kdif", 1e-4, "", "Factor on the diffusion rate: the hop distance a0 over the length of "
       "the vacancy gradient (0 switches retention loss off)", "kinetics", 0, 1e3,
       role="kinetic"),
)


def build(s: Scope) -> None:
    P = s.P
    # the log of the rate stays finite at kdif = 0 (the rate is then exactly 0 · e^ln)
    # the same vacancies in the same oxide: the variation of the SET barrier shifts it too
    # (a fixed E_d dissolved the CF in the hotter holds of the TUD Monte Carlo's dea > 0)
    e_dif = s.provide("e_dif", P.edif + P.dea)
    ln_rate = s.provide("ln_rate_diffusion", s["ln_af"] - e_dif / s["kt"])
    rate = P.kdif * capped_rate(s, "ln_rate_diffusion", ln_rate)
    s.add("dx_dt", -(rate * restoring(P, s["x"])))
    s.add("dw_dt", -(rate * restoring(P, s["w"] - P.wmin)))


BLOCK = Block("retention", "Retention: vacancy diffusion at any bias (bakes)", PARAMETERS,
              build)
