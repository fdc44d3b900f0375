"""Traversal, substitution, evaluation and differentiation of IR expressions."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .core import (
    EXP_LIMIT,
    FUNCTIONS,
    ONE,
    ZERO,
    Expr,
    Operand,
    _call,
    add,
    as_expr,
    div,
    let,
    mul,
    neg,
    sub,
    sym,
)


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
    return replace(roots, {sym(name): v for name, v in mapping.items()})


def replace(roots: list[Expr], mapping: Mapping[Expr, Operand]) -> list[Expr]:
    """Replace sub-expressions by expressions (found by identity: nodes are interned)."""
    repl = {id(node): as_expr(v) for node, v in mapping.items()}
    memo: dict[int, Expr] = {}
    for node in walk(roots):
        if id(node) in repl:
            memo[id(node)] = repl[id(node)]
        elif node.op in ("sym", "num"):
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
             functions: Mapping[str, Callable] | None = None,
             bind: Callable | None = None) -> list[Any]:
    """Values of ``roots`` with every symbol bound in ``env``: the reference interpreter.

    With the default ``functions`` (each :data:`FUNCTIONS` entry's scalar ``evaluate``)
    symbols are floats (slow; for tests and for checking printers).  With a table of
    vectorised callables (e.g. numpy's) the same arithmetic runs on arrays: the array
    engine evaluates its access devices over all cells at once this way; ``bind``
    converts each symbol's value and function argument (default: numpy float arrays;
    the identity keeps torch tensors and their graphs)."""
    if functions is None:
        functions = {name: f.evaluate for name, f in FUNCTIONS.items()}
        bind = float
    elif bind is None:
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
