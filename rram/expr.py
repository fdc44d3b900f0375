"""A tiny expression IR: the one language the model equations are written in.

The physics (:mod:`rram.equations`) builds expressions with ordinary arithmetic; the
printers render them to numpy/numba, ngspice B-source syntax and Verilog-A.  Every
function the physics may call is listed in :data:`FUNCTIONS` with its spelling in each
target, so nothing can be rendered in one target and not in another.

Design choices
--------------
* Nodes are *interned*: building the same expression twice returns the same object, so
  shared sub-expressions are found by identity (common-subexpression elimination is free).
* Only C¹ building blocks are exposed to the physics.  ``safe_exp`` has a linear tail,
  ``softplus`` and ``logistic`` are smooth, ``pos_sq`` is the C¹ square of a ramp.  The C⁰
  helpers ``exp_clip`` and ``pos`` exist only as derivatives of those and are never
  printed to SPICE or Verilog-A.
* :func:`diff` differentiates symbolically; the numpy printer uses it for Newton
  Jacobians.  Simplification is local (constant folding, 0 and 1 elimination), enough to
  keep derivative trees small.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

#: Argument above which :func:`safe_exp` continues linearly (C¹).  exp(40) ≈ 2.4e17.
EXP_LIMIT = 40.0
#: Beyond ±this argument softplus is exact without its logarithm: e^(−37) < 2^(−53), so
#: 1 + e^(−|u|) rounds to 1, and max(u, 0) + ln(1 + e^(−|u|)) is u (or 0) to the last bit.
#: Renderings whose evaluation has a cost per operation take that fast path.
SOFTPLUS_EXACT = 37.0

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


# The smooth building blocks (the only functions the physics may call) ------
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


def safe_sinh(u: Operand) -> Expr:
    u = as_expr(u)
    return 0.5 * (safe_exp(u) - safe_exp(-u))


def smooth_max(a: Operand, b: Operand, eps: Operand) -> Expr:
    """½(a + b + √((a−b)² + ε²)): a C∞ maximum, at most ε/2 above max(a, b)."""
    a, b, eps = as_expr(a), as_expr(b), as_expr(eps)
    d = a - b
    return 0.5 * (a + b + sqrt(d * d + eps * eps))


def soft_floor(u: Operand, floor: Operand, width: Operand) -> Expr:
    """floor + width·softplus((u − floor)/width): equals u to within width·e^(−(u−floor)/width)."""
    u, floor, width = as_expr(u), as_expr(floor), as_expr(width)
    return floor + width * softplus((u - floor) / width)


def soft_ceil(u: Operand, ceil: Operand, width: Operand) -> Expr:
    """ceil − width·softplus((ceil − u)/width): equals u to within width·e^(−(ceil−u)/width)."""
    u, ceil, width = as_expr(u), as_expr(ceil), as_expr(width)
    return ceil - width * softplus((ceil - u) / width)


def soft_floor_parts(node: Expr) -> tuple[Expr, Expr, Expr] | None:
    """(u, floor, width) if ``node`` was built by :func:`soft_floor`, else None."""
    if node.op == "mul":  # a floor at 0: width·softplus(u/width)
        u = _softplus_distance(node)
        return None if u is None else (u, ZERO, node.args[0])
    if node.op != "add":
        return None
    floor, scaled = node.args
    distance = _softplus_distance(scaled)
    if distance is None:
        return None
    width = scaled.args[0]
    if distance.op == "sub" and distance.args[1] is floor:
        return distance.args[0], floor, width
    # u − (−c) is built as u + c
    if distance.op == "add" and floor.op == "neg" and distance.args[1] is floor.args[0]:
        return distance.args[0], floor, width
    return None


def soft_ceil_parts(node: Expr) -> tuple[Expr, Expr, Expr] | None:
    """(u, ceil, width) if ``node`` was built by :func:`soft_ceil`, else None."""
    if node.op != "sub":
        return None
    ceil, scaled = node.args
    distance = _softplus_distance(scaled)
    if distance is None or distance.op != "sub" or distance.args[0] is not ceil:
        return None
    return distance.args[1], ceil, scaled.args[0]


def soft_cap_parts(node: Expr) -> tuple[Expr, Expr] | None:
    """(u, cap) if ``node`` is u − softplus(u − cap) (a soft ceiling of unit width, as
    :func:`~rram.equations.capped_rate` builds it), else None."""
    if node.op != "sub" or node.args[1].op != "softplus":
        return None
    u, excess = node.args[0], node.args[1].args[0]
    if excess.op != "sub" or excess.args[0] is not u:
        return None
    return u, excess.args[1]


def _softplus_distance(scaled: Expr) -> Expr | None:
    """d if ``scaled`` is width·softplus(d/width), else None."""
    if scaled.op != "mul" or scaled.args[1].op != "softplus":
        return None
    width, ratio = scaled.args[0], scaled.args[1].args[0]
    if ratio.op != "div" or ratio.args[1] is not width:
        return None
    return ratio.args[0]


def soft_clip(u: Operand, lo: Operand, hi: Operand, width: Operand) -> Expr:
    """u inside [lo, hi] (to within width·e^(−distance/width)), saturating smoothly outside.

    A soft floor followed by a soft ceiling, hi − w·softplus((hi − floor)/w): C∞,
    monotone, and exactly within [lo, hi] however large |u| is (no cancellation).
    """
    return soft_ceil(soft_floor(u, lo, width), hi, width)


def soft_clip_odd(u: Operand, limit: Operand, width: Operand) -> Expr:
    """An odd soft clip to ±limit: u − w·softplus((u − L)/w) + w·softplus((−u − L)/w).

    Exactly odd and exactly 0 at u = 0 (the two corrections cancel), the identity to
    within w·e^(−(L − |u|)/w) inside the range.
    """
    u, limit, width = as_expr(u), as_expr(limit), as_expr(width)
    return u - width * softplus((u - limit) / width) + width * softplus((-u - limit) / width)


def smooth_abs0(u: Operand, eps: Operand) -> Expr:
    """u²/√(u² + ε²): C∞, zero at u = 0, |u|·(1 − ε²/2u²) for |u| ≫ ε."""
    u, eps = as_expr(u), as_expr(eps)
    return u * u / sqrt(u * u + eps * eps)


def polarity_weight(v: Operand, width: Operand) -> Expr:
    """v₊²/(v₊² + w²): 0 for v ≤ 0 (exactly), → 1 for v ≫ w; C¹ at v = 0."""
    s = pos_sq(v)
    width = as_expr(width)
    return s / (s + width * width)


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


# Traversal, substitution, evaluation, differentiation -----------------------
def walk(roots: Iterable[Expr]) -> list[Expr]:
    """All nodes reachable from ``roots`` in dependency order (children first)."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(r, False) for r in reversed(list(roots))]
    while stack:
        node, expanded = stack.pop()
        if id(node) in seen:
            continue
        if expanded:
            seen.add(id(node))
            order.append(node)
            continue
        stack.append((node, True))
        for child in reversed(node.args):
            if id(child) not in seen:
                stack.append((child, False))
    return order


