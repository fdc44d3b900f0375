"""The tangents of the lockstep integration (:func:`rram.torch.transient.integrate_tensors`):
tensors with and without their forward-mode tangents (:mod:`torch.autograd.forward_ad`),
the kernels' derivatives by central differences and a converged step's tangent by the
implicit function theorem."""

from __future__ import annotations

import warnings

import torch
import torch.autograd.forward_ad as fwad


def primal(x: torch.Tensor) -> torch.Tensor:
    """``x`` without its forward-mode tangent (``x`` itself when it has none)."""
    return fwad.unpack_dual(x).primal


def tangent(x: torch.Tensor) -> torch.Tensor:
    """``x``'s forward-mode tangent (zeros when it has none)."""
    t = fwad.unpack_dual(x).tangent
    return torch.zeros_like(x) if t is None else t


def dual(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    # torch loads its forward-mode decompositions on the first dual tensor through the
    # deprecated torch.jit.script (torch 2.13): its warning is torch's, not the caller's
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated",
                                DeprecationWarning)
        return fwad.make_dual(p, t)


def solve_equilibrated(J: torch.Tensor, rhs: torch.Tensor
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """J·x = rhs with J's rows and columns scaled to unit maxima first: the circuit's
    Jacobian spans ~40 decades (a CF conductance of 1e15 S/m beside a thermal row of
    1e25), where an unscaled LU leaves the algebraic nodes' tangents as rounding noise."""
    rows = 1.0 / J.abs().amax(dim=-1, keepdim=True).clamp_min(1e-300)
    Jr = J * rows
    cols = 1.0 / Jr.abs().amax(dim=-2, keepdim=True).clamp_min(1e-300)
    z, info = torch.linalg.solve_ex(Jr * cols, (rhs[..., None] * rows))
    return z[..., 0] * cols[..., 0, :], info


def central_jvp(fn, *args: torch.Tensor, floors: tuple[float, ...] = (), step: float = 1e-6):
    """``fn(*args)`` (each argument (lanes, k); ``fn`` returns a tensor or a tuple of
    tensors, lanes first) as duals whose tangents are its derivative along the
    arguments' tangents, by central differences: one pair of evaluations per argument
    that carries a tangent (their scales differ by decades: a gap's tangent by a barrier
    reaches 1e6 nm/eV in a SET), each lane stepped so that the relatively most-moved
    entry of that argument moves by ``step`` of its magnitude, floored at the argument's
    ``floors`` entry (default 0: an entry at 0 moves by ``step`` absolutely; a state or
    node near 0 needs a floor, or a temperature rise of 1e-12 K would shrink the step
    of every other entry to rounding): truncation ~step², rounding ~1e-16/step.

    Why not forward mode: torch 2.13 takes a Python path (its ZeroTensor meta kernels,
    ~100 µs an operation) for every operation that mixes a dual with a plain tensor or a
    number, which is most of the generated kernels' thousands: a SET run took 27× its
    primal; by differences it takes ~5×."""
    prim = [primal(a) for a in args]
    centre = fn(*prim)
    outs = centre if isinstance(centre, tuple) else (centre,)
    tangents = [torch.zeros_like(c) for c in outs]
    for k, a in enumerate(args):
        if not has_tangent(a):
            continue
        p, t = prim[k], tangent(a)
        floor = floors[k] if k < len(floors) else 0.0
        size = p.abs().clamp_min(floor) if floor > 0 else torch.where(p != 0, p.abs(), 1.0)
        scale = (t.abs() / size).amax(dim=1)
        moved = scale > 0
        eps = torch.where(moved, step / torch.where(moved, scale, 1.0), 0.0)
        half = torch.where(moved, 0.5 / torch.where(moved, eps, 1.0), 0.0)
        plus, minus = (fn(*prim[:k], p + s * eps[:, None] * t, *prim[k + 1:])
                       for s in (1.0, -1.0))
        plus, minus = ((x,) if not isinstance(x, tuple) else x for x in (plus, minus))
        for i, (a_, b_) in enumerate(zip(plus, minus, strict=True)):
            tangents[i] = tangents[i] + (a_ - b_) * half.reshape((-1,) + (1,) * (a_.dim() - 1))
    duals = tuple(dual(c, t) for c, t in zip(outs, tangents, strict=True))
    return duals if isinstance(centre, tuple) else duals[0]


def implicit_solution(lanes, y: torch.Tensor, u: torch.Tensor, residual, jacobian
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """The solution ``y`` (primal, converged) of residual(F, JQ) = 0 with its tangent by
    the implicit function theorem: J·S = −∂R/∂θ, J = jacobian(JF, JQ) of the same
    evaluation's primals, the explicit derivative taken through the parameters',
    inputs' and coefficients' own tangents (one linear solve, not the Newton
    iterations).  Also JQ (with its tangent)."""
    F, _, JF, JQ = lanes(y, u)
    S, _ = solve_equilibrated(jacobian(primal(JF), primal(JQ)), -tangent(residual(F, JQ)))
    return dual(y, S), JQ


def has_tangent(x: torch.Tensor) -> bool:
    """Whether ``x`` carries a forward-mode tangent."""
    return fwad.unpack_dual(x).tangent is not None


__all__ = ["central_jvp", "dual", "has_tangent", "implicit_solution", "primal",
           "solve_equilibrated", "tangent"]
