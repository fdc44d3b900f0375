"""Smooth composites of the primitives: C¹ replacements of max, |·|, clips and sign
tests, and the recognisers that let a printer find a soft floor or ceiling it renders
with a fast path."""

from __future__ import annotations

from .core import ZERO, Expr, Operand, as_expr, pos_sq, safe_exp, softplus, sqrt


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


