"""The IR's core: interned nodes, arithmetic with local simplification, the primitive
functions and their table (derivative and spelling per target).

Nodes are *interned*: building the same expression twice returns the same object, so
shared sub-expressions are found by identity.  Every function the physics may call is a
:data:`FUNCTIONS` entry with its spelling in each target, so nothing can be rendered in one
target and not in another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

#: Argument above which :func:`safe_exp` continues linearly (C¹).  exp(40) ≈ 2.4e17.
EXP_LIMIT = 40.0
#: Beyond ±this argument softplus is exact without its logarithm: e^(−37) < 2^(−53), so
#: 1 + e^(−|u|) rounds to 1, and max(u, 0) + ln(1 + e^(−|u|)) is u (or 0) to the last bit.
#: Renderings whose evaluation has a cost per operation take that fast path.
SOFTPLUS_EXACT = 37.0
#: Below −this argument the renderings without log1p (SPICE, Verilog-A) take softplus as
#: e^u: ln(1 + e^u) would lose digits there (relative error 2^(−53)·e^(−u), 1 % at
#: u = −33, where a tiny leakage area times a huge sinh still carries current), and e^u
#: is within e^u/2 ≤ 2e-8 of it.
SOFTPLUS_LN1P = 17.0

Number = int | float


class Expr:
    """An interned expression node.  Build with the module functions and operators."""

    __slots__ = ("__weakref__", "args", "name", "op", "value")

    op: str
    args: tuple[Expr, ...]
    value: float
    name: str

    _table: ClassVar[dict[tuple, Expr]] = {}

    def __new__(cls, op: str, args: tuple[Expr, ...] = (), value: float = 0.0, name: str = ""):
        key = (op, tuple(id(a) for a in args), value, name)
        node = cls._table.get(key)
        if node is None:
            node = object.__new__(cls)
            node.op, node.args, node.value, node.name = op, args, value, name
            cls._table[key] = node
        return node

    # Arithmetic ------------------------------------------------------------
    def __add__(self, other: Operand) -> Expr:
        return add(self, other)

    def __radd__(self, other: Operand) -> Expr:
        return add(other, self)

    def __sub__(self, other: Operand) -> Expr:
        return sub(self, other)

    def __rsub__(self, other: Operand) -> Expr:
        return sub(other, self)

    def __mul__(self, other: Operand) -> Expr:
        return mul(self, other)

    def __rmul__(self, other: Operand) -> Expr:
        return mul(other, self)

    def __truediv__(self, other: Operand) -> Expr:
        return div(self, other)

    def __rtruediv__(self, other: Operand) -> Expr:
        return div(other, self)

    def __neg__(self) -> Expr:
        return neg(self)

    def __pos__(self) -> Expr:
        return self

    def __pow__(self, power: int) -> Expr:
        if not isinstance(power, int) or power < 0:
            raise TypeError("only non-negative integer powers are allowed (spelled as products)")
        result: Expr = num(1.0)
        for _ in range(power):
            result = mul(result, self)
        return result

    def __bool__(self) -> bool:
        raise TypeError("an expression has no truth value; use the smooth functions")

    def __repr__(self) -> str:
        if self.op == "num":
            return repr(self.value)
        if self.op == "sym":
            return self.name
        if self.op == "let":
            return f"{self.name}"
        return f"{self.op}({', '.join(map(repr, self.args))})"

    @property
    def is_num(self) -> bool:
        return self.op == "num"


Operand = Expr | int | float


def as_expr(x: Operand) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"cannot use {x!r} in an expression")
    if not math.isfinite(x):
        raise ValueError(f"non-finite constant {x!r} in an expression")
    return Expr("num", value=float(x))


def num(x: Number) -> Expr:
    return as_expr(float(x))


def sym(name: str) -> Expr:
    """A free symbol: a parameter, a node voltage or a circuit input."""
    return Expr("sym", name=name)


def let(name: str, x: Operand) -> Expr:
    """Name an intermediate.  Printers emit it as a named variable; its value is ``x``."""
    x = as_expr(x)
    if x.op in ("num", "sym"):
        return x
    return Expr("let", (x,), name=name)


ZERO = num(0.0)
ONE = num(1.0)


def _v(x: Expr) -> float | None:
    return x.value if x.op == "num" else None


# Arithmetic with local simplification -------------------------------------
def add(a: Operand, b: Operand) -> Expr:
    a, b = as_expr(a), as_expr(b)
    va, vb = _v(a), _v(b)
    if va is not None and vb is not None:
        return num(va + vb)
    if va == 0.0:
        return b
    if vb == 0.0:
        return a
    if b.op == "neg":
        return sub(a, b.args[0])
    return Expr("add", (a, b))


def sub(a: Operand, b: Operand) -> Expr:
    a, b = as_expr(a), as_expr(b)
    va, vb = _v(a), _v(b)
    if va is not None and vb is not None:
        return num(va - vb)
    if vb == 0.0:
        return a
    if va == 0.0:
        return neg(b)
    if a is b:
        return ZERO
    if b.op == "neg":
        return add(a, b.args[0])
    return Expr("sub", (a, b))


def mul(a: Operand, b: Operand) -> Expr:
    a, b = as_expr(a), as_expr(b)
    va, vb = _v(a), _v(b)
    if va is not None and vb is not None:
        return num(va * vb)
    if va == 0.0 or vb == 0.0:
        return ZERO
    if va == 1.0:
        return b
    if vb == 1.0:
        return a
    if va == -1.0:
        return neg(b)
    if vb == -1.0:
        return neg(a)
    if a.op == "neg" and b.op == "neg":
        return mul(a.args[0], b.args[0])
    if a.op == "neg":
        return neg(mul(a.args[0], b))
    if b.op == "neg":
        return neg(mul(a, b.args[0]))
    if vb is not None:  # constants first: 2*x rather than x*2
        return Expr("mul", (b, a))
    return Expr("mul", (a, b))


def div(a: Operand, b: Operand) -> Expr:
    a, b = as_expr(a), as_expr(b)
    va, vb = _v(a), _v(b)
    if vb == 0.0:
        raise ZeroDivisionError("division by the constant 0 in an expression")
    if va is not None and vb is not None:
        return num(va / vb)
    if va == 0.0:
        return ZERO
    if vb == 1.0:
        return a
    if vb == -1.0:
        return neg(a)
    if a.op == "neg":
        return neg(div(a.args[0], b))
    if b.op == "neg":
        return neg(div(a, b.args[0]))
    return Expr("div", (a, b))


def neg(a: Operand) -> Expr:
    a = as_expr(a)
    if a.op == "num":
        return num(-a.value)
    if a.op == "neg":
        return a.args[0]
    return Expr("neg", (a,))


def _call(op: str, *args: Operand) -> Expr:
    xs = tuple(as_expr(a) for a in args)
    if all(x.op == "num" for x in xs):
        return num(FUNCTIONS[op].evaluate(*(x.value for x in xs)))
    return Expr(op, xs)


# The primitive functions (and logistic, softplus' derivative) -------------
def safe_exp(u: Operand) -> Expr:
    """exp(u) for u ≤ EXP_LIMIT, continued linearly (C¹) above: never overflows."""
    return _call("safe_exp", u)


def sqrt(u: Operand) -> Expr:
    return _call("sqrt", u)


def ln(u: Operand) -> Expr:
    """Natural logarithm (never base 10, in any target)."""
    return _call("ln", u)


def tanh(u: Operand) -> Expr:
    return _call("tanh", u)


def asinh(u: Operand) -> Expr:
    return _call("asinh", u)


def softplus(u: Operand) -> Expr:
    """ln(1 + exp(u)), computed without overflow."""
    return _call("softplus", u)


def logistic(u: Operand) -> Expr:
    """1/(1 + exp(-u)) spelled as (1 + tanh(u/2))/2: bounded derivative everywhere."""
    return 0.5 * (1.0 + tanh(0.5 * as_expr(u)))


def pos_sq(u: Operand) -> Expr:
    """u² for u > 0 and 0 otherwise: C¹, exactly zero on the negative side."""
    return _call("pos_sq", u)


# Function table -------------------------------------------------------------
def _safe_exp_value(u: float) -> float:
    return math.exp(min(u, EXP_LIMIT)) * (1.0 + max(u - EXP_LIMIT, 0.0))


def _softplus_value(u: float) -> float:
    return max(u, 0.0) + math.log1p(math.exp(-abs(u)))


@dataclass(frozen=True)
class Function:
    """A function the IR knows, with its derivative and its spelling per target.

    ``spice``/``veriloga`` templates use ``{0}`` for the argument; ``None`` means the
    function is internal (a derivative helper) and must not reach that target.
    """

    name: str
    evaluate: object
    derivative: object  # Callable[[Expr], Expr]: d f(u)/du as an expression of u
    numpy: str
    spice: str | None
    veriloga: str | None


def _d_safe_exp(u: Expr) -> Expr:
    return Expr("exp_clip", (u,))


def _d_sqrt(u: Expr) -> Expr:
    return div(0.5, sqrt(u))


def _d_ln(u: Expr) -> Expr:
    return div(1.0, u)


def _d_tanh(u: Expr) -> Expr:
    t = tanh(u)
    return sub(1.0, mul(t, t))


def _d_asinh(u: Expr) -> Expr:
    return div(1.0, sqrt(add(mul(u, u), 1.0)))


def _d_softplus(u: Expr) -> Expr:
    return logistic(u)


def _d_pos_sq(u: Expr) -> Expr:
    return mul(2.0, Expr("pos", (u,)))


def _d_kink(u: Expr) -> Expr:
    raise NotImplementedError("second derivatives of C¹ primitives are not provided")


_LIM = repr(EXP_LIMIT)

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        Function(
            "safe_exp",
            _safe_exp_value,
            _d_safe_exp,
            numpy="safe_exp({0})",
            spice="rr_safe_exp({0})",
            veriloga="`SAFE_EXP({0})",
        ),
        Function("sqrt", math.sqrt, _d_sqrt, "np.sqrt({0})", "sqrt({0})", "sqrt({0})"),
        Function("ln", math.log, _d_ln, "np.log({0})", "ln({0})", "ln({0})"),
        Function("tanh", math.tanh, _d_tanh, "np.tanh({0})", "tanh({0})", "tanh({0})"),
        Function("asinh", math.asinh, _d_asinh, "np.arcsinh({0})", "asinh({0})", "asinh({0})"),
        Function(
            "softplus",
            _softplus_value,
            _d_softplus,
            numpy="softplus({0})",
            spice="rr_softplus({0})",
            veriloga="`SOFTPLUS({0})",
        ),
        Function(
            "pos_sq",
            lambda u: max(u, 0.0) ** 2,
            _d_pos_sq,
            numpy="pos_sq({0})",
            spice="rr_pos_sq({0})",
            veriloga="`POS_SQ({0})",
        ),
        # Derivative helpers: numpy only.
        Function(
            "exp_clip",
            lambda u: math.exp(min(u, EXP_LIMIT)),
            _d_kink,
            numpy="np.exp(np.minimum({0}, " + _LIM + "))",
            spice=None,
            veriloga=None,
        ),
        Function("pos", lambda u: max(u, 0.0), _d_kink, "np.maximum({0}, 0.0)", None, None),
    )
}

ARITHMETIC = ("add", "sub", "mul", "div", "neg")


