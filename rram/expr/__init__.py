"""A tiny expression IR: the one language the model equations are written in.

Three modules: :mod:`.core` (nodes, arithmetic, the primitive functions and their
table), :mod:`.smooth` (the C¹ composites the physics builds with) and :mod:`.calculus`
(traversal, substitution, evaluation, differentiation); this package hands their names on.

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

from .calculus import (
    diff,
    evaluate,
    exp_clip_shared,
    rebuild,
    replace,
    substitute,
    symbols,
    walk,
)
from .core import (
    ARITHMETIC,
    EXP_LIMIT,
    FUNCTIONS,
    ONE,
    SOFTPLUS_EXACT,
    SOFTPLUS_LN1P,
    ZERO,
    Expr,
    Function,
    Number,
    Operand,
    add,
    as_expr,
    asinh,
    div,
    let,
    ln,
    logistic,
    mul,
    neg,
    num,
    pos_sq,
    safe_exp,
    softplus,
    sqrt,
    sub,
    sym,
    tanh,
)
from .smooth import (
    polarity_weight,
    safe_sinh,
    smooth_abs0,
    smooth_max,
    soft_cap_parts,
    soft_ceil,
    soft_ceil_parts,
    soft_clip,
    soft_clip_odd,
    soft_floor,
    soft_floor_parts,
)

__all__ = [
    'ARITHMETIC', 'EXP_LIMIT', 'FUNCTIONS', 'ONE', 'SOFTPLUS_EXACT', 'SOFTPLUS_LN1P', 'ZERO',
    'Expr',
    'Function', 'Number', 'Operand', 'add', 'as_expr', 'asinh', 'diff', 'div', 'evaluate',
    'exp_clip_shared', 'let', 'ln', 'logistic', 'mul', 'neg', 'num', 'polarity_weight',
    'pos_sq', 'rebuild', 'replace', 'safe_exp', 'safe_sinh', 'smooth_abs0', 'smooth_max',
    'soft_cap_parts', 'soft_ceil', 'soft_ceil_parts', 'soft_clip', 'soft_clip_odd',
    'soft_floor', 'soft_floor_parts', 'softplus', 'sqrt', 'sub', 'substitute', 'sym',
    'symbols', 'tanh', 'walk',
]
