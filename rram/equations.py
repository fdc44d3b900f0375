"""The physics of the filament model: conduction, ion kinetics and Joule heating.

This is the only place the model's equations live; ``docs/model.md`` is their manual
(mechanisms, parameters, calibration).  The skeleton is the Stanford–PKU v2.0 model
(Huang et al., IEEE TED 60, 4090, 2013; Jiang et al., IEEE TED 63, 1884, 2016; Li et
al., DATE 2015): a tunnelling gap and a metallic CF in series, a SET that closes the gap
and then widens the CF, a RESET that is the slower of O²⁻ release and O²⁻ hopping.
Changed so that the model holds over many cycles and over ranges of compliance, RESET
voltage and read polarity (``docs/model.md`` §"Why these equations"):

* **Joule heating that scales with the CF** (Ielmini, Nardi, Cagli, IEEE TED 58, 3246,
  2011): the CF's thermal resistance follows its electrical resistance (both length over
  area, Wiedemann–Franz), so the CF temperature at a given voltage does not depend on
  the CF's size.  The compliance-limited SET stops and the RESET starts at the same
  temperature for every compliance: R_LRS ≈ V_hold/I_cc and I_reset ≈ I_cc.
* **Lateral growth driven by the CF's own field and temperature** (the voltage across
  the CF body), not gated on the gap: it starts when the gap closes and the body takes
  the voltage, and slows as the compliance pulls that voltage down; ``wcf`` is only the
  cell's geometry.
* **CF thinning that follows the gap's actual opening** (one O²⁻ flux opens the gap and
  consumes the CF), so it stops when the gap stops: no absorbing state.
* **No contact blend.** The gap at x → 0 is the hopping element at its shortest; the LRS
  is the CF body in series with it (both ∝ 1/area), so nothing switches between
  conduction laws and nothing oscillates.
* The pristine oxide's leakage has its own current density ``jox`` (few traps), apart
  from the vacancy-rich gap's ``j0``.

Geometry (device frame: positive ``v_cell`` SETs)::

    ti ──[ R_CF(T) ]── tip ──[ gap: trap-assisted hopping ]── bi
     └──────────────[ oxide leakage ‖ r_shunt ]──────────────┘

* ``x`` (m) is the tunnelling gap between the filament (CF) tip and the bottom electrode;
  the CF body has length ``l0 − x``.
* ``w`` (m) is the CF width (diameter): cross-section ``π w²/4``.
* ``T`` (K) is the local CF temperature, ``tamb + dtemp``.

Every function returns expressions of the IR in :mod:`rram.expr`; names in the returned
dataclasses are the intermediates a reader can check against ``docs/model.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .card import PARAMETER_NAMES
from .constants import KB_EV, PI
from .expr import (
    ZERO,
    Expr,
    ln,
    logistic,
    polarity_weight,
    pos_sq,
    safe_exp,
    safe_sinh,
    smooth_abs0,
    soft_clip,
    soft_floor,
    softplus,
    sqrt,
    sym,
)
from .expr import let as _let

#: Nanometre in metres: the gap and width states are stored in nm (O(1) node values).
NM = 1e-9
#: Floor in the harmonic combination of the two RESET steps, m/s (1e-30 m/s moves a gap
#: by 3e-22 m in ten years): keeps r1·r2/(r1 + r2) defined when both rates underflow.
RATE_FLOOR = 1e-30
#: Floor of the hopping drive Z·α_h·|V_g|/(x·kT) in the RESET hopping rate (see
#: :func:`kinetics`); 1e-3 changes the rate only where the drive is below ~1e-2.
HOP_FLOOR = 1e-3
#: Rate constant of the guard-band recovery, 1/(nm·s): a state d nm outside its guard
#: band returns at RECOVERY·d² nm/s (1 nm out: back within nanoseconds).
RECOVERY = 1e9


class Symbols:
    """Attribute access to the model's parameters: ``P.l0`` is the parameter ``l0``.

    Only declared parameters (:data:`rram.card.PARAMETERS`) exist: a typo is an
    ``AttributeError`` when the equations are built, never a new free parameter.
    """

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = frozenset(names)

    def __getattr__(self, name: str) -> Expr:
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"{name!r} is not a parameter of the model "
                                 "(declared in rram/card.py)")
        return sym(name)


P = Symbols(PARAMETER_NAMES)


def let(name: str, value: Expr) -> Expr:
    return _let(name, value)


@dataclass(frozen=True)
class State:
    """Model state and terminal-side voltages, in the device frame.

    ``v_cell`` is the intrinsic cell voltage, ``v_gap`` the voltage across the gap
    element (V); ``x`` and ``w`` are in metres; ``dtemp`` is the temperature rise (K).
    """

    v_cell: Expr
    v_gap: Expr
    x: Expr
    w: Expr
    dtemp: Expr
    x_recovery: Expr
    w_recovery: Expr


@dataclass(frozen=True)
class Conduction:
    """Currents of the paths (A, device frame), the Joule power (W) and the heating."""

    i_leak: Expr
    i_cf: Expr
    i_gap: Expr
    v_body: Expr
    power: Expr
    temperature: Expr
    r_cf: Expr
    rth: Expr


@dataclass(frozen=True)
class Kinetics:
    """State rates (m/s): gap ``dx/dt`` and width ``dw/dt``, with their named parts."""

    dx_dt: Expr
    dw_dt: Expr
    rate_vertical: Expr
    rate_lateral: Expr
    rate_release: Expr
    rate_hop: Expr
    rate_reset: Expr
    gap_opening: Expr


def guarded_state(v_cell: Expr, v_gap: Expr, gap_nm: Expr, width_nm: Expr,
                  dtemp: Expr) -> State:
    """The physical state from node values (states in nm), guarded for Newton iterates.

    A simulator's Newton iteration may visit absurd node values (a gap of −9 nm, a
    temperature of 10⁶ K) when a step is too long for the SET runaway, and SPICE does not
    restore the last good point before retrying with a shorter step.  The states are
    therefore passed through :func:`~rram.expr.soft_clip`, the identity (to e^(−8) of
    the guard width) over the physical range and saturating outside it: x in
    [−xguard, l0 + xguard], w in [wmin/2, wcf + xguard] (and T, in :func:`temperature`).
    Voltages are not clipped: every conduction path stays monotone in its voltage (the
    exponentials continue linearly), so a guarded model has no spurious solutions.

    The windows of :func:`kinetics` stop the rates at the physical bounds (x in [0, l0],
    w in [wmin, wcf]), so a state that an integrator pushes past a bound (BDF2
    extrapolates a gap that closed in one step to about −x_before/3) would stay there, and
    each engine would park it somewhere else.  ``x_recovery``/``w_recovery`` (nm/s) pull
    it back: RECOVERY·d² for a distance d beyond the bound, exactly zero inside the range
    (C¹, :func:`guard_recovery`).
    """
    xg = P.xguard / NM
    x_lo, x_hi = -xg, P.l0 / NM + xg
    w_lo, w_hi = 0.5 * P.wmin / NM, P.wcf / NM + xg
    x_nm = let("x_nm", soft_clip(gap_nm, x_lo, x_hi, 0.1 * xg))
    w_nm = let("w_nm", soft_clip(width_nm, w_lo, w_hi, 0.1 * P.wmin / NM))
    return State(
        v_cell=let("v_cell", v_cell),
        v_gap=let("v_gap", v_gap),
        x=let("x", x_nm * NM),
        w=let("w", w_nm * NM),
        dtemp=dtemp,
        x_recovery=let("x_recovery", guard_recovery(gap_nm, ZERO, P.l0 / NM)),
        w_recovery=let("w_recovery", guard_recovery(width_nm, P.wmin / NM, P.wcf / NM)),
    )


def guard_recovery(value_nm: Expr, lo_nm: Expr, hi_nm: Expr) -> Expr:
    """Rate (nm/s) that returns a state to its range [lo, hi]; zero inside it."""
    return RECOVERY * (pos_sq(lo_nm - value_nm) - pos_sq(value_nm - hi_nm))


def temperature(s: State) -> tuple[Expr, Expr]:
    """Local CF temperature T (K) and thermal energy kT (eV).

    T is kept softly within [``tfloor``, ``tceil``] (a guard for wild Newton iterates;
    exact to e^(−30) between 200 K and 2000 K).
    """
    t_local = let("t_local", P.tamb + s.dtemp)
    t_safe = let("t_safe", soft_clip(t_local, P.tfloor, P.tceil, 0.1 * P.tfloor))
    return t_safe, let("kt", KB_EV * t_safe)


def polarity_factors(s: State) -> tuple[Expr, Expr]:
    """Smooth one-sided weights: P₊ → 1 under SET bias, P₋ → 1 under RESET bias.

    Both are exactly zero at ``v_cell = 0`` and on the other polarity, with zero slope at
    0 (C¹).  They replace the ``V > 0``/``V < 0``/``V == 0`` branches of v2.0.
    """
    p_set = let("p_set", polarity_weight(s.v_cell, P.vs))
    p_reset = let("p_reset", polarity_weight(-s.v_cell, P.vs))
    return p_set, p_reset


def conduction(s: State, t_safe: Expr) -> Conduction:
    """The current paths and the CF's heating.

    * Oxide leakage outside the CF, through the pristine oxide of the cell:
      I_ox = j_ox·π(W_CF² − w²)/4·sinh(V/V_T), plus the cell shunt ``V/r_shunt``.
    * Metallic CF body:  R_CF = ρ(T)·(L₀ − x)/(π w²/4), ρ(T) = ρ₀·e^(tcr·(T − tamb)).
    * Gap: trap-assisted hopping  I_gap = J₀·(π w²/4)·e^(−x/X_T)·sinh(V_g/V_T).  At
      x → 0 this is the CF's contact to the electrode, ∝ area like the body, so the LRS
      is ohmic to within the sinh's curvature and symmetric in bias.
    * Heating: the CF's thermal resistance follows its electrical one (Wiedemann–Franz:
      both ∝ length/area), R_th,CF = k_th·ρ₀·(L₀ − x)/(π w²/4), in parallel with the
      heat path through the surrounding oxide, r_th,ox.  With P = V·I of the CF and the
      gap, ΔT = R_th·P ≈ k_th·V²·R_CF/R: independent of the CF's size.
    """
    area_cf = let("area_cf", PI / 4.0 * s.w * s.w)
    area_ox = let(
        "area_ox",
        PI / 4.0 * soft_floor(P.wcf * P.wcf - s.w * s.w, 0.0, 0.01 * P.wcf * P.wcf),
    )
    i_leak = let(
        "i_leak",
        P.jox * area_ox * safe_sinh(s.v_cell / P.vt) + s.v_cell / P.rshunt,
    )

    rho = let("rho", P.rho0 * safe_exp(P.tcr * (t_safe - P.tamb)))
    cf_length = let("cf_length", soft_floor(P.l0 - s.x, P.lmin, P.lmin))
    g_cf = let("g_cf", area_cf / (rho * cf_length))
    v_body = let("v_body", s.v_cell - s.v_gap)
    i_cf = let("i_cf", g_cf * v_body)
    i_gap = let("i_gap",
                P.j0 * area_cf * safe_exp(-s.x / P.xt) * safe_sinh(s.v_gap / P.vt))

    # Each term is ≥ 0 for any node voltages (odd, monotone paths), so no |·| is needed.
    power = let("power", i_cf * v_body + i_gap * s.v_gap)
    rth_cf = let("rth_cf", P.kth * P.rho0 * cf_length / area_cf)
    rth = let("rth", rth_cf * P.rthox / (rth_cf + P.rthox))
    return Conduction(i_leak, i_cf, i_gap, v_body, power, t_safe, let("r_cf", 1.0 / g_cf),
                      rth)


def capped_rate(name: str, ln_rate: Expr) -> Expr:
    """r·v_cap/(r + v_cap) from ln r (m/s), as exp(ln r − softplus(ln r − ln v_cap)).

    Accurate for rates far below the cap (read disturb needs 1e-20 m/s), never above
    ``vcap`` for any value of ln r.  The capped logarithm is named ``<name>_capped``: it
    is bounded above by ln v_cap, which is what a SPICE rendering carries on an
    auxiliary node (:data:`rram.model.Model.aux_nodes`).
    """
    capped = let(f"{name}_capped", ln_rate - softplus(ln_rate - ln(P.vcap)))
    return let(name.replace("ln_", ""), safe_exp(capped))


def window(distance: Expr) -> Expr:
    """1 well inside a bound, 0 beyond it: stops a state at its bound inside the ODE."""
    return logistic(distance / P.xbound)


def kinetics(s: State, c: Conduction, kt: Expr, p_set: Expr, p_reset: Expr) -> Kinetics:
    """Ion kinetics, Arrhenius in the local T, barriers lowered by the local field.

    SET, vertical growth (the gap closes; the field in the gap, V_g/x, grows as it does:
    the positive feedback of the abrupt SET):
        r_v = a·f·exp(−(E_a − Z·α·V_g/x)/kT)
    SET, lateral growth (the CF widens under its own field and heat):
        r_l = k_w·(w_eff + w_eff²/2w)·f·exp(−(E_a − Z·α_w·f_w·V_body/L₀)/kT)
      While the gap is open the body carries almost no voltage and stays cold, so
      lateral growth waits for the gap to close; under compliance it stops when the
      cell voltage, hence V_body and T, falls to the hold voltage.
    RESET, the slower of two sequential steps (harmonic combination, not ``min``):
        r₁ = a·f·exp(−(E_i + r·Z·V_g)/kT)                 O²⁻ release (V_g < 0)
        r₂ = a·f·exp(−E_h/kT)·sinh(Z·α_h·|V_g|/(x·kT))    O²⁻ hopping across the gap
      r₂ falls as the gap widens (its field |V_g|/x falls and the CF cools), so the gap
      stops at a width set by the largest RESET voltage.
    CF thinning: the O²⁻ that open the gap recombine with the CF's vacancies, so the
    width falls by ``kwr`` per unit of the gap's actual opening (window included): it
    stops when the gap stops.

    All rates are formed as logarithms (``ln_rate_*``) and capped smoothly at ``vcap``
    (:func:`capped_rate`); ``1/x`` is regularised as ``1/√(x² + x_eps²)``.
    """
    x_field = let("x_field", sqrt(s.x * s.x + P.xeps * P.xeps))
    ln_af = let("ln_af", ln(P.a0) + ln(P.f0))
    ea = let("ea_eff", P.ea + P.dea)

    # Rates are formed in the log domain and capped (exactly r/(1 + r/v_cap)): no
    # exponential can overflow, and a wild value of ln r (a Newton iterate in SPICE)
    # still gives a rate within [0, v_cap].
    ln_rate_vertical = let(
        "ln_rate_vertical", ln_af + (P.zion * P.alpha * s.v_gap / x_field - ea) / kt
    )
    rate_vertical = capped_rate("ln_rate_vertical", ln_rate_vertical)
    ln_rate_lateral = let(
        "ln_rate_lateral",
        # √(w² + (wmin/100)²) instead of w: finite for any Newton iterate, 2e-6 relative
        ln(P.kw * (P.weff + P.weff * P.weff / (2.0 * sqrt(s.w * s.w + (0.01 * P.wmin) ** 2)))
           * P.f0)
        + (P.zion * P.alphaw * P.fw * c.v_body / P.l0 - ea) / kt,
    )
    rate_lateral = capped_rate("ln_rate_lateral", ln_rate_lateral)
    ln_rate_release = let(
        "ln_rate_release", ln_af - (P.ei + P.dei + P.ri * P.zion * s.v_gap) / kt
    )
    rate_release = capped_rate("ln_rate_release", ln_rate_release)
    # sinh(y) with y floored at HOP_FLOOR (√(y² + y₀²)): ln sinh stays finite at zero
    # drive, where P₋ = 0 anyway; the rate there is a·f·e^(−E_h/kT)·1e-3.
    hop_field = let("hop_field",
                    P.zion * P.alphah * smooth_abs0(s.v_gap, P.vs) / (x_field * kt))
    hop_drive = let("hop_drive", sqrt(hop_field ** 2 + HOP_FLOOR * HOP_FLOOR))
    ln_rate_hop = let(
        "ln_rate_hop",
        ln_af - (P.eh + P.deh) / kt + ln(0.5 * (safe_exp(hop_drive) - safe_exp(-hop_drive))),
    )
    rate_hop = capped_rate("ln_rate_hop", ln_rate_hop)
    rate_reset = let(
        "rate_reset", rate_release * rate_hop / (rate_release + rate_hop + RATE_FLOOR)
    )
    gap_opening = let("gap_opening", p_reset * rate_reset * window(P.l0 - s.x))

    dx_dt = let("dx_dt", -p_set * rate_vertical * window(s.x) + gap_opening)
    dw_dt = let(
        "dw_dt",
        p_set * rate_lateral * window(P.wcf - s.w)
        - P.kwr * gap_opening * window(s.w - P.wmin),
    )
    return Kinetics(dx_dt, dw_dt, rate_vertical, rate_lateral, rate_release, rate_hop,
                    rate_reset, gap_opening)
