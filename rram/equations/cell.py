"""The cell: its state, guarded for Newton iterates, its temperature and its polarity.

Geometry (device frame: positive ``v_cell`` SETs)::

    ti ──[ R_CF(T) ]── tip ──[ gap: trap-assisted hopping ]── bi
     └──────────────[ oxide leakage ‖ r_shunt ]──────────────┘

* ``x`` (m) is the tunnelling gap between the filament (CF) tip and the bottom electrode;
  the CF body has length ``l0 − x``.
* ``w`` (m) is the CF width (diameter): cross-section ``π w²/4``.
* ``T`` (K) is the local CF temperature, ``tamb + dtemp``: ``tamb`` is the simulator's
  ambient temperature (an environment value, not a card parameter: ``$temperature`` in
  Verilog-A, ngspice's ``temper`` + 273.15 in the subcircuit, ``--temperature`` in the
  Python engine), and the thermal node's rest value is the instance offset ``dtamb``.

The state nodes hold the change of each state since its initial value (``dgap`` and
``dwidth`` in nm, ``dtemp`` in K: :mod:`rram.model`).  This block declares the geometry,
the initial state, the contacts and parasitic capacitance of the cell, and the numerical
widths of its guards; it provides ``v_cell``, ``v_gap``, ``x``, ``w``, ``dtemp``,
``t_safe``, ``kt``, the polarity weights ``p_set``/``p_reset`` and the guard recovery
rates ``x_recovery``/``w_recovery``.
"""

from __future__ import annotations

from ..constants import KB_EV, NM, STATE_OVERSHOOT_M
from ..expr import ZERO, Expr, polarity_weight, pos_sq, soft_clip
from ..params import parameter as _p
from .scope import AuxNode, Block, Constraint, Scope, V

#: Rate constant of the guard-band recovery, 1/(nm·s): a state d nm outside its guard
#: band returns at RECOVERY·d² nm/s (1 nm out: back within nanoseconds).
RECOVERY = 1e9
#: The gap's guard band in widths of its soft clip: over 37 (SOFTPLUS_EXACT), the clip is
#: the identity to rounding at 0 and l0, so a closed gap is 0, not the clip's tail.
GAP_CLIP_WIDTHS = 40.0

