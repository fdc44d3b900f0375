"""``rram array netlist | read | vmm | margin``: reads of crossbar, 1S1R and 1T1R arrays with
wires (the group is assembled in :mod:`rram.cli`)."""

from __future__ import annotations

import click

from ..dialects import KINDS, dialect
from ..errors import InputError
from .array_options import CELL, progress_bar, spec_command, spec_options
from .common import (
    SIDECAR,
    OutputPath,
    ReferencedPath,
    command_guard,
    echo_err,
    finite,
    refuse_inapplicable,
)


@click.command()
@spec_options
@click.option("--v-read", type=float, default=0.2, show_default=True, callback=finite,
              help="Row voltage (V).")
@click.option("--v-gate", type=float, default=1.8, show_default=True, callback=finite,
              help="1T1R gate voltage (V).")
@click.option("--model", "model_kind", type=click.Choice(list(KINDS)),
              default="subckt", show_default=True,
              help="Cells as the subcircuit (inline in the deck) or the compiled OSDI module.")
@click.option("--model-path", type=ReferencedPath(dir_okay=False), default=None,
              help="The .osdi file the deck loads: the module of 'rram export --format "
                   "veriloga --frozen' compiled with openvaf-r [default: NAME.osdi "
                   "next to the deck].")
@click.option("--name", default=None,
              help="Name of the frozen-state cell the deck instantiates: the --name of "
                   "'rram export --frozen' [default: rram_frozen; <model>_frozen for a "
                   "card with an optional block, e.g. rram_relax_frozen].")
@click.option("--out", type=OutputPath(), required=True, help="Output deck (.cir).")
@command_guard
@spec_command(work="deck")
def netlist(spec, states, v_read, v_gate, model_kind, model_path, name, out, **_) -> None:
    """Write the operating-point deck of an array read (run it with ngspice -b)."""
    from ..array.build import build
    from ..array.export import frozen_name, render
    from ..io import write_text_atomic
    from ..spice import validate

    default = frozen_name(spec.card.model)
    name = name or default
    validate.identifier(name, "--name")

    compiled = dialect(model_kind).compiled
    if model_path and not compiled:
        raise InputError("--model-path names the .osdi file of --model osdi; the subckt "
                         "cells are inline in the deck")
    c = build(spec, v_read, states, v_gates=v_gate)
    if compiled and not model_path:
        # a path of the deck's own folder, as rram netlist's: portable, where a cache
        # path of this machine is not
        model_path = name + dialect(model_kind).suffix
        named = "" if name == default else f" --name {name}"
        echo_err(f"the deck loads {model_path} from its folder: rram export --format "
                 f"veriloga --frozen{named} --out {name}.va, then openvaf-r {name}.va")
    write_text_atomic(out, render(c, model_kind, model_path, name=name))
    echo_err(f"wrote {out} ({spec.topology} {spec.rows}x{spec.cols}, {c.n_nets} nets, "
             f"{model_kind} cells)")


@click.command()
@spec_options
@click.option("--v-read", type=float, default=0.2, show_default=True, callback=finite,
              help="Row voltage (V).")
@click.option("--v-gate", type=float, default=1.8, show_default=True, callback=finite,
              help="1T1R gate voltage (V).")
@click.option("--out", type=OutputPath(), default=None,
              help="Per-cell table (.csv): row, col, v_cell_V, i_cell_A, line_drop_V.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Heat maps of the IR drop, the cell voltages and the wires' "
                   "electromigration ratio (.png).")
@click.option("--em-limit", type=float, default=1e-3, show_default=True, callback=finite,
              help="Electromigration limit per wire width (A per um of width).")
@click.option("--j-max", type=float, default=None, callback=finite,
              help="Electromigration current density limit (A/m^2); with --em-limit, the "
                   "smaller limit holds.")
@click.option("--em-out", type=OutputPath(companions=SIDECAR), default=None,
              help="Wire sections above the limit (.csv, with a .json provenance sidecar).")
@click.option("--heat", is_flag=True,
              help="Self-heated wires: rho(T) = rho0*(1 + beta*(T - T0)), iterated to a "
                   "fixed point.")
@click.option("--beta", type=float, default=3.9e-3, show_default=True, callback=finite,
              help="Temperature coefficient of the wires' resistivity (1/K), with --heat.")
@click.option("--k-dielectric", type=float, default=1.4, show_default=True,
              callback=finite,
              help="Thermal conductivity under the wires (W/(m*K)), with --heat.")
@click.option("--t-dielectric", type=float, default=100e-9, show_default=True,
              callback=finite, help="Dielectric thickness to the substrate (m), with --heat.")
