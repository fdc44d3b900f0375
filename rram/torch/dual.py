"""Forward-mode helpers: tensors with and without their tangents
(:mod:`torch.autograd.forward_ad`), and the equilibrated solve the tangents need."""

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


def has_tangent(x: torch.Tensor) -> bool:
    """Whether ``x`` carries a forward-mode tangent."""
    return fwad.unpack_dual(x).tangent is not None


__all__ = ["dual", "has_tangent", "primal", "solve_equilibrated", "tangent"]