def symbols(roots: Iterable[Expr]) -> set[str]:
    return {n.name for n in walk(roots) if n.op == "sym"}


def rebuild(node: Expr, args: tuple[Expr, ...]) -> Expr:
    """The node with new children, through the simplifying constructors."""
    op = node.op
    if op == "add":
        return add(*args)
    if op == "sub":
        return sub(*args)
    if op == "mul":
        return mul(*args)
    if op == "div":
        return div(*args)
    if op == "neg":
        return neg(*args)
    if op == "let":
        return let(node.name, args[0])
    if op in ("exp_clip", "pos"):
        return Expr(op, args)
    return _call(op, *args)


def substitute(roots: list[Expr], mapping: Mapping[str, Operand]) -> list[Expr]:
    """Replace symbols by expressions (renaming nodes, binding constants)."""
    repl = {name: as_expr(v) for name, v in mapping.items()}
    memo: dict[int, Expr] = {}
    for node in walk(roots):
        if node.op == "sym":
            memo[id(node)] = repl.get(node.name, node)
        elif node.op == "num":
            memo[id(node)] = node
        else:
            memo[id(node)] = rebuild(node, tuple(memo[id(a)] for a in node.args))
    return [memo[id(r)] for r in roots]


def exp_clip_shared(roots: Sequence[Expr]) -> list[Expr]:
    """``roots`` with every safe_exp(u) spelled exp_clip(u)·(1 + pos(u − EXP_LIMIT)).

    The same operations in the same order as the ``safe_exp`` helper of the kernels, so
    the same doubles; but exp_clip(u) is also safe_exp's derivative, so a kernel that
    evaluates a value and its Jacobian together computes each exponential once."""
    memo: dict[int, Expr] = {}
    for node in walk(roots):
        if node.op in ("num", "sym"):
            memo[id(node)] = node
            continue
        args = tuple(memo[id(a)] for a in node.args)
        if node.op == "safe_exp":
            u = args[0]
            memo[id(node)] = mul(Expr("exp_clip", (u,)),
                                 add(1.0, Expr("pos", (sub(u, EXP_LIMIT),))))
        else:
            memo[id(node)] = rebuild(node, args)
    return [memo[id(r)] for r in roots]


