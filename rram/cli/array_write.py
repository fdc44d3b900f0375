"""``rram array write | disturb``: pulse trains on one cell of an array, their half-select
disturb, and the largest array within a disturb budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..errors import InputError
from .array_options import cell_option, spec_command, spec_options
from .common import SIDECAR, OutputPath, command_guard, echo_err, finite

_WRITE_OPTIONS: list[Callable] = [
    click.option("--cell", default=None, callback=cell_option(),
                 help="Selected cell ROW,COL [default: the middle cell]."),
    click.option("--scheme", type=click.Choice(["v/2", "v/3", "float"]), default="v/2",
                 show_default=True,
                 help="Unselected lines at V/2; at V/3 (rows) and 2V/3 (columns); or undriven."),
    click.option("--amplitude", type=float, default=None, callback=finite,
                 help="Pulse amplitude, selected row minus selected column (V; > 0 SETs the "
                      "default card, < 0 RESETs) [default: a SET, 1.8 V in the card's SET "
                      "polarity]."),
    click.option("--width", type=float, default=1e-6, show_default=True, callback=finite,
                 help="Flat top of each pulse (s); must be long against the wires' RC."),
    click.option("--rise", type=float, default=10e-9, show_default=True, callback=finite,
                 help="Rise time (s)."),
    click.option("--fall", type=float, default=10e-9, show_default=True, callback=finite,
                 help="Fall time (s)."),
    click.option("--gap", type=float, default=100e-9, show_default=True, callback=finite,
                 help="Time at 0 V after each pulse (s)."),
    click.option("--substeps", type=click.IntRange(1, 1000), default=8, show_default=True,
                 help="Plateau points at which the array is re-solved when states move."),
    click.option("--progress/--no-progress", default=True, show_default=True,
                 help="Progress bar on standard error."),
]


def write_options(func: Callable) -> Callable:
    for option in reversed(_WRITE_OPTIONS):
        func = option(func)
    return func


def _amplitude(spec, kw: dict[str, Any]) -> float:
    """--amplitude, else a SET of the array's card in its own polarity."""
    from ..array.write import set_amplitude

    return set_amplitude(spec.card) if kw["amplitude"] is None else kw["amplitude"]


