"""SET kinetics: vertical growth that closes the gap, lateral growth that widens the CF.

Arrhenius in the local T, barriers lowered by the local field:

* vertical growth, the gap closes; the field in the gap, V_g/x, grows as it does (the
  positive feedback of the abrupt SET):  r_v = a·f·exp(−(E_a − Z·α·V_g/x)/kT);
* lateral growth, the CF widens under its own field and heat (the voltage across the CF
  body), not gated on the gap:  r_l = k_w·(w_eff + w_eff²/2w)·f·exp(−(E_a −
  Z·α_w·f_w·V_body/L₀)/kT).  While the gap is open the body carries almost no voltage and
  stays cold, so lateral growth waits for the gap to close; under compliance it stops
  when the cell voltage, hence V_body and T, falls to the hold voltage;
* lateral growth saturates: the CF widens only while its growth outruns a threshold
  that rises steeply with its width, r_l > r_sat·(w/w_sat)^n_sat, i.e. up to
  w_eq = w_sat·(r_l/r_sat)^(1/n_sat).  At a fixed voltage with no current limit (a
  half-select, a read in the SET polarity) the CF's temperature does not depend on its
  size (heating.py), so nothing else would stop it short of the cell wall.  The bound is
  referenced to the growth rate because a compliance-limited SET holds where the growth
  rate falls to the sweep's pace, whatever barrier, field or heating brought it there:
  a bound placed above the hold of one loop stays above it when those vary (a bound in
  the temperature did not: docs/design/self-limiting-growth.md).

Both act under SET bias only (P₊) and stop at their bounds (x = 0, w = min(wcf, w_eq)).
Adds −P₊·r_v to ``dx_dt`` and P₊·r_l·g to ``dw_dt``, g = logistic((w_eq − w)/swt).
"""

from __future__ import annotations

from ..expr import ln, logistic, safe_exp, sqrt
from ..params import parameter as _p
from .ions import capped_rate, restoring, wear_shift
from .scope import AuxNode, Block, Scope

#: ``dea`` within ±0.7 eV: a generation barrier lowered further SETs the CF where it runs
#: away and fills its cell (fitted TUD card, the other carriers varying: −0.7 eV 0 %,
#: −0.8 eV 27 %, −0.9 eV 99 % of the cycles outside the range of validity); the per-cycle
#: fits of the TUD record span −0.34…+0.55 eV.
PARAMETERS = (
    _p("dea", 0, "eV", "Offset on the vacancy-generation barrier ea (variation)", "instance",
       -0.7, 0.7, kind="instance", role="kinetic"),
    _p("kw", 1, "", "Factor on the lateral-growth rate (variation)", "instance", 1e-3, 1e3,
       kind="instance", role="kinetic"),
    _p("fw", 1, "", "Factor on the lateral-growth field term alphaw (variation of the CF "
       "surface field)", "instance", 0.05, 20, kind="instance", role="kinetic"),
    _p("ea", 1.65, "eV", "Vacancy-generation barrier of vertical and lateral growth, SET "
       "(v2.0 0.7: raised for read immunity)", "kinetics", 0.1, 4, role="kinetic"),
    _p("alpha", 2.46e-9, "m", "Barrier-lowering length of vertical growth in the gap field "
       "V_g/x (v2.0 0.75 nm: raised with ea)", "kinetics", 0, 1e-8, role="kinetic"),
    _p("alphaw", 1.33e-9, "m", "Barrier-lowering length of lateral growth in the field "
       "V_body/l0 along the CF", "kinetics", 0, 1e-8, role="kinetic"),
    _p("weff", 2e-9, "m", "Lateral growth step (v2.0 0.5 nm)", "kinetics", 1e-11, 1e-8,
       role="kinetic"),
    # Saturation of lateral growth; the defaults follow rram.fit.growth's rule on the
    # default loop (hold: 6.31 nm at 31 nm/s).
    _p("wsat", 6.94e-9, "m", "Width lateral growth saturates at when it runs at rsat (the "
       "fit puts it 10 % above the fitted LRS width)", "kinetics", 1e-10, 1e-6,
       role="kinetic"),
    _p("rsat", 3.16e-8, "m/s", "Lateral growth rate at which the CF saturates at wsat (the fit "
       "puts it at the fitted loop's hold)", "kinetics", 1e-30, 1e3, role="kinetic"),
    _p("nsat", 4, "", "Steepness of the saturation: the threshold growth rate rises as "
       "(w/wsat)^nsat", "kinetics", 1, 20, role="kinetic"),
    _p("swt", 0.1e-9, "m", "Width of the saturation's bound: beyond w_eq the growth rate "
       "falls by e per swt", "numerics", 1e-11, 1e-9, role="smoothing"),
)


def build(s: Scope) -> None:
    P = s.P
    kt, x, w = s["kt"], s["x"], s["w"]
    # a model with the wear block: the damage raises the barrier (rram.equations.wear)
    ea = s.provide("ea_eff", P.ea + P.dea + wear_shift(s, "e_wear_set"))
    ln_rate_vertical = s.provide(
        "ln_rate_vertical", s["ln_af"] + (P.zion * P.alpha * s["v_gap"] / s["x_field"] - ea) / kt,
        aux=AuxNode("ln_rate_vertical", "ln(m/s)", offset=100.0))
    rate_vertical = capped_rate(s, "ln_rate_vertical", ln_rate_vertical)
    ln_rate_lateral = s.provide(
        "ln_rate_lateral",
        # √(w² + (wmin/100)²) instead of w: finite for any Newton iterate, 2e-6 relative
        ln(P.kw * (P.weff + P.weff * P.weff / (2.0 * sqrt(w * w + (0.01 * P.wmin) ** 2)))
           * P.f0)
        + (P.zion * P.alphaw * P.fw * s["v_body"] / P.l0 - ea) / kt,
        aux=AuxNode("ln_rate_lateral", "ln(m/s)", offset=100.0))
    rate_lateral = capped_rate(s, "ln_rate_lateral", ln_rate_lateral)
    p_set = s["p_set"]
    s.add("dx_dt", -p_set * rate_vertical * restoring(P, x))
    # w_eq from the capped ln r_l (bounded above by ln vcap, so w_eq is finite); where
    # the growth is negligible w_eq underflows to 0 and the bound is simply shut
    w_eq = s.provide("w_eq", P.wsat * safe_exp(
        (s["ln_rate_lateral_capped"] - ln(P.rsat)) / P.nsat))
    room = s.provide("growth_room", logistic((w_eq - w) / P.swt))
    s.add("dw_dt", p_set * rate_lateral * restoring(P, P.wcf - w) * room)


BLOCK = Block("set_kinetics", "SET kinetics: vertical and lateral growth of the CF",
              PARAMETERS, build)
