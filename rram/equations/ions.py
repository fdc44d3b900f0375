"""What every ion rate shares: the attempt rate, the field's regularised 1/x, the smooth
velocity cap, the windows that gate a rate at a bound, and the restoring factor that
holds a state on its own bound.

Rates are formed in the log domain and capped (exactly r/(1 + r/v_cap)): no exponential
can overflow, and a wild value of ln r (a Newton iterate in SPICE) still gives a rate
within [0, v_cap].  Provides ``x_field`` (√(x² + x_eps²)) and ``ln_af`` (ln(a·f)); the
kinetics blocks use :func:`capped_rate` and :func:`window`.
"""

from __future__ import annotations

from ..expr import ZERO, Expr, ln, logistic, safe_exp, softplus, sqrt
from ..params import parameter as _p
from .scope import Block, Scope, Symbols

PARAMETERS = (
    _p("a0", 0.25e-9, "m", "Vacancy/ion hopping distance (v2.0 a)", "kinetics", 1e-11, 1e-8,
       role="kinetic"),
    _p("f0", 1e13, "Hz", "Attempt frequency (v2.0 f)", "kinetics", 1e9, 1e15,
       role="kinetic"),
    _p("zion", 1, "", "Ion charge number (v2.0 Z)", "kinetics", 0.1, 4, role="kinetic"),
    _p("vcap", 100, "m/s", "Smooth cap of every ion rate (v2.0 hard cap 100 m/s)",
       "kinetics", 1e-3, 1e6, role="kinetic"),
    _p("xeps", 0.05e-9, "m", "Regularisation of 1/x in the field terms", "numerics",
       1e-12, 1e-9, role="smoothing"),
)


def capped_rate(s: Scope, name: str, ln_rate: Expr) -> Expr:
    """r·v_cap/(r + v_cap) from ln r (m/s), as exp(ln r − softplus(ln r − ln v_cap)).

    Accurate for rates far below the cap (read disturb needs 1e-20 m/s), never above
    ``vcap`` for any value of ln r.  The capped logarithm is named ``<name>_capped``: it
    is bounded above by ln v_cap, which is what a SPICE rendering carries on an
    auxiliary node (:class:`~rram.equations.scope.AuxNode`).  Provides the rate as
    ``name`` without its ``ln_``."""
    capped = s.provide(f"{name}_capped", ln_rate - softplus(ln_rate - ln(s.P.vcap)))
    return s.provide(name.replace("ln_", ""), safe_exp(capped))


def window(P: Symbols, distance: Expr) -> Expr:
    """1 well inside a bound, 0 beyond it: gates a rate by another state's bound."""
    return logistic(distance / P.xbound)


def restoring(P: Symbols, distance: Expr) -> Expr:
    """1 well inside a bound, 0 on it, −1 beyond it: the factor on a state's own rate
    toward its bound, logistic(d/xbound) − logistic(−d/(10·xbound)).

    The bound is then a stable fixed point, reached exponentially wherever the
    integrator lands the state.  A logistic window alone only slowed the rate: each SET
    parked the gap 0.024 nm past 0, where the capped rate through the window's tail met
    the guard's recovery.  The side beyond the bound is 10× wider than the side within:
    the symmetric tanh(d/xbound) held the state as well, but ngspice's subcircuit failed
    a fitted TUD card's SET on its steep slope (and a form linear beyond the bound made
    the OSDI module chatter: 4.7 million steps through one SET)."""
    return logistic(distance / P.xbound) - logistic(-distance / (10.0 * P.xbound))


def wear_shift(s: Scope, name: str) -> Expr:
    """The barrier shift (eV) ``name`` the wear block provides (rram.equations.wear);
    zero in a model without it."""
    return s[name] if name in s else ZERO  # noqa: SIM401 (a Scope, no .get)


def build(s: Scope) -> None:
    P = s.P
    x = s["x"]
    s.provide("x_field", sqrt(x * x + P.xeps * P.xeps))
    s.provide("ln_af", ln(P.a0) + ln(P.f0))


BLOCK = Block("ions", "Ion kinetics: what every rate shares", PARAMETERS, build)