def _run_write(spec, states, kw: dict[str, Any], count: int, out: str | None):
    """The write of the command's options."""
    from ..array.write import PulseTrain, check_write, write

    cell = tuple(kw["cell"] or (spec.rows // 2, spec.cols // 2))
    pulse = PulseTrain(_amplitude(spec, kw), kw["width"], count, kw["rise"], kw["fall"], kw["gap"])
    check_write(spec, cell, pulse, kw["scheme"], kw["substeps"])
    bar = None
    if kw["progress"]:
        from tqdm import tqdm

        bar = tqdm(total=count, unit="pulse", desc=f"write {kw['scheme']}", leave=False,
                   disable=None)
    try:
        result = write(spec, cell, pulse, kw["scheme"], states,
                       substeps=kw["substeps"],
                       progress=None if bar is None else lambda k: bar.update(1))
    finally:
        if bar is not None:
            bar.close()
    from ..array.disturb import summary

    s = summary(result)
    echo_err(f"{spec.topology} {spec.rows}x{spec.cols}, cell {result.cell}, {count} x "
             f"{pulse.amplitude:g} V / {pulse.width:g} s ({result.scheme}): selected cell "
             f"{s['r_selected_before_ohm']:.4g} -> {s['r_selected_after_ohm']:.4g} Ohm; "
             f"half-selected |dR/R| max {s['half_selected_max']:.4g}, median "
             f"{s['half_selected_median']:.4g}; unselected max {s['unselected_max']:.4g}; "
             f"{result.array_solves} array solves, {result.seconds:.3g} s (wire Elmore "
             f"delay {result.tau:.3g} s, largest cell RC {result.tau_cells:.3g} s)")
    return result


@click.command("write")
@spec_options
@write_options
@click.option("--count", type=click.IntRange(1, 10**6), default=10, show_default=True,
              help="Number of pulses.")
@click.option("--out", type=OutputPath(companions=SIDECAR), default=None,
              help="Per-pulse table (.csv): pulse, r_selected_ohm, half_selected_min/"
                   "median/max (|R/R0 - 1|), with its provenance in <out>.json.")
@command_guard
@spec_command
def write_cmd(spec, states, count, out, **kw) -> None:
    """Quasi-static pulse train on one cell: every cell's state advances with the model's
    kinetics between array solves (1r and 1s1r arrays)."""
    from ..array.disturb import history_table, provenance, write_disturb

    result = _run_write(spec, states, kw, count, out)
    if out:
        write_disturb(out, history_table(result),
                      provenance(spec, result, kw["pattern"], "array write"))


@click.command()
@spec_options
@write_options
@click.option("--count", type=click.IntRange(1, 10**6), default=100, show_default=True,
              help="Number of pulses.")
@click.option("--out", type=OutputPath(companions=SIDECAR), default=None,
              help="Disturb map (.csv): row, col, role, v_cell_V, r0_ohm, r_ohm, change "
                   "(R/R0 - 1), with its provenance in <out>.json.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Heat maps of the resistance change and the cell voltages (.png).")
@click.option("--budget", type=float, default=None, callback=finite,
              help="Disturb budget (relative change): find the largest of --sizes whose "
                   "cells stay within it when the whole array is written once.")
@click.option("--sizes", type=str, default=None,
              help="Square array sizes for --budget, comma-separated (e.g. 4,8,16).")
@command_guard
@spec_command
def disturb(spec, states, count, out, plot, budget, sizes, **kw) -> None:
    """Half-select disturb: the resistance change of every cell after COUNT write pulses
    on one cell; with --budget, the largest array within a disturb budget."""
    from ..array.disturb import disturb_table, provenance, write_disturb

    if budget is not None or sizes is not None:
        _disturb_budget(spec, count, out, plot, budget, sizes, kw)
        return
    result = _run_write(spec, states, dict(kw, plot=plot), count, out)
    if out:
        write_disturb(out, disturb_table(result), provenance(spec, result, kw["pattern"]))
    if plot:
        from ..plots import disturb_heat_map

        disturb_heat_map(result, plot, f"{spec.topology} {spec.rows}x{spec.cols}")


def _disturb_budget(spec, count: int, out, plot, budget, sizes, kw: dict[str, Any]) -> None:
    """``rram array disturb --budget B --sizes ...``: one write per size, its middle cell,
    every cell in the data pattern."""
    import dataclasses

    import pandas as pd

    from ..array.cells import named_pattern, pattern_states
    from ..array.disturb import check_budget, disturb_budget
    from ..array.tables import provenance, write_table
    from ..array.write import PulseTrain, check_write

    if budget is None or sizes is None:
        raise InputError("--budget and --sizes go together")
    if plot:
        raise InputError("--plot maps one write; --budget writes a table (--out) only")
    try:
        ns = check_budget(budget, [int(x) for x in sizes.split(",")])
    except ValueError:
        raise InputError(f"--sizes {sizes!r}: give sizes such as 4,8,16") from None
    pulse = PulseTrain(_amplitude(spec, kw), kw["width"], count, kw["rise"], kw["fall"], kw["gap"])
    for n in ns:  # every size checked before the first write
        check_write(dataclasses.replace(spec, rows=n, cols=n), (n // 2, n // 2), pulse,
                    kw["scheme"], kw["substeps"])
    bar = None
    if kw["progress"]:
        from tqdm import tqdm

        bar = tqdm(total=len(ns), unit="array", desc="disturb budget", leave=False,
                   disable=None)
    try:
        rows, largest = disturb_budget(
            spec, ns, pulse, budget, kw["scheme"],
            lambda n: pattern_states(named_pattern(kw["pattern"], (n, n), kw["seed"]),
                                     spec.card),
            None if bar is None else lambda n: bar.update(1))
    finally:
        if bar is not None:
            bar.close()
    for r in rows:
        echo_err(f"{r.rows}x{r.cols}: one write {r.per_write:.4g} (linearity "
                 f"{r.linearity:.3f}), whole array written {r.exposure:.4g} "
                 f"{'within' if r.within else 'beyond'} {budget:g}")
    echo_err(f"largest array within the budget: "
             f"{f'{largest}x{largest}' if largest else 'none of the sizes'}")
    if out:
        frame = pd.DataFrame([dataclasses.asdict(r) for r in rows])
        write_table(out, frame, provenance(
            spec, command="array disturb --budget", budget=budget, largest=largest,
            scheme=kw["scheme"], pattern=kw["pattern"], pulse=dataclasses.asdict(pulse)))
