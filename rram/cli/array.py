"""``rram array netlist | read | vmm | margin | write | disturb``: crossbar, 1S1R and 1T1R arrays
with wires."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from ..errors import InputError
from .common import InputPath, OutputPath, command_guard, echo_err, finite, load_card

_SPEC_OPTIONS: list[Callable] = [
    click.option("--topology", type=click.Choice(["1r", "1s1r", "1t1r"]), default="1r",
                 show_default=True, help="Passive crossbar, selector + RRAM, or 1T1R."),
    click.option("--rows", type=int, default=8, show_default=True),
    click.option("--cols", type=int, default=8, show_default=True),
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
    click.option("--segments", type=int, default=1, show_default=True,
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
    click.option("--card", "card_path", type=InputPath(),
                 help="Model card JSON (default: the built-in card)."),
    click.option("--variation", default="none", show_default=True,
                 help="Device-to-device variation: none, default, or a variation spec JSON."),
    click.option("--seed", type=click.IntRange(0, None), default=0, show_default=True,
                 help="Seed of the D2D draws and of a random data pattern."),
    click.option("--pattern", type=click.Choice(["all-lrs", "all-hrs", "checkerboard",
                                                 "random"]),
                 default="random", show_default=True, help="Data pattern (cell states)."),
]


def spec_options(func: Callable) -> Callable:
    for option in reversed(_SPEC_OPTIONS):
        func = option(func)
    return func


def _spec(kw: dict[str, Any]):
    from pathlib import Path

    from ..array.spec import ArraySpec, Metal, Selector
    from ..variation import default_variation, load_variation

    name = kw["variation"]
    if name == "none":
        variation = None
    elif name == "default":
        variation = default_variation()
    elif Path(name).is_file():
        variation = load_variation(name)
    else:
        raise InputError(f"--variation {name!r}: give none, default or an existing file")
    metal = Metal(kw["rho"], kw["wire_width"], kw["wire_thickness"], kw["c_ground"],
                  kw["c_couple"])
    return ArraySpec(kw["topology"], kw["rows"], kw["cols"], kw["pitch"], metal, metal, metal,
                     kw["segments"], kw["segment_kind"], kw["r_driver"], kw["r_sense"],
                     Selector(kw["selector_i0"], kw["selector_v0"]),
                     card=load_card(kw["card_path"]), variation=variation, seed=kw["seed"])


def _states(spec, kw):
    from ..array.cells import named_pattern, pattern_states

    return pattern_states(named_pattern(kw["pattern"], spec.shape, kw["seed"]))


def _spec_command(func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(**kw: Any) -> Any:
        spec = _spec(kw)
        return func(spec, _states(spec, kw), **kw)

    return wrapper


@click.group()
def array() -> None:
    """Arrays: crossbars, 1S1R and 1T1R with distributed RC wires (rram array CMD --help)."""


@array.command()
@spec_options
@click.option("--v-read", type=float, default=0.2, show_default=True, callback=finite,
              help="Row voltage (V).")
@click.option("--v-gate", type=float, default=1.8, show_default=True, callback=finite,
              help="1T1R gate voltage (V).")
@click.option("--model", "model_kind", type=click.Choice(["subckt", "osdi"]),
              default="subckt", show_default=True,
              help="Cells as the subcircuit (inline in the deck) or the compiled OSDI module.")
@click.option("--model-path", default=None,
              help="The .osdi file the deck loads [default: compile it into the cache].")
@click.option("--out", type=OutputPath(), required=True, help="Output deck (.cir).")
@command_guard
@_spec_command
def netlist(spec, states, v_read, v_gate, model_kind, model_path, out, **_) -> None:
    """Write the operating-point deck of an array read (run it with ngspice -b)."""
    from ..array.build import build
    from ..array.export import frozen_osdi, render
    from ..io import write_text_atomic

    c = build(spec, v_read, states, v_gates=v_gate)
    if model_kind == "osdi":
        model_path = model_path or frozen_osdi()
    write_text_atomic(out, render(c, model_kind, model_path))
    echo_err(f"wrote {out} ({spec.topology} {spec.rows}x{spec.cols}, {c.n_nets} nets, "
             f"{model_kind} cells)")


@array.command()
@spec_options
@click.option("--v-read", type=float, default=0.2, show_default=True, callback=finite,
              help="Row voltage (V).")
@click.option("--v-gate", type=float, default=1.8, show_default=True, callback=finite,
              help="1T1R gate voltage (V).")
@click.option("--out", type=OutputPath(), default=None,
              help="Per-cell table (.csv): row, col, v_cell_V, i_cell_A, line_drop_V.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Heat maps of the IR drop and the cell voltages (.png).")
@command_guard
@_spec_command
def read(spec, states, v_read, v_gate, out, plot, **_) -> None:
    """Nonlinear DC read of every cell at once: IR drop, cell voltages, column currents."""
    import numpy as np
    import pandas as pd

    from ..array.read import read as array_read
    from ..io import write_atomic

    r = array_read(spec, v_read, states, v_gates=v_gate)
    echo_err(f"{spec.topology} {spec.rows}x{spec.cols}: {r.iterations} Newton iterations, "
             f"{r.seconds:.3g} s; worst IR drop {r.worst_drop * 1e3:.4g} mV; column "
             f"currents {r.i_col.min():.4g} .. {r.i_col.max():.4g} A")
    if out:
        ii, jj = np.meshgrid(np.arange(spec.rows), np.arange(spec.cols), indexing="ij")
        df = pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(),
                           "v_cell_V": r.v_cell.ravel(), "i_cell_A": r.i_cell.ravel(),
                           "line_drop_V": r.line_drop.ravel()})
        write_atomic(out, lambda p: df.to_csv(p, index=False))
    if plot:
        from ..plots import array_heat_maps

        array_heat_maps(r, plot, f"{spec.topology} {spec.rows}x{spec.cols} at {v_read:g} V")


@array.command()
@spec_options
@click.option("--vectors", type=click.IntRange(1, 10**5), default=10, show_default=True,
              help="Random input vectors (uniform in [0, v-max] per row).")
@click.option("--v-max", type=float, default=0.2, show_default=True, callback=finite,
              help="Largest input voltage (V).")
@click.option("--v-ref", type=float, default=0.2, show_default=True, callback=finite,
              help="Voltage of the cells' chord conductance (V).")
@click.option("--out", type=OutputPath(), default=None,
              help="Table (.csv): vector, col, output_A, ideal_A.")
@command_guard
@_spec_command
def vmm(spec, states, vectors, v_max, v_ref, out, seed, **_) -> None:
    """Vector-matrix products through a 1R crossbar with its wires (linear cells)."""
    import numpy as np
    import pandas as pd

    from ..array.read import vmm as array_vmm
    from ..io import write_atomic

    if not 0 < v_max <= 2:
        raise InputError(f"--v-max {v_max:g}: valid is (0, 2] V")
    x = np.random.default_rng(seed + 1).uniform(0, v_max, (vectors, spec.rows))
    r = array_vmm(spec, x, states, v_ref=v_ref)
    echo_err(f"{spec.rows}x{spec.cols}: relative error against the ideal product "
             f"{r.relative_error:.4g}; factorisation {r.factor_seconds:.3g} s, "
             f"{r.solve_seconds / vectors:.3g} s per vector")
    if out:
        vv, jj = np.meshgrid(np.arange(vectors), np.arange(spec.cols), indexing="ij")
        df = pd.DataFrame({"vector": vv.ravel(), "col": jj.ravel(),
                           "output_A": r.outputs.ravel(), "ideal_A": r.ideal.ravel()})
        write_atomic(out, lambda p: df.to_csv(p, index=False))


@array.command()
@spec_options
@click.option("--v-read", type=float, default=0.4, show_default=True, callback=finite,
              help="Selected row voltage (V); the other lines sit at half of it.")
@command_guard
@_spec_command
def margin(spec, states, v_read, **_) -> None:
    """Worst-case read margin: the far corner cell under V/2, every other cell in the LRS
    (the data pattern option is not used)."""
    from ..array.read import read_margin

    r = read_margin(spec, v_read)
    click.echo(f"{spec.topology} {spec.rows}x{spec.cols}: cell {r.cell}, column current "
               f"{r.i_on:.4g} A (LRS) / {r.i_off:.4g} A (HRS), margin {r.margin:.4f}")


_WRITE_OPTIONS: list[Callable] = [
    click.option("--cell", type=(int, int), default=None,
                 help="Selected cell ROW COL [default: the middle cell]."),
    click.option("--scheme", type=click.Choice(["v/2", "v/3", "float"]), default="v/2",
                 show_default=True,
                 help="Unselected lines at V/2; at V/3 (rows) and 2V/3 (columns); or undriven."),
    click.option("--amplitude", type=float, default=1.8, show_default=True, callback=finite,
                 help="Pulse amplitude, selected row minus selected column (V; > 0 SETs the "
                      "default card, < 0 RESETs)."),
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


def _run_write(spec, states, kw: dict[str, Any], count: int, out: str | None):
    """The write of the command's options, after refusing a sidecar that is an input."""
    from pathlib import Path

    from ..array.disturb import sidecar
    from ..array.write import PulseTrain, check_write, write
    from .common import refuse_inputs

    inputs = [(n, Path(v)) for n, v in (("--card", kw["card_path"]),
                                         ("--variation", kw["variation"])) if v]
    for name, path in (("--out", out), ("--plot", kw.get("plot"))):
        if path:
            refuse_inputs(name, Path(path), inputs)
    if out:
        refuse_inputs("--out's .json companion", sidecar(out), inputs)
    cell = tuple(kw["cell"] or (spec.rows // 2, spec.cols // 2))
    pulse = PulseTrain(kw["amplitude"], kw["width"], count, kw["rise"], kw["fall"], kw["gap"])
    check_write(spec, cell, pulse, kw["scheme"], kw["substeps"])
    bar = None
    if kw["progress"]:
        from tqdm import tqdm

        bar = tqdm(total=count, unit="pulse", desc=f"write {kw['scheme']}", leave=False)
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


@array.command("write")
@spec_options
@write_options
@click.option("--count", type=click.IntRange(1, 10**6), default=10, show_default=True,
              help="Number of pulses.")
@click.option("--out", type=OutputPath(), default=None,
              help="Per-pulse table (.csv): pulse, r_selected_ohm, half_selected_min/"
                   "median/max (|R/R0 - 1|), with its provenance in <out>.json.")
@command_guard
@_spec_command
def write_cmd(spec, states, count, out, **kw) -> None:
    """Quasi-static pulse train on one cell: every cell's state advances with the model's
    kinetics between array solves (1r and 1s1r arrays)."""
    from ..array.disturb import history_table, provenance, write_disturb

    result = _run_write(spec, states, kw, count, out)
    if out:
        write_disturb(out, history_table(result), provenance(spec, result, kw["pattern"]))


@array.command()
@spec_options
@write_options
@click.option("--count", type=click.IntRange(1, 10**6), default=100, show_default=True,
              help="Number of pulses.")
@click.option("--out", type=OutputPath(), default=None,
              help="Disturb map (.csv): row, col, role, v_cell_V, r0_ohm, r_ohm, change "
                   "(R/R0 - 1), with its provenance in <out>.json.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Heat maps of the resistance change and the cell voltages (.png).")
@command_guard
@_spec_command
def disturb(spec, states, count, out, plot, **kw) -> None:
    """Half-select disturb: the resistance change of every cell after COUNT write pulses
    on one cell."""
    from ..array.disturb import disturb_table, provenance, write_disturb

    result = _run_write(spec, states, dict(kw, plot=plot), count, out)
    if out:
        write_disturb(out, disturb_table(result), provenance(spec, result, kw["pattern"]))
    if plot:
        from ..plots import disturb_heat_map

        disturb_heat_map(result, plot, f"{spec.topology} {spec.rows}x{spec.cols}")