def evaluate(roots: Sequence[Expr], env: Mapping[str, Any],
             functions: Mapping[str, Callable] | None = None) -> list[Any]:
    """Values of ``roots`` with every symbol bound in ``env``: the reference interpreter.

    With the default ``functions`` (each :data:`FUNCTIONS` entry's scalar ``evaluate``)
    symbols are floats (slow; for tests and for checking printers).  With a table of
    vectorised callables (e.g. numpy's) the same arithmetic runs on arrays: the array
    engine evaluates its access devices over all cells at once this way."""
    if functions is None:
        functions = {name: f.evaluate for name, f in FUNCTIONS.items()}
        bind: Callable = float
    else:
        bind = _as_float_array
    vals: dict[int, Any] = {}
    for node in walk(roots):
        op = node.op
        if op == "num":
            v = node.value
        elif op == "sym":
            v = bind(env[node.name])
        elif op == "let":
            v = vals[id(node.args[0])]
        else:
            xs = [vals[id(a)] for a in node.args]
            if op == "add":
                v = xs[0] + xs[1]
            elif op == "sub":
                v = xs[0] - xs[1]
            elif op == "mul":
                v = xs[0] * xs[1]
            elif op == "div":
                v = xs[0] / xs[1]
            elif op == "neg":
                v = -xs[0]
            else:
                v = functions[op](*(bind(x) for x in xs))
        vals[id(node)] = v
    return [vals[id(r)] for r in roots]


def _as_float_array(x: Any) -> Any:
    import numpy as np

    return np.asarray(x, dtype=float)


def diff(expr: Expr, var: str, _memo: dict[tuple[int, str], Expr] | None = None) -> Expr:
    """Symbolic derivative d expr / d var (var: a symbol name)."""
    memo = {} if _memo is None else _memo
    for node in walk([expr]):
        key = (id(node), var)
        if key in memo:
            continue
        op = node.op
        if op == "num":
            d = ZERO
        elif op == "sym":
            d = ONE if node.name == var else ZERO
        else:
            ds = [memo[(id(a), var)] for a in node.args]
            a = node.args
            if op == "let":
                d = ds[0]
            elif op == "add":
                d = add(ds[0], ds[1])
            elif op == "sub":
                d = sub(ds[0], ds[1])
            elif op == "mul":
                d = add(mul(ds[0], a[1]), mul(a[0], ds[1]))
            elif op == "div":
                # (a/b)' = a'/b − (a/b)·b'/b
                d = sub(div(ds[0], a[1]), mul(node, div(ds[1], a[1])))
            elif op == "neg":
                d = neg(ds[0])
            else:
                d = ZERO if ds[0] is ZERO else mul(FUNCTIONS[op].derivative(a[0]), ds[0])
        memo[key] = d
    return memo[(id(expr), var)]
