"""The ngspice statistical library of a variation spec: rendering only.

One file, one ``.lib`` section per use, each defining the same cell subcircuit
``<name>_cell te be`` (instance parameters ``state``, ``dtamb``), so a deck switches
between them by its ``.lib`` line alone:

* ``tt``: every carrier at its nominal (the median device);
* ``mc``: every instance draws its own carriers (``aunif``, evaluated per instance by
  ngspice's parameter expansion): first its configuration (upper with the spec's
  share), then each carrier from its normal truncated to its range, by the inverse
  normal CDF of a uniform draw between the range's probabilities (Tukey's λ = 0.14
  approximation, within 0.04 of the normal quantile to 3σ);
* one section per corner (constant values).

The carriers are instance parameters of the model, so one ``.model`` (OSDI) or the one
subcircuit serves every varied cell.  What the description is (marginals, corners)
comes from :mod:`rram.statistics`; here it is only spelt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from ..dialects import dialect
from ..printers.format import format_number, wrap_spice
from . import validate

#: Tukey's lambda approximation of the inverse normal CDF (Joiner & Rosenblatt 1971):
#: 4.91·(p^0.14 − (1 − p)^0.14), exact at p = ½, −2.96 at Φ(−3); finite at p = 0 and 1.
PROBIT = "4.91*(pwr({p},0.14)-pwr(1-{p},0.14))"
#: the instance parameters the cell subcircuit passes through
PASSED = (("state", 0), ("dtamb", 0))
_PORT_PARAMS = [f"{k}={v}" for k, v in PASSED]
_PASSED_ON = [f"{k}={{{k}}}" for k, _ in PASSED]


class _Configuration(Protocol):
    centre: float
    sigma: float
    p_lower: float
    p_upper: float


class _Marginal(Protocol):
    parameter: str
    distribution: str
    base: float
    lower: _Configuration
    upper: _Configuration
    share: float
    bounds: tuple[float, float]


def _n(x: float) -> str:
    # ten digits: the values come from root finding, whose last bits are the machine's
    return format_number(float(f"{float(x):.10g}"))


def _pick(name: str, lower: float, upper: float, mode: bool) -> str:
    """``.param`` of a value that depends on the configuration."""
    if not mode or lower == upper:
        return f".param {name} = {_n(lower)}"
    return f".param {name} = {{r_up ? {_n(upper)} : {_n(lower)}}}"


def _value(m: _Marginal, offset: str) -> str:
    """The value at ``offset``, within the parameter's range: the inverse CDF's
    approximation can step a truncated draw just past a bound, and an OSDI instance
    parameter out of its range is an error (ngspice 46 crashes with several)."""
    value = f"{_n(m.base)}*exp({offset})" if m.distribution == "lognormal" \
        else f"{_n(m.base)}+{offset}"
    lo, hi = m.bounds
    if math.isfinite(hi):
        value = f"min({value}, {_n(hi)})"
    return f"max({value}, {_n(lo)})" if math.isfinite(lo) else value


def _draw(m: _Marginal, mode: bool) -> list[str]:
    p, lo, up = m.parameter, m.lower, m.upper
    lines = [_pick(f"r_c_{p}", lo.centre, up.centre, mode)]
    if lo.sigma == 0 and up.sigma == 0:
        return [*lines, f".param r_v_{p} = {{{_value(m, f'r_c_{p}')}}}"]
    lines += [_pick(f"r_s_{p}", lo.sigma, up.sigma, mode),
              _pick(f"r_a_{p}", lo.p_lower, up.p_lower, mode),
              _pick(f"r_b_{p}", lo.p_upper, up.p_upper, mode),
              f".param r_p_{p} = {{r_a_{p} + r_u_{p}*(r_b_{p} - r_a_{p})}}",
              f".param r_z_{p} = {{{PROBIT.format(p=f'r_p_{p}')}}}",
              f".param r_v_{p} = {{{_value(m, f'r_c_{p} + r_s_{p}*r_z_{p}')}}}"]
    return lines


def _subckt(sub: str, params: Sequence[str], body: Sequence[str], device: str,
            items: Sequence[str]) -> list[str]:
    """``.subckt sub te be params``, the ``body`` lines, one ``device`` line between te and
    be with ``items``, ``.ends``."""
    return [*wrap_spice(f".subckt {sub} te be", list(params)), *body,
            *wrap_spice(device, list(items)), f".ends {sub}"]


def _cell(name: str, kind: str, values: Sequence[tuple[str, str]]) -> list[str]:
    """The cell with constant carriers."""
    return _subckt(f"{name}_cell", _PORT_PARAMS, [], _device(name, kind),
                   [f"{p}={v}" for p, v in values] + _PASSED_ON)


def _model(name: str, kind: str) -> str:
    """What the cell instantiates: the subcircuit ``name``, or a ``.model`` of the
    compiled module ``name``."""
    return f"{name}_m" if dialect(kind).compiled else name


def _device(name: str, kind: str) -> str:
    return f"{dialect(kind).instance('1')} te be {_model(name, kind)}"


def _section(label: str, comment: str, name: str, kind: str, lines: Sequence[str]
             ) -> list[str]:
    model = [f".model {_model(name, kind)} {name}"] if dialect(kind).compiled else []
    return ["", f"* {comment}", f".lib {label}", *model, *lines, f".endl {label}"]


def render_statlib(name: str, kind: str, marginals: Sequence[_Marginal],
                   nominal: dict[str, float], corners: Sequence[tuple[str, str,
                                                                      dict[str, float]]],
                   header: Sequence[str]) -> str:
    """The library text.  ``kind``: ``osdi`` (the cell instantiates a ``.model`` of the
    module ``name``) or ``subckt`` (the subcircuit ``name`` of ``rram export --format
    spice``); ``nominal``: each carrier's nominal value; ``corners``: (section, comment,
    carrier values); ``header``: comment lines (provenance)."""
    validate.identifier(name, "model name")
    dialect(kind)
    mode = any(m.share > 0 for m in marginals)
    out = [f"* {line}" for line in header]
    out += _section("tt", "typical: the median device", name, kind,
                    _cell(name, kind, [(m.parameter, _n(nominal[m.parameter]))
                                       for m in marginals]))
    # ngspice substitutes a .param's expression wherever it is used, so a random draw
    # used twice would be two draws: the draws are made once, on the line of an inner
    # subcircuit, whose parameters are then numbers
    uniforms = [m.parameter for m in marginals if m.lower.sigma or m.upper.sigma]
    drawn = ([f"r_up={{aunif(0.5, 0.5) < {_n(marginals[0].share)} ? 1 : 0}}"] if mode
             else []) + [f"r_u_{p}={{aunif(0.5, 0.5)}}" for p in uniforms]
    inner = (["r_up=0"] if mode else []) + [f"r_u_{p}=0.5" for p in uniforms]
    body = [line for m in marginals for line in _draw(m, mode)]
    lines = [*_subckt(f"{name}_cell", _PORT_PARAMS, [], f"X1 te be {name}_draw",
                      drawn + _PASSED_ON),
             *_subckt(f"{name}_draw", inner + _PORT_PARAMS, body, _device(name, kind),
                      [f"{m.parameter}={{r_v_{m.parameter}}}" for m in marginals]
                      + _PASSED_ON)]
    out += _section("mc", "Monte Carlo: every instance draws its own carriers, once",
                    name, kind, lines)
    for label, comment, values in corners:
        out += _section(label, comment, name, kind,
                        _cell(name, kind, [(m.parameter, _n(values[m.parameter]))
                                           for m in marginals]))
    return "\n".join(out) + "\n"


__all__ = ["PASSED", "PROBIT", "render_statlib"]
