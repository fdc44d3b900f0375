"""What the ``rram array`` commands share: the array's options (geometry, wires, cells,
variation, data pattern), the spec they build, and the cell selector."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from ..constants import ARRAY_MAX_SEGMENTS, ARRAY_MAX_SIDE, BAKE_RANGE_C, MAX_WAIT_S
from .common import (
    Scope,
    card_option,
    finite,
    load_card,
    load_variation,
    refuse_inapplicable,
    variation_option,
)

_SPEC_OPTIONS: list[Callable] = [
    click.option("--topology", type=click.Choice(["1r", "1s1r", "1t1r"]), default="1r",
                 show_default=True, help="Passive crossbar, selector + RRAM, or 1T1R."),
    click.option("--rows", type=click.IntRange(1, ARRAY_MAX_SIDE), default=8,
                 show_default=True),
    click.option("--cols", type=click.IntRange(1, ARRAY_MAX_SIDE), default=8,
                 show_default=True),
    click.option("--pitch", type=float, default=200e-9, show_default=True, callback=finite,
                 help="Cell pitch (m)."),
    click.option("--rho", type=float, default=5e-8, show_default=True, callback=finite,
                 help="Wire resistivity (Ohm*m), rows and columns."),
    click.option("--wire-width", type=float, default=50e-9, show_default=True,
                 callback=finite, help="Wire width (m)."),
    click.option("--wire-thickness", type=float, default=100e-9, show_default=True,
                 callback=finite, help="Wire thickness (m)."),
    click.option("--c-ground", type=float, default=2e-10, show_default=True,
                 callback=finite, help="Wire capacitance to ground (F/m)."),
    click.option("--c-couple", type=float, default=1e-10, show_default=True,
                 callback=finite, help="Coupling capacitance to each neighbour line (F/m)."),
    click.option("--segments", type=click.IntRange(1, ARRAY_MAX_SEGMENTS), default=1,
                 show_default=True,
                 help="Wire sections per cell pitch."),
    click.option("--segment-kind", type=click.Choice(["pi", "t", "l"]), default="pi",
                 show_default=True),
    click.option("--r-driver", type=float, default=0.0, show_default=True, callback=finite,
                 help="Row driver resistance (Ohm; 0 = ideal)."),
    click.option("--r-sense", type=float, default=0.0, show_default=True, callback=finite,
                 help="Column sense resistance (Ohm; 0 = ideal virtual ground)."),
    click.option("--selector-i0", type=float, default=1e-9, show_default=True,
                 callback=finite, help="1S1R selector: I = i0*sinh(V/v0) (A)."),
    click.option("--selector-v0", type=float, default=0.1, show_default=True,
                 callback=finite, help="1S1R selector v0 (V)."),
    card_option(),
    variation_option("none"),
    click.option("--seed", type=click.IntRange(0, None), default=0, show_default=True,
                 help="Seed of the D2D draws and of a random data pattern."),
    click.option("--pattern", type=click.Choice(["all-lrs", "all-hrs", "checkerboard",
                                                 "random"]),
                 default="random", show_default=True, help="Data pattern (cell states)."),
    click.option("--after", type=click.FloatRange(0.0, MAX_WAIT_S), default=None,
                 help="Write the pattern with pulses and read the cells this long after "
                      "(s): their relaxation and retention (docs/arrays.md) [default: the "
                      "card's programmed states]."),
    click.option("--bake", type=click.FloatRange(*BAKE_RANGE_C), default=None,
                 help="Temperature of the wait after programming (°C) [default: the "
                      "card's ambient]."),
]


def spec_options(func: Callable) -> Callable:
    for option in reversed(_SPEC_OPTIONS):
        func = option(func)
    return func


def array_spec(kw: dict[str, Any]):
    from ..array.spec import ArraySpec, Metal, Selector

    card = load_card(kw["card_path"])
    variation = load_variation(kw["variation"], card)
    metal = Metal(kw["rho"], kw["wire_width"], kw["wire_thickness"], kw["c_ground"],
                  kw["c_couple"])
    return ArraySpec(kw["topology"], kw["rows"], kw["cols"], kw["pitch"], metal, metal, metal,
                     kw["segments"], kw["segment_kind"], kw["r_driver"], kw["r_sense"],
                     Selector(kw["selector_i0"], kw["selector_v0"]),
                     card=card, variation=variation, seed=kw["seed"])


def _states(spec, kw):
    from ..array.cells import named_pattern, pattern_states

    pattern = named_pattern(kw["pattern"], spec.shape, kw["seed"])
    if kw.get("after") is None:
        return pattern_states(pattern, spec.card)
    from ..array.aging import states_after_programming

    return states_after_programming(spec, pattern, kw["after"], bake_c=kw["bake"])


def _heated(kw: dict[str, Any]) -> bool:
    return bool(kw.get("heat"))


#: The array options that act only with a topology or a mode (refuse_inapplicable).
SCOPES: tuple[Scope, ...] = (
    ("v_gate", lambda kw: kw["topology"] == "1t1r", "1T1R arrays (--topology 1t1r)"),
    ("selector_i0", lambda kw: kw["topology"] == "1s1r", "1S1R arrays (--topology 1s1r)"),
    ("selector_v0", lambda kw: kw["topology"] == "1s1r", "1S1R arrays (--topology 1s1r)"),
    ("bake", lambda kw: kw.get("after") is not None, "a wait after programming (--after)"),
    ("beta", _heated, "self-heated wires (--heat)"),
    ("k_dielectric", _heated, "self-heated wires (--heat)"),
    ("t_dielectric", _heated, "self-heated wires (--heat)"),
)


def spec_command(func: Callable | None = None, *, work: str = "solve") -> Callable:
    """Build the array's spec and states from the options and pass them to ``func``,
    after refusing options that do nothing here (:data:`SCOPES`) and an array whose
    ``work`` (:meth:`~rram.array.spec.ArraySpec.memory_estimate`) would not fit in
    memory."""
    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(**kw: Any) -> Any:
            refuse_inapplicable(kw, SCOPES)
            spec = array_spec(kw)
            spec.require_memory(work)
            return func(spec, _states(spec, kw), **kw)

        return wrapper

    return decorate(func) if func is not None else decorate


def cell_option(*words: str) -> Callable:
    """A ``--cell`` callback: ROW,COL (every command that selects a cell spells it so),
    or one of ``words``."""
    def parse(ctx: click.Context, param: click.Parameter,
              value: str | None) -> str | tuple[int, int] | None:
        if value is None or value in words:
            return value
        try:
            i, j = (int(x) for x in value.split(","))
        except ValueError:
            raise click.BadParameter(f"{value!r}: give ROW,COL"
                                     + "".join(f", {w}" for w in words[:-1])
                                     + (f" or {words[-1]}" if words else "")) from None
        return (i, j)

    return parse


CELL = cell_option("corner", "worst")


def progress_bar(what: str, total: int | None = None):
    """A progress bar on standard error (shown on a terminal only)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="read", desc=what, disable=None, leave=False)