PARAMETERS = (
    _p("polarity", 1, "", "+1: SET at positive V(te,be); -1: SET at negative V(te,be)",
       "switch", choices=(-1, 1)),
    _p("x0", 3.5e-9, "m", "Initial gap (state at t = 0 and DC anchor); x0 = l0 is the "
       "pristine cell; down to -0.01 nm, a gap a simulation left just below 0",
       "instance", -STATE_OVERSHOOT_M, 5e-8, kind="instance", role="state"),
    _p("w0", 0.5e-9, "m", "Initial CF width (diameter)", "instance", 1e-11, 1e-7,
       kind="instance", role="state"),
    # The programmed states an instance can start in (rram.states derives them from the
    # card; the defaults are the default card's): `state` picks one, x0/w0 are the rest.
    # No rule ties them to l0 and wcf: a state is checked where it is picked (a card puts
    # it in x0, w0, whose rules hold), so a card whose layer changed stays valid until it
    # starts a cell in a stale state (`rram card --states` derives them again).
    _p("state", 0, "", "Initial state: 0 the instance's x0, w0 (by default the pristine "
       "cell); 1 the LRS (xlrs, wlrs); 2 the HRS (xhrs, whrs)", "instance",
       choices=(0, 1, 2), kind="instance"),
    _p("xlrs", 0.0, "m", "Gap of the LRS, state = 1: the end of the card's standard SET "
       "(rram card --states)", "instance", 0, 5e-8),
    _p("wlrs", 6.322e-9, "m", "CF width of the LRS, state = 1", "instance", 1e-11, 1e-7),
    _p("xhrs", 1.867e-9, "m", "Gap of the HRS, state = 2: the end of the card's standard "
       "RESET", "instance", 0, 5e-8),
    _p("whrs", 5.855e-9, "m", "CF width of the HRS, state = 2", "instance", 1e-11, 1e-7),
    _p("l0", 3.5e-9, "m", "Switching-layer thickness (v2.0 L0 3 nm: room for the gap a "
       "3 V RESET opens); the gap's upper bound", "geometry", 5e-10, 5e-8, kind="instance",
       role="bound"),
    _p("wcf", 30e-9, "m", "Cell (oxide) width: the area of the leakage and a geometric bound "
       "of the CF width, never reached in use", "geometry", 5e-10, 1e-6, kind="instance",
       role="bound"),
    _p("wmin", 0.1e-9, "m", "Minimum CF width (lower bound of RESET thinning)", "geometry",
       1e-11, 5e-9, role="bound"),
    _p("tamb", 300, "K", "Ambient temperature of the simulation: the simulator's "
       "($temperature, .temp), not a card parameter", "environment", 150, 700,
       kind="environment"),
    # The CF's constriction at the top electrode, formed anew by each SET: an oxygen
    # reservoir that oxidises over cycling raises it (the LRS's slow upper mode).
    _p("rtop", 20, "Ohm", "Top contact resistance, CF to top electrode (v2.0 RC cell R1)",
       "extrinsic", 1e-3, 1e7, kind="instance", role="filament"),
    _p("rbot", 20, "Ohm", "Bottom contact resistance (v2.0 RC cell R2)", "extrinsic",
       1e-3, 1e7),
    _p("cp", 1e-15, "F", "Parasitic capacitance across the cell (v2.0 RC cell C)",
       "extrinsic", 0, 1e-9),
    _p("vs", 2e-3, "V", "Width of the polarity weights at V = 0", "numerics", 1e-6, 0.1,
       role="smoothing"),
    _p("xbound", 0.002e-9, "m", "Width of the state bounds (windows at 0, l0, wmin, wcf)",
       "numerics", 1e-13, 5e-10, role="smoothing"),
    _p("tfloor", 50, "K", "Soft floor of the local temperature (guards Newton iterates)",
       "numerics", 1, 150, role="guard"),
    _p("tceil", 4000, "K", "Soft ceiling of the local temperature (guards Newton iterates)",
       "numerics", 1000, 1e5, role="guard"),
    _p("xguard", 0.25e-9, "m", "Margin of the soft guards on x and w beyond their ranges "
       "(guards Newton iterates)", "numerics", 0.1e-9, 1e-9, role="guard"),
    _p("thold", 1e12, "s", "Anchor time constant of the states to x0, w0 in DC analyses "
       "(dc_hold): with the rates off, x0 and w0 are the unique DC state; no anchor in a "
       "transient", "numerics", 1e6, 1e15,
       role="guard"),
)

def _gap_beyond_layer(v):
    return v["x0"] > v["l0"]


def _width_beyond_cell(v):
    return v["w0"] > v["wcf"]


def _floor_beyond_cell(v):
    return v["wmin"] >= v["wcf"]


# named functions and message templates, not lambdas: a model travels to other
# processes by its blocks (pickled by reference)
CONSTRAINTS = (
    Constraint(_gap_beyond_layer,
               "parameter x0: {x0:g} m exceeds l0 = {l0:g} m (valid 0 <= x0 <= l0)"),
    Constraint(_width_beyond_cell,
               "parameter w0: {w0:g} m exceeds wcf = {wcf:g} m (valid w0 <= wcf)"),
    Constraint(_floor_beyond_cell,
               "parameter wmin: {wmin:g} m must be below wcf = {wcf:g} m"),
)


#: The programmed states of ``state`` (1, 2): the parameters of their gap and width.
PROGRAMMED_STATES = {1.0: ("xlrs", "wlrs"), 2.0: ("xhrs", "whrs")}


def selected(state: Expr, given: Expr, lrs: Expr, hrs: Expr) -> Expr:
    """The initial value ``state`` (0, 1 or 2) picks: ``given``, ``lrs`` or ``hrs``.
    Polynomial in the parameter, so every rendering spells it without a branch:
    state·(2 − state) is 1 at 1 and 0 at 0 and 2; state·(state − 1)/2 is 1 at 2 only."""
    return (given + state * (2.0 - state) * (lrs - given)
            + 0.5 * state * (state - 1.0) * (hrs - given))


def guard_recovery(value_nm: Expr, lo_nm: Expr, hi_nm: Expr) -> Expr:
    """Rate (nm/s) that returns a state to its range [lo, hi]; zero inside it."""
    return RECOVERY * (pos_sq(lo_nm - value_nm) - pos_sq(value_nm - hi_nm))


