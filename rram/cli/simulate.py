"""``rram card``, ``sweep``, ``demo``, ``export``, ``netlist`` and ``generate``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ..dialects import BY_FORMAT, KINDS, dialect
from ..errors import InputError
from .common import (
    OutputFolder,
    OutputPath,
    ReferencedPath,
    card_option,
    command_guard,
    engine_option,
    finite,
    load_card,
    load_variation,
    variation_option,
)
from .protocol import echo_protocol, protocol_options, resolve_protocol


@click.command()
@card_option("Model card JSON to print or rewrite [default: the built-in card].")
@click.option("--states", is_flag=True,
              help="Derive the card's programmed states (xlrs, wlrs, xhrs, whrs: what "
                   "an instance's state = 1 or 2 starts in) from its standard loop.")
@click.option("--out", type=OutputPath(), default=None,
              help="Write the card to this JSON file instead of standard output.")
@command_guard
def card(card_path: str | None, states: bool, out: str | None) -> None:
    """Print or write a model card as JSON (by default the built-in card)."""
    from ..io import write_text_atomic

    chosen = load_card(card_path)
    if states:
        from ..states import with_programmed_states

        chosen = with_programmed_states(chosen)
    text = chosen.to_json()
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(out, text)
        click.echo(f"wrote {out}", err=True)


@click.command()
@card_option()
@engine_option()
@click.option("--cycles", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Number of SET/RESET loops.")
@click.option("--temperature", type=float, default=None, callback=finite,
              help="Ambient temperature (K) [default: 300; ngspice's default is 27 °C].")
@click.option("--out", required=True, type=OutputPath(),
              help="Output CSV (device, cycle, time_s, v_applied_V, v_cell_V, current_A, "
                   "gap_nm, width_nm, temperature_K).")
@click.option("--strict", is_flag=True,
              help="Refuse a sweep that leaves the model's range of validity (a CF above "
                   "tvalid, a state beyond its bounds, a CF that fills its cell): exit 2 "
                   "and write nothing.")
@command_guard
@protocol_options
def sweep(card_path, engine, protocol_choice, cycles, temperature, out, strict) -> None:
    """Run DC loops 0 -> v-set -> 0 -> v-reset -> 0 and write the waveforms (the
    card's fitted protocol unless --protocol or the flags change it)."""
    import pandas as pd
    from tqdm import tqdm

    from ..experiment import check_engine
    from ..io import write_atomic
    from ..resources import require_disk
    from ..sweep import BATCH_CYCLES, CSV_ROW_BYTES, sweep_batches, sweep_rows
    from ..validity import OUT_OF_RANGE, summary_line

    check_engine(engine)
    card = load_card(card_path)
    loop, source = resolve_protocol(card, protocol_choice)
    rows = sweep_rows(loop, cycles)
    require_disk(f"a sweep of {cycles} cycles ({rows} rows)", Path(out).resolve().parent,
                 rows * CSV_ROW_BYTES, "use fewer cycles")
    metrics: list[pd.DataFrame] = []
    written = 0

    def write(path: Path) -> None:
        nonlocal written
        batches = sweep_batches(loop, card, engine, cycles, temperature)
        with tqdm(total=cycles, unit="cycle", desc="sweep", disable=None, leave=False) as bar:
            for k, (frame, m) in enumerate(batches):
                frame.to_csv(path, mode="a" if k else "w", header=not k, index=False)
                written += len(frame)
                if m is not None:
                    metrics.append(m)
                    line = summary_line(m) if strict else None
                    if line:  # raised inside write_atomic: the partial file is dropped
                        raise InputError(
                            f"--strict: the stimulus takes the cell out of the model's range "
                            f"of validity: {line.removeprefix('warning: ')}; nothing "
                            "written (without --strict the rows are written, the column "
                            "out_of_range saying what left the range)")
                bar.update(min(BATCH_CYCLES, cycles - bar.n))

    write_atomic(out, write)
    echo_protocol(loop, source)
    click.echo(f"wrote {written} rows to {out}", err=True)
    if metrics:
        m = pd.concat(metrics, ignore_index=True)
        click.echo(m.drop(columns=["device", OUT_OF_RANGE]).to_string(
            index=False, float_format="%.4g"), err=True)
        line = summary_line(m)
        if line:
            click.echo(line, err=True)


@click.command()
@click.option("--out", type=OutputFolder(), default="out", show_default=True,
              help="Output folder.")
@card_option()
@command_guard
def demo(out: str, card_path: str | None) -> None:
    """Run every RRAM phenomenon and write loops, a summary and plots."""
    from ..demo import run_demo

    click.echo(f"rram {__version__}: phenomena on the {'given' if card_path else 'default'} "
               "card", err=True)
    results = run_demo(out, load_card(card_path), log=lambda s: click.echo(s, err=True))
    for p in results:
        click.echo(f"{'PASS' if p.passed else 'FAIL'}  {p.name}")
    click.echo(f"summary: {Path(out) / 'phenomena.md'}; plots in {Path(out) / 'plots'}",
               err=True)
    if not all(p.passed for p in results):
        sys.exit(1)


@click.command()
@click.option("--format", "fmt", type=click.Choice(list(BY_FORMAT)), required=True,
              help="spice: ngspice .subckt library; veriloga: CMC-style Verilog-A module.")
@card_option("Model card JSON whose values become the defaults [default: the built-in card].")
@click.option("--name", default=None,
              help="Subcircuit / module name (not a Verilog-A or ngspice reserved word) "
                   "[default: the card's model, rram (rram_relax, rram_wear for a card "
                   "with an optional block); its <name>_frozen, rram_frozen for rram, "
                   "with --frozen].")
@click.option("--frozen", is_flag=True,
              help="The frozen-state cell of the array decks (rram array netlist, with the "
                   "same --name): every programmed state's node as a port (gap and width; "
                   "an optional block's disorder or wear), which the deck ties to ground, "
                   "so a cell keeps its instance's x0, w0 (u0, wear0).")
@variation_option("none")
@click.option("--stats", type=OutputPath(), default=None,
              help="Also write the spec's ngspice statistical library (.lib sections tt, mc "
                   "and the ±3σ corners of R_LRS, R_HRS and |V_set|; needs --variation).")
@click.option("--out", required=True, type=OutputPath(),
              help="Output file (.lib or .va).")
@command_guard
def export(fmt: str, card_path: str | None, name: str | None, frozen: bool,
           variation: str, stats: str | None, out: str) -> None:
    """Write the model for a simulator, with a card's values as parameter defaults.

    With --variation, the defaults are the spec's median device: every carrier at the
    median of its distribution over devices and cycles (a fitted spec's centres folded
    into the nominal)."""
    from ..array.export import FROZEN_MODEL, frozen_name
    from ..generate import render_export
    from ..io import write_text_atomic
    from ..netlist import frozen_ports
    from ..spice import validate

    card = load_card(card_path)
    name = name or (frozen_name(card.model) if frozen else card.model.name)
    validate.identifier(name, "--name")
    if not frozen and name.lower() in (FROZEN_MODEL, frozen_name(card.model)):
        # a deck would load both as one
        raise InputError(f"--name {name!r} is the module of the array decks' frozen-state "
                         "cells (rram array netlist): add --frozen, or choose another name")
    spec = load_variation(variation, card)
    if stats is not None and spec is None:
        raise InputError("--stats needs --variation: the spec whose statistics it writes")
    if stats is not None and frozen:
        raise InputError("--stats is for the model's cells, not the frozen-state cell "
                         "(--frozen)")
    library, folded = None, ""
    if spec is not None:
        from ..experiment import DCLoop
        from ..statistics import median_device, render_library

        protocol = DCLoop.from_meta(card.meta)
        click.echo("the median device: a Monte Carlo of the spec at the card's protocol ...",
                   err=True)
        median = median_device(card, spec, protocol)
        if stats is not None:
            click.echo("the corners: design points at the Φ(±3) quantiles ...", err=True)
            library = render_library(card, spec, protocol, name, BY_FORMAT[fmt].kind,
                                     median)
        card = median
        folded = f", the spec's median device: {', '.join(spec.parameters)} moved"
    text = render_export(card, fmt, name, frozen_ports(card.model) if frozen else ())
    write_text_atomic(out, text)
    click.echo(f"wrote {out} ({fmt}, card {card.digest[:12]}{folded})", err=True)
    if library is not None:
        write_text_atomic(stats, library)
        click.echo(f"wrote {stats} (ngspice .lib sections tt, mc and the corners; "
                   f"instantiate {name}_cell)", err=True)


def _assignments(values: tuple[str, ...], what: str) -> dict[str, float]:
    out = {}
    for item in values:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise InputError(f"{what} {item!r} must look like NAME=VALUE")
        try:
            out[name] = float(text)
        except ValueError:
            from ..spice.validate import NGSPICE_OPTIONS

            spec = NGSPICE_OPTIONS.get(name.lower())
            if what == "--option" and spec is not None and spec.kind == "choice":
                out[name] = text  # checked against its choices by the testbench
                continue
            raise InputError(f"{what} {name}: {text!r} is not a number") from None
    return out


@click.command()
@click.argument("kind", type=click.Choice(["dc-loop", "1t1r", "pulses", "read-disturb",
                                           "overshoot"]))
@card_option()
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="Testbench setting (repeatable); `rram netlist KIND --help-settings` "
                   "lists them.")
