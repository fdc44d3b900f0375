"""What every printer shares: scheduling of intermediates and rendering of expressions.

A printer only renders.  It chooses how a number, a symbol and a function call are spelled
in its target; the scheduling (which sub-expressions become named variables, in which
order) is the same for all targets, so generated files keep the physicist's names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..expr import FUNCTIONS, Expr, walk

_PREC = {"add": 1, "sub": 1, "mul": 2, "div": 2, "neg": 3}


@dataclass(frozen=True)
class Dialect:
    """Spelling of the IR in one target."""

    target: str  # "numpy" | "spice" | "veriloga" | "torch"
    number: Callable[[float], str]
    symbol: Callable[[str], str]
    #: the function spellings of a target the IR's :class:`~rram.expr.Function` table
    #: does not carry (the printer owns them); None: the table's
    spellings: Mapping[str, str | None] | None = None

    def call(self, op: str, arg: str) -> str:
        template = (self.spellings.get(op) if self.spellings is not None
                    else getattr(FUNCTIONS[op], self.target))
        if template is None:
            raise ValueError(f"function {op!r} has no {self.target} spelling (internal helper)")
        return template.format(arg)


@dataclass(frozen=True)
class Assignment:
    name: str
    node: Expr


class Schedule:
    """Variables for named intermediates and shared sub-expressions, in dependency order.

    ``inline`` decides per node whether it is rendered in place; by default ``let`` nodes
    and nodes used more than once get variables, everything else is inlined.
    """

    def __init__(
        self,
        roots: Sequence[Expr],
        *,
        share: bool = True,
        reserved: Sequence[str] = (),
        prefix: str = "t",
    ):
        order = walk(roots)
        uses: dict[int, int] = {}
        for node in order:
            for child in set(map(id, node.args)):
                uses[child] = uses.get(child, 0) + 1
        for r in roots:
            uses[id(r)] = uses.get(id(r), 0) + 1

        taken = set(reserved)
        self.names: dict[int, str] = {}
        self.assignments: list[Assignment] = []
        counter = 0
        for node in order:
            if node.op in ("num", "sym"):
                continue
            if node.op == "let":
                base = node.name
            elif share and uses.get(id(node), 0) > 1 and node.op != "neg":
                counter += 1
                base = f"{prefix}{counter}"
            else:
                continue
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            self.names[id(node)] = name
            self.assignments.append(Assignment(name, node))

    def render(self, node: Expr, dialect: Dialect, *, top: bool = False) -> str:
        """Render ``node``; variables are referenced by name unless ``top`` is set."""
        return _render(node, dialect, self.names, top)[0]


def _render(node: Expr, d: Dialect, names: dict[int, str], top: bool) -> tuple[str, int]:
    if not top and id(node) in names:
        return names[id(node)], 4
    op = node.op
    if op == "num":
        text = d.number(node.value)
        return text, (4 if not text.startswith("-") else 3)
    if op == "sym":
        return d.symbol(node.name), 4
    if op == "let":
        return _render(node.args[0], d, names, False)
    if op == "neg":
        inner, p = _render(node.args[0], d, names, False)
        return ("-" + (inner if p >= 3 else f"({inner})")), 3
    if op in _PREC:
        prec = _PREC[op]
        (a, pa), (b, pb) = (_render(x, d, names, False) for x in node.args)
        sym_op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
        left = a if pa >= prec else f"({a})"
        # Parenthesise a right operand of equal precedence: the tree (and so the rounding)
        # is kept exactly in every target.
        right = b if pb > prec else f"({b})"
        if sym_op in "+-" and right.startswith("-"):
            right = f"({right})"
        if sym_op in "*/" and right.startswith("-"):
            right = f"({right})"
        return (f"{left} {sym_op} {right}" if prec == 1 else f"{left}{sym_op}{right}"), prec
    if len(node.args) != 1:
        raise ValueError(f"unexpected arity for {op}")
    arg, _ = _render(node.args[0], d, names, False)
    if op in FUNCTIONS:
        text = d.call(op, arg)
    else:
        raise ValueError(f"unknown operation {op!r}")
    return text, 4
