"""Leakage across the cell, in parallel with the CF.

The pristine oxide around the CF leaks with its own current density ``jox`` (few traps;
the gap's ``j0`` is vacancy-rich), through the cell's area outside the CF, with the
gap's nonlinearity ``vt``; the cell's shunt ``rshunt`` is in parallel:
I_ox = j_ox·π(W_CF² − w²)/4·sinh(V/V_T) + V/r_shunt.  Provides ``area_ox`` and
``i_leak``; adds the channel ``i_leak``.
"""

from __future__ import annotations

from ..constants import PI
from ..expr import safe_sinh, soft_floor
from ..params import parameter as _p
from .scope import Block, Scope

PARAMETERS = (
    _p("jox", 5e6, "A/m^2", "Leakage current density of the pristine oxide around the CF "
       "(few traps; the gap's j0 is vacancy-rich)", "conduction", 0, 1e16),
    _p("rshunt", 2e9, "Ohm", "Cell shunt leakage (v2.0 RC cell Rh)", "extrinsic", 1e3, 1e16),
)


def build(s: Scope) -> None:
    P = s.P
    w, v_cell = s["w"], s["v_cell"]
    area_ox = s.provide(
        "area_ox", PI / 4.0 * soft_floor(P.wcf * P.wcf - w * w, 0.0, 0.01 * P.wcf * P.wcf))
    i_leak = s.provide("i_leak",
                       P.jox * area_ox * safe_sinh(v_cell / P.vt) + v_cell / P.rshunt)
    s.add("i_leak", i_leak)


BLOCK = Block("leakage", "Leakage: the pristine oxide around the CF and the cell's shunt",
              PARAMETERS, build)