@click.option("--model", "model_kind", type=click.Choice(list(KINDS)),
              default="subckt", show_default=True,
              help="Use the ngspice subcircuit or a compiled OSDI module.")
@click.option("--model-path", type=ReferencedPath(dir_okay=False), default=None,
              help="Path of the .lib (.include) or .osdi (pre_osdi) the deck loads "
                   "[default: rram.lib / rram.osdi next to the deck].")
@click.option("--name", default="rram", show_default=True,
              help="Subcircuit / module name the library or module defines: the --name it "
                   "was exported with (rram export --name).")
@click.option("--instance", default="cell", show_default=True, help="Instance name.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="ngspice .options entry (repeatable), e.g. reltol=1e-4; checked against "
                   "ngspice's names and ranges (flags as klu=1).")
@click.option("--tmax", type=float, default=None, callback=finite,
              help="Maximum time step (s), within [max(1e-15, T/1e9), T] for a stimulus "
                   "of duration T [default: T/200].")
@click.option("--help-settings", is_flag=True, help="List the settings of KIND and exit.")
@click.option("--out", type=OutputPath(), default=None,
              help="Output deck (.cir).")
@command_guard
def netlist(kind, card_path, settings, model_kind, model_path, name, instance, options, tmax,
            help_settings, out) -> None:
    """Write a standalone ngspice deck for a testbench KIND (run it with ngspice -b)."""
    from ..spice.decks import build, settings_help
    from ..spice.testbench import ModelRef

    if help_settings:
        click.echo(settings_help(kind).replace("; ", "\n"))
        return
    if out is None:
        raise InputError("--out is required")
    from ..spice import validate

    validate.identifier(name, "--name")
    path = model_path or name + dialect(model_kind).suffix
    tb = build(kind, _assignments(settings, "--set"), load_card(card_path),
               ModelRef(model_kind, path, name=name), instance=instance,
               options=_assignments(options, "--option"), tmax=tmax, print_results=True)
    from ..io import write_text_atomic

    write_text_atomic(out, tb.render())
    click.echo(f"wrote {out} ({kind}, {model_kind} model from {path})", err=True)


@click.command()
@command_guard
def generate() -> None:
    """Re-render the generated files (kernels, netlists) from the equations."""
    from ..generate import write_all

    changed = write_all()
    for path in changed:
        click.echo(f"updated {path}")
    if not changed:
        click.echo("generated files are up to date")