@command_guard
@spec_command
def read(spec, states, v_read, v_gate, out, plot, em_limit, j_max, em_out, heat, beta,
         k_dielectric, t_dielectric, **kw) -> None:
    """Nonlinear DC read of every cell at once: IR drop, cell voltages, column currents,
    the wires' currents against an electromigration limit, optionally self-heated wires."""
    import numpy as np
    import pandas as pd

    from ..array.read import read as array_read
    from ..array.wires import EmLimit, WireHeating, heated_read, wire_currents
    from ..io import write_atomic

    if not em_limit > 0:
        raise InputError(f"--em-limit {em_limit:g}: valid is > 0 A per um of width")
    limit = EmLimit(em_limit * 1e6, j_max)  # A/um -> A/m
    if heat:
        h = heated_read(spec, v_read, states, WireHeating(beta, k_dielectric, t_dielectric),
                        v_gates=v_gate)
        r = h.read
    else:
        r = array_read(spec, v_read, states, v_gates=v_gate)
    echo_err(f"{spec.topology} {spec.rows}x{spec.cols}: {r.iterations} Newton iterations, "
             f"{r.seconds:.3g} s; worst IR drop {r.worst_drop * 1e3:.4g} mV; column "
             f"currents {r.i_col.min():.4g} .. {r.i_col.max():.4g} A")
    if heat:
        echo_err(f"self-heated wires: largest rise {h.max_delta_t:.4g} K after "
                 f"{h.iterations} fixed-point iterations")
    wires = wire_currents(spec, r.circuit, r.v_nets, limit)
    echo_err(f"wires: worst current / EM limit {wires.worst_ratio:.4g}, "
             f"{int(wires.flagged.sum())} of {wires.current.size} sections above the limit")
    if em_out:
        from ..array.tables import provenance, write_table

        write_table(em_out, wires.table(flagged_only=True), provenance(
            spec, command="array read --em-out", v_read_V=v_read, pattern=kw["pattern"],
            seed=kw["seed"], em_limit_A_per_um=em_limit, j_max_A_per_m2=j_max,
            worst_ratio=wires.worst_ratio, sections=int(wires.current.size),
            heated=heat, beta_per_K=beta if heat else None))
    if out:
        ii, jj = np.meshgrid(np.arange(spec.rows), np.arange(spec.cols), indexing="ij")
        df = pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(),
                           "v_cell_V": r.v_cell.ravel(), "i_cell_A": r.i_cell.ravel(),
                           "line_drop_V": r.line_drop.ravel()})
        write_atomic(out, lambda p: df.to_csv(p, index=False))
    if plot:
        from ..plots import array_heat_maps

        array_heat_maps(r, plot, f"{spec.topology} {spec.rows}x{spec.cols} at {v_read:g} V",
                        em=wires.cell_map(spec))


@click.command()
@spec_options
@click.option("--vectors", type=click.IntRange(1, 10**5), default=10, show_default=True,
              help="Random input vectors (uniform in [0, v-max] per row).")
@click.option("--v-max", type=float, default=0.2, show_default=True, callback=finite,
              help="Largest input voltage (V).")
@click.option("--v-ref", type=float, default=0.2, show_default=True, callback=finite,
              help="Voltage of the cells' chord conductance (V).")
@click.option("--out", type=OutputPath(), default=None,
              help="Table (.csv): vector, col, output_A, target_A.")
@click.option("--samples", type=click.IntRange(1, 10**6), default=None,
              help="Monte Carlo over this many arrays, each with its own device-to-device "
                   "draws (needs --variation).")
