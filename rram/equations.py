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
    Expr,
    asinh,
    logistic,
    polarity_weight,
    safe_exp,
    safe_sinh,
    smooth_abs0,
    soft_floor,
    sqrt,
    sym,
)
from .expr import let as _let

#: Nanometre in metres: the gap and width states are stored in nm (O(1) node values).
NM = 1e-9
#: Floor in the harmonic combination of the two RESET steps, m/s (1e-30 m/s moves a gap
#: by 3e-22 m in ten years): keeps r1·r2/(r1 + r2) defined when both rates underflow.
RATE_FLOOR = 1e-30


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


def temperature(s: State) -> tuple[Expr, Expr]:
    """Local CF temperature T (K) and thermal energy kT (eV).

    T is floored softly at ``tfloor`` (a numerical guard for wild Newton iterates; exact
    to e^(−30) above 200 K).
    """
    t_local = let("t_local", P.tamb + s.dtemp)
    t_safe = let("t_safe", soft_floor(t_local, P.tfloor, 0.1 * P.tfloor))
    return t_safe, let("kt", KB_EV * t_safe)


def width_floor(s: State) -> Expr:
    """CF width floored softly at wmin/2 (guards 1/w and the area against w → 0)."""
    return let("w_floor", soft_floor(s.w, 0.5 * P.wmin, 0.1 * P.wmin))


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
    w_cond = width_floor(s)
    area_cf = let("area_cf", PI / 4.0 * w_cond * w_cond)
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
    u_gap = let("u_gap", s.v_gap / P.vt)
    sinh_gap = let("sinh_gap", safe_sinh(u_gap))
    i_hop = let("i_hop", P.j0 * area_cf * safe_exp(-s.x / P.xt) * sinh_gap)
    i_gap = let("i_gap", i_hop + contact * P.kcontact * g_hop0 * s.v_gap)
    # The ion kinetics at the tip are driven by the voltage a hopping gap would need to
    # carry the gap current: V_g itself while the gap is open, the same hopping-law
    # voltage once the metallic contact shorts it (which keeps RESET able to start from a
    # closed gap, as the v2.0 negative branch does, while LRS conduction stays ohmic).
    # V_drive = V_T·asinh(I_gap/(J₀·A·e^(−x/X_T))), written without that quotient so an
    # underflowing e^(−x/X_T) cannot give 0/0.
    v_drive = let(
        "v_drive",
        P.vt * asinh(sinh_gap + contact * P.kcontact * u_gap * safe_exp(s.x / P.xt)),
    )

    # Each term is ≥ 0 for any node voltages (odd, monotone paths), so no |·| is needed.
    power = let("power", i_cf * v_body + i_gap * s.v_gap)
    return Conduction(i_leak, i_cf, i_gap, v_drive, power, t_safe, let("r_cf", 1.0 / g_cf))


def rate_cap(rate: Expr) -> Expr:
    """Smooth saturation r·v_cap/(r + v_cap) of a non-negative rate (physics.md §10.5)."""
    return rate / (1.0 + rate / P.vcap)


def window(distance: Expr) -> Expr:
    """1 well inside a bound, 0 beyond it: stops a state at its bound inside the ODE."""
    return logistic(distance / P.xbound)


def kinetics(s: State, v_drive: Expr, kt: Expr, p_set: Expr, p_reset: Expr) -> Kinetics:
    """Ion kinetics (physics.md §4), Arrhenius in the local T, barriers lowered by field.

    SET, stage 1 (vertical growth, gap closes):
        r_v = a·f·exp(−(E_a − Z·α·V_g/x)/kT)
    SET, stage 2 (lateral growth once the gap has closed, x < ``xlat``):
        r_l = k_w·(w_eff + w_eff²/2w)·f·exp(−(E_a − Z·α·V/L₀)/kT)
    RESET, the slower of two sequential steps (harmonic combination, not ``min``):
        r₁ = a·f·exp(−(E_i + r·Z·V_g)/kT)                 O²⁻ release (V_g < 0)
        r₂ = a·f·exp(−E_h/kT)·sinh(Z·α_h·|V_g|/(x·kT))    O²⁻ hopping across the gap
    V_g is the drive voltage of :func:`conduction` (the gap voltage while the gap is open);
    ``1/x`` is regularised as ``1/√(x² + x_eps²)``; every rate passes :func:`rate_cap`.
    RESET also thins the CF (``kwr`` times the gap rate), so the width is not a ratchet.
    """
    x_field = let("x_field", sqrt(s.x * s.x + P.xeps * P.xeps))
    af = let("af", P.a0 * P.f0)
    ea = let("ea_eff", P.ea + P.dea)

    rate_vertical = let(
        "rate_vertical",
        rate_cap(af * safe_exp((P.zion * P.alpha * v_drive / x_field - ea) / kt)),
    )
    w_grow = width_floor(s)
    rate_lateral = let(
        "rate_lateral",
        rate_cap(
            P.kw
            * (P.weff + P.weff * P.weff / (2.0 * w_grow))
            * P.f0
            * safe_exp((P.zion * P.alpha * s.v_cell / P.l0 - ea) / kt)
        ),
    )

    rate_release = let(
        "rate_release",
        rate_cap(af * safe_exp(-(P.ei + P.dei + P.ri * P.zion * v_drive) / kt)),
    )
    hop_drive = let("hop_drive", P.zion * P.alphah * smooth_abs0(v_drive, P.vs) / (x_field * kt))
    eh_kt = let("eh_kt", (P.eh + P.deh) / kt)
    rate_hop = let(
        "rate_hop",
        rate_cap(0.5 * af * (safe_exp(hop_drive - eh_kt) - safe_exp(-hop_drive - eh_kt))),
    )
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