def build(s: Scope) -> None:
    """The physical state from node values (states in nm), guarded for Newton iterates.

    A simulator's Newton iteration may visit absurd node values (a gap of −9 nm, a
    temperature of 10⁶ K) when a step is too long for the SET runaway, and SPICE does not
    restore the last good point before retrying with a shorter step.  The states are
    therefore passed through :func:`~rram.expr.soft_clip`, the identity over the physical
    range and saturating outside it: x in [−xguard, l0 + xguard], xguard/40 wide (the
    identity to rounding over [0, l0], 40 widths inside: a closed gap is 0 exactly, where
    a clip xguard/10 wide read it 1.1e-6 nm open, and a SET-biased LRS relaxed to 0 in
    0.1 ps, below SPICE's step floor; a clip at ±4·xguard did too, but let the SET's
    overshoot below 0 move R_LRS 1 % with the step cap), w in [wmin/2, wcf + xguard] (to
    e^(−5) of the width at wmin), T in [``tfloor``, ``tceil``] (exact to e^(−30) between
    200 K and 2000 K).  Voltages are not clipped: every
    conduction path stays monotone in its voltage (the exponentials continue linearly),
    so a guarded model has no spurious solutions.

    The windows of the kinetics stop the rates at the physical bounds (x in [0, l0],
    w in [wmin, wcf]), so a state that an integrator pushes past a bound (BDF2
    extrapolates a gap that closed in one step to about −x_before/3) would stay there, and
    each engine would park it somewhere else.  ``x_recovery``/``w_recovery`` (nm/s) pull
    it back: RECOVERY·d² for a distance d beyond the bound, exactly zero inside the range
    (C¹, :func:`guard_recovery`).

    The polarity weights P₊ → 1 under SET bias and P₋ → 1 under RESET bias are exactly
    zero at ``v_cell = 0`` and on the other polarity, with zero slope at 0 (C¹): they
    replace the ``V > 0``/``V < 0``/``V == 0`` branches of v2.0.
    """
    P = s.P
    pol = P.polarity
    # the states are measured from the initial state (x0, w0, or the programmed state
    # `state` picks; a card resolves it into x0, w0: rram.card)
    gap_nm = selected(P.state, P.x0, P.xlrs, P.xhrs) / NM + V("dgap")
    width_nm = selected(P.state, P.w0, P.wlrs, P.whrs) / NM + V("dwidth")
    xg = P.xguard / NM
    x_lo, x_hi = -xg, P.l0 / NM + xg
    w_lo, w_hi = 0.5 * P.wmin / NM, P.wcf / NM + xg
    # on SPICE nodes of their own: every branch reads them, and spelt in place their
    # soft clips multiplied the subcircuit's expressions (rram.printers.spice_printer)
    x_nm = s.provide("x_nm", soft_clip(gap_nm, x_lo, x_hi, xg / GAP_CLIP_WIDTHS),
                     aux=AuxNode("x_nm", "nm"))
    w_nm = s.provide("w_nm", soft_clip(width_nm, w_lo, w_hi, 0.1 * P.wmin / NM),
                     aux=AuxNode("w_nm", "nm"))
    v_cell = s.provide("v_cell", pol * (V("ti") - V("bi")))
    s.provide("v_gap", pol * (V("tip") - V("bi")))
    x = s.provide("x", x_nm * NM)
    w = s.provide("w", w_nm * NM)
    dtemp = s.provide("dtemp", V("dtemp"))
    s.provide("x_recovery", guard_recovery(gap_nm, ZERO, P.l0 / NM))
    s.provide("w_recovery", guard_recovery(width_nm, P.wmin / NM, P.wcf / NM))
    t_local = s.provide("t_local", P.tamb + dtemp)
    t_safe = s.provide("t_safe", soft_clip(t_local, P.tfloor, P.tceil, 0.1 * P.tfloor),
                       aux=AuxNode("t_safe", "K"))
    s.provide("kt", KB_EV * t_safe)
    s.provide("p_set", polarity_weight(v_cell, P.vs), aux=AuxNode("p_set", "1"))
    s.provide("p_reset", polarity_weight(-v_cell, P.vs), aux=AuxNode("p_reset", "1"))
    s.output("temp", t_safe, "K", "local CF temperature")
    s.output("gapm", x, "m", "tunnelling gap")
    s.output("widthm", w, "m", "CF width")


BLOCK = Block("cell", "The cell: state, temperature, polarity, contacts", PARAMETERS, build,
              CONSTRAINTS)