@click.option("--workers", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Dask worker processes for --samples (1: in this process).")
@click.option("--mc-out", type=OutputPath(companions=SIDECAR), default=None,
              help="Per-array scores of --samples (.csv or .parquet) and a provenance "
                   "sidecar <file>.json.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Per-column error and (with --samples) the error distribution (.png).")
@command_guard
@spec_command
def vmm(spec, states, vectors, v_max, v_ref, out, samples, workers, mc_out, plot, seed,
        **_) -> None:
    """Vector-matrix products through a 1R crossbar against the target product of the
    nominal cells: the error from device variation, from the wires, and from both."""
    import numpy as np
    import pandas as pd

    from ..array.accuracy import check_study, save_study, vmm_accuracy, vmm_monte_carlo
    from ..io import write_atomic

    if not 0 < v_max <= 2:
        raise InputError(f"--v-max {v_max:g}: valid is (0, 2] V")
    refuse_inapplicable({"samples": samples}, [
        ("workers", lambda kw: kw["samples"], "a Monte Carlo over arrays (--samples)"),
        ("mc_out", lambda kw: kw["samples"], "a Monte Carlo over arrays (--samples)")])
    if samples:
        check_study(spec, samples, workers)
    if mc_out and not str(mc_out).endswith((".csv", ".parquet")):
        raise InputError(f"--mc-out {mc_out}: the file must end in .csv or .parquet")
    x = np.random.default_rng(seed + 1).uniform(0, v_max, (vectors, spec.rows))
    a = vmm_accuracy(spec, x, states, v_ref=v_ref)
    echo_err(f"{spec.rows}x{spec.cols} against the target product: relative error "
             f"{a.both.relative_error:.4g} (SNR {a.both.snr_db:.1f} dB; worst column "
             f"{a.both.worst_column_error:.4g}; {a.both.relative_error_after_gain:.4g} "
             f"after a gain of {a.both.gain:.4g}); wires alone "
             f"{a.wires.relative_error:.4g}, variation alone {a.variation.relative_error:.4g}")
    study = None
    if samples:
        study = vmm_monte_carlo(spec, x, samples, seed, states, v_ref, workers=workers)
        q = study.summary()
        for name in ("relative_error", "snr_db", "relative_error_after_gain",
                     "variation_relative_error"):
            echo_err(f"  {name:26s} median {q.loc[name, 'q50']:.4g}  5-95 % "
                     f"{q.loc[name, 'q5']:.4g} .. {q.loc[name, 'q95']:.4g}")
        echo_err(f"  {samples} arrays in {study.seconds:.1f} s")
        if mc_out:
            save_study(study, mc_out)
    if out:
        vv, jj = np.meshgrid(np.arange(vectors), np.arange(spec.cols), indexing="ij")
        df = pd.DataFrame({"vector": vv.ravel(), "col": jj.ravel(),
                           "output_A": a.outputs.ravel(), "target_A": a.target.ravel()})
        write_atomic(out, lambda p: df.to_csv(p, index=False))
    if plot:
        from ..plots import vmm_accuracy_plot

        vmm_accuracy_plot(a, study, plot, f"{spec.rows}x{spec.cols} 1R crossbar")


@click.command()
@spec_options
@click.option("--v-read", type=float, default=0.4, show_default=True, callback=finite,
              help="Selected row voltage (V); the other lines sit at half of it.")
@click.option("--cell", default="corner", show_default=True, callback=CELL,
              help="The read cell: ROW,COL, corner (0, cols-1) or worst (the smallest "
                   "all-LRS margin of every cell; two reads per cell).")
@click.option("--search", is_flag=True,
              help="Search the other cells' states for the worst data pattern.")
@click.option("--objective", type=click.Choice(["same", "window"]), default="same",
              show_default=True,
              help="same: one pattern for the LRS and HRS reads; window: a fixed reference "
                   "between the lowest LRS and the highest HRS read, patterns apart.")
@click.option("--random-starts", type=click.IntRange(0, 100), default=2, show_default=True,
              help="Random patterns among the search's starts.")
@click.option("--out", type=OutputPath(companions=SIDECAR), default=None,
              help="The worst patterns (.csv, with a .json provenance sidecar): row, col, "
                   "on_lrs, off_lrs.")
@command_guard
@spec_command
def margin(spec, states, v_read, cell, search, objective, random_starts, out, seed, **kw
           ) -> None:
    """Read margin under V/2: the far corner cell with every other cell in the LRS, or
    (--search) the worst data pattern found (the data pattern option is not used)."""
    from ..array.read import read_margin

    if out and not search:
        raise InputError("--out writes the searched patterns: give --search too")
    if cell == "worst":
        from ..array.worst import worst_cell

        with progress_bar("screening cells", 2 * spec.n_cells) as bar:
            cell, _ = worst_cell(spec, v_read, lambda: bar.update(2))
    elif cell == "corner":
        cell = None
    if not search:
        r = read_margin(spec, v_read, cell)
        click.echo(f"{spec.topology} {spec.rows}x{spec.cols}: cell {r.cell}, column current "
                   f"{r.i_on:.4g} A (LRS) / {r.i_off:.4g} A (HRS), margin {r.margin:.4f}")
        return
    from ..array.worst import worst_pattern

    with progress_bar("worst pattern") as bar:
        w = worst_pattern(spec, v_read, cell, objective, random_starts, seed,
                          progress=bar.update)
    standard = ", ".join(f"{k} {v:.4f}" for k, v in w.standard.items())
    click.echo(f"{spec.topology} {spec.rows}x{spec.cols}: cell {w.cell}, worst pattern "
               f"({objective}) margin {w.margin:.4f}: column current {w.i_on:.4g} A (LRS) / "
               f"{w.i_off:.4g} A (HRS); {w.reads} reads, {w.seconds:.3g} s")
    click.echo(f"standard patterns: {standard}")
    for what, p in (("LRS read", w.on_pattern), ("HRS read", w.off_pattern)):
        if spec.n_cells <= 1024 and (what == "LRS read" or objective == "window"):
            click.echo(f"pattern of the {what} (1 = LRS, the cell shown as 1):")
            click.echo("\n".join("".join("1" if x else "0" for x in row) for row in p))
    if out:
        import numpy as np
        import pandas as pd

        from ..array.tables import provenance, write_table

        ii, jj = np.meshgrid(np.arange(spec.rows), np.arange(spec.cols), indexing="ij")
        df = pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(),
                           "on_lrs": w.on_pattern.ravel().astype(int),
                           "off_lrs": w.off_pattern.ravel().astype(int)})
        write_table(out, df, provenance(
            spec, command="array margin --search", v_read_V=v_read, cell=list(w.cell),
            objective=objective, margin=w.margin, i_on_A=w.i_on, i_off_A=w.i_off,
            standard_margins=w.standard, reads=w.reads))
