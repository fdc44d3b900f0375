"""The physics of the filament model: conduction, ion kinetics and heating.

This is the only place the model's equations live.  It follows the Stanford–PKU v2.0 model
(Huang et al., IEEE TED 60, 4090, 2013; Jiang et al., IEEE TED 63, 1884, 2016; Li et al.,
DATE 2015) with the changes of ``physics.md`` §5 and §10: a thermal RC node, the gap
voltage on an internal *tip* node, and every hard branch of the public code replaced by a
C¹ form whose width is a card parameter.

Geometry (device frame: positive ``v_cell`` SETs)::

    ti ──[ R_CF(T) ]── tip ──[ gap: hopping ‖ metallic contact ]── bi
     └──────────────[ oxide leakage ‖ r_shunt ]───────────────────┘

* ``x`` (m) is the tunnelling gap between the filament (CF) tip and the bottom electrode;
  the CF body has length ``l0 − x``.
* ``w`` (m) is the CF width (diameter): cross-section ``π w²/4``.
* ``T`` (K) is the local CF temperature, ``tamb + dtemp``.

Every function returns expressions of the IR in :mod:`rram.expr`; names in the returned
dataclasses are the intermediates a reader can check against the papers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .constants import KB_EV, PI
from .expr import (
    ZERO,
    Expr,
    asinh,
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
    """Attribute access to symbols: ``P.l0`` is the parameter ``l0`` as an expression."""

    def __getattr__(self, name: str) -> Expr:
        if name.startswith("__"):
            raise AttributeError(name)
        return sym(name)


P = Symbols()


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
    """Currents of the three paths (A, device frame) and the filament's Joule power (W)."""

    i_leak: Expr
    i_cf: Expr
    i_gap: Expr
    v_drive: Expr
    power: Expr
    temperature: Expr
    r_cf: Expr


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
    0 (C¹).  They replace the ``V > 0``/``V < 0``/``V == 0`` branches of the source
    (physics.md §10 items 2 and 6).
    """
    p_set = let("p_set", polarity_weight(s.v_cell, P.vs))
    p_reset = let("p_reset", polarity_weight(-s.v_cell, P.vs))
    return p_set, p_reset


def conduction(s: State, t_safe: Expr) -> Conduction:
    """The three current paths (physics.md §3).

    * Oxide leakage outside the CF:  I₁ = J₀·π(W_CF² − w²)/4·e^(−L₀/X_T)·sinh(V/V_T),
      plus the cell shunt ``V/r_shunt``.
    * Metallic CF body:  R_CF = ρ(T)·(L₀ − x)/(π w²/4), ρ(T) = ρ₀·e^(tcr·(T − tamb)).
    * Gap: trap-assisted hopping  J₀·(π w²/4)·e^(−x/X_T)·sinh(V_g/V_T), in parallel with a
      metallic contact that takes over as the tip touches the electrode (x → 0): the
      ``x ≤ 0`` branch of the source, blended smoothly, with conductance ``kcontact`` times
      the hopping small-signal conductance at x = 0.  Unlike the source it acts in both
      polarities, so the LRS is ohmic and symmetric, as measured.
    """
    area_cf = let("area_cf", PI / 4.0 * s.w * s.w)
    area_ox = let(
        "area_ox",
        PI / 4.0 * soft_floor(P.wcf * P.wcf - s.w * s.w, 0.0, 0.01 * P.wcf * P.wcf),
    )
    i_leak = let(
        "i_leak",
        P.j0 * area_ox * safe_exp(-P.l0 / P.xt) * safe_sinh(s.v_cell / P.vt)
        + s.v_cell / P.rshunt,
    )

    rho = let("rho", P.rho0 * safe_exp(P.tcr * (t_safe - P.tamb)))
    cf_length = let("cf_length", soft_floor(P.l0 - s.x, P.lmin, P.lmin))
    g_cf = let("g_cf", area_cf / (rho * cf_length))
    v_body = let("v_body", s.v_cell - s.v_gap)
    i_cf = let("i_cf", g_cf * v_body)

    g_hop0 = let("g_hop0", P.j0 * area_cf / P.vt)
    contact = let("contact", logistic((P.xc - s.x) / P.xcw))
    i_hop = let("i_hop", P.j0 * area_cf * safe_exp(-s.x / P.xt) * safe_sinh(s.v_gap / P.vt))
    i_gap = let("i_gap", i_hop + contact * P.kcontact * g_hop0 * s.v_gap)
    # The ion kinetics at the tip are driven by the voltage a hopping gap would need to
    # carry the gap current, V_T·asinh(I/(J₀·A·e^(−x/X_T))).  While the gap is open this
    # is V_g itself; once the metallic contact shorts the gap it is larger than V_g, so
    # RESET can start from a closed gap (as in the v2.0 negative branch) while the LRS
    # conducts ohmically.  It is written with the filament current, equal to the gap
    # current at the solution: I_cf/(J₀·A) = V_body/(J₀·ρ·L_cf), so no stiff contact
    # conductance enters the drive.  Far from contact (x > xdrive) the drive is V_g
    # directly, which avoids the large gain of that form in the HRS; the two agree there.
    v_virtual = let(
        "v_virtual",
        P.vt * asinh((s.v_cell - s.v_gap) * safe_exp(s.x / P.xt)
                     / (P.j0 * rho * cf_length)),
    )
    near = let("near_contact", logistic((P.xdrive - s.x) / (0.1 * P.xdrive)))
    v_drive = let("v_drive", s.v_gap + near * (v_virtual - s.v_gap))

    # Each term is ≥ 0 for any node voltages (odd, monotone paths), so no |·| is needed.
    power = let("power", i_cf * v_body + i_gap * s.v_gap)
    return Conduction(i_leak, i_cf, i_gap, v_drive, power, t_safe, let("r_cf", 1.0 / g_cf))


def rate_cap(rate: Expr) -> Expr:
    """Smooth saturation r·v_cap/(r + v_cap) of a non-negative rate (physics.md §10.5)."""
    return rate / (1.0 + rate / P.vcap)


def log_rate_cap(ln_rate: Expr) -> Expr:
    """r·v_cap/(r + v_cap) from ln r (m/s), as exp(ln r − softplus(ln r − ln v_cap)).

    Accurate for rates far below the cap (read disturb needs 1e-20 m/s), never above
    ``vcap`` for any value of ln r, and the exponent is bounded by ln v_cap.
    """
    return safe_exp(ln_rate - softplus(ln_rate - ln(P.vcap)))


def window(distance: Expr) -> Expr:
    """1 well inside a bound, 0 beyond it: stops a state at its bound inside the ODE."""
    return logistic(distance / P.xbound)


def kinetics(s: State, v_drive: Expr, kt: Expr, p_set: Expr, p_reset: Expr) -> Kinetics:
    """Ion kinetics (physics.md §4), Arrhenius in the local T, barriers lowered by field.

    SET, stage 1 (vertical growth, gap closes):
        r_v = a·f·exp(−(E_a − Z·α·V_g/x)/kT)
    SET, stage 2 (lateral growth once the gap has closed, x < ``xlat``):
        r_l = k_w·(w_eff + w_eff²/2w)·f·exp(−(E_a − Z·α·f_w·V/L₀)/kT)
    RESET, the slower of two sequential steps (harmonic combination, not ``min``):
        r₁ = a·f·exp(−(E_i + r·Z·V_g)/kT)                 O²⁻ release (V_g < 0)
        r₂ = a·f·exp(−E_h/kT)·sinh(Z·α_h·|V_g|/(x·kT))    O²⁻ hopping across the gap
    All four are formed as logarithms (``ln_rate_*``) and capped by a logistic.
    V_g is the drive voltage of :func:`conduction` (the gap voltage while the gap is open);
    ``1/x`` is regularised as ``1/√(x² + x_eps²)``; every rate is capped smoothly at
    ``vcap`` (:func:`rate_cap`, :func:`log_rate_cap`).
    RESET also thins the CF (``kwr`` times the gap rate), so the width is not a ratchet.
    """
    x_field = let("x_field", sqrt(s.x * s.x + P.xeps * P.xeps))
    ln_af = let("ln_af", ln(P.a0) + ln(P.f0))
    ea = let("ea_eff", P.ea + P.dea)

    # Rates are formed in the log domain and capped (exactly r/(1 + r/v_cap)): no
    # exponential can overflow, and a wild value of ln r (a Newton iterate in SPICE)
    # still gives a rate within [0, v_cap].
    ln_rate_vertical = let(
        "ln_rate_vertical", ln_af + (P.zion * P.alpha * v_drive / x_field - ea) / kt
    )
    rate_vertical = let("rate_vertical", log_rate_cap(ln_rate_vertical))
    ln_rate_lateral = let(
        "ln_rate_lateral",
        # √(w² + (wmin/100)²) instead of w: finite for any Newton iterate, 2e-6 relative
        ln(P.kw * (P.weff + P.weff * P.weff / (2.0 * sqrt(s.w * s.w + (0.01 * P.wmin) ** 2)))
           * P.f0)
        + (P.zion * P.alpha * P.fw * s.v_cell / P.l0 - ea) / kt,
    )
    rate_lateral = let("rate_lateral", log_rate_cap(ln_rate_lateral))
    ln_rate_release = let(
        "ln_rate_release", ln_af - (P.ei + P.dei + P.ri * P.zion * v_drive) / kt
    )
    rate_release = let("rate_release", log_rate_cap(ln_rate_release))
    # sinh(y) with y floored at HOP_FLOOR (√(y² + y₀²)): ln sinh stays finite at zero
    # drive, where P₋ = 0 anyway; the rate there is a·f·e^(−E_h/kT)·1e-3.
    hop_drive = let("hop_drive", sqrt(
        (P.zion * P.alphah * smooth_abs0(v_drive, P.vs) / (x_field * kt)) ** 2
        + HOP_FLOOR * HOP_FLOOR))
    ln_rate_hop = let(
        "ln_rate_hop",
        ln_af - (P.eh + P.deh) / kt + ln(0.5 * (safe_exp(hop_drive) - safe_exp(-hop_drive))),
    )
    rate_hop = let("rate_hop", log_rate_cap(ln_rate_hop))
    rate_reset = let(
        "rate_reset", rate_release * rate_hop / (rate_release + rate_hop + RATE_FLOOR)
    )

    lateral_on = let("lateral_on", logistic((P.xlat - s.x) / P.xlatw))
    dx_dt = let(
        "dx_dt",
        -p_set * rate_vertical * window(s.x)
        + p_reset * rate_reset * window(P.l0 - s.x),
    )
    dw_dt = let(
        "dw_dt",
        p_set * lateral_on * rate_lateral * window(P.wcf - s.w)
        - p_reset * P.kwr * rate_reset * window(s.w - P.wmin),
    )
    return Kinetics(
        dx_dt, dw_dt, rate_vertical, rate_lateral, rate_release, rate_hop, rate_reset
    )
