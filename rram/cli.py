"""Command-line interface: ``rram --help``.

Usage and validation errors exit with status 2 and a message naming the bad input;
a simulation that cannot be completed exits with status 1 and says why and when.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path

import click

from . import __version__
from .errors import CardError, InputError, RramError, SimulationError


def _fail_usage(message: str) -> None:
    raise click.UsageError(message)


def handle_errors(func):
    """Map package errors to CLI exit codes: 2 for bad input, 1 for failed simulations."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (CardError, InputError) as exc:
            _fail_usage(str(exc))
        except SimulationError as exc:
            click.echo(f"Error: simulation failed: {exc}", err=True)
            sys.exit(1)
        except RramError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)

    return wrapper


def _finite(ctx, param, value):
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value!r}")
    return value


def _load_card(path: str | None):
    from .card import default_card, load_card

    return default_card() if path is None else load_card(path)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rram")
def main() -> None:
    """Filamentary RRAM compact model: simulate, export, vary and calibrate."""


@main.command()
@click.option("--out", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the card to this JSON file instead of standard output.")
@handle_errors
def card(out: str | None) -> None:
    """Print or write the default model card as JSON."""
    from .card import default_card
    from .io import write_text_atomic

    text = default_card().to_json()
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text_atomic(out, text)
        click.echo(f"wrote {out}", err=True)


@main.command()
@click.option("--card", "card_path", type=click.Path(exists=True, dir_okay=False),
              help="Model card JSON (default: the built-in card).")
@click.option("--engine", type=click.Choice(["python", "ngspice", "veriloga"]),
              default="python", show_default=True, help="Simulation engine.")
@click.option("--v-set", type=float, default=2.0, show_default=True, callback=_finite,
              help="SET sweep maximum (V); negative for devices that SET at negative bias.")
@click.option("--v-reset", type=float, default=-2.0, show_default=True, callback=_finite,
              help="RESET sweep maximum (V), of the opposite sign to --v-set.")
@click.option("--rate", type=float, default=1e3, show_default=True, callback=_finite,
              help="Sweep rate (V/s).")
@click.option("--compliance", type=float, default=None, callback=_finite,
              help="SET current compliance (A) [default: 1e-4 unless only "
                   "--series-resistance is given].")
@click.option("--series-resistance", type=float, default=None, callback=_finite,
              help="Series resistance (Ohm); alone it replaces the compliance.")
@click.option("--cycles", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Number of SET/RESET loops.")
@click.option("--temperature", type=float, default=None, callback=_finite,
              help="Ambient temperature (K) [default: the card's tamb].")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output CSV (device, cycle, time_s, v_applied_V, v_cell_V, current_A, "
                   "gap_nm, width_nm, temperature_K).")
@handle_errors
def sweep(card_path, engine, v_set, v_reset, rate, compliance, series_resistance, cycles,
          temperature, out) -> None:
    """Run DC loops 0 -> v-set -> 0 -> v-reset -> 0 and write the waveforms."""
    from .analysis import loop_metrics
    from .io import write_atomic
    from .sweep import SweepSpec, run_sweep, sweep_frame

    spec = SweepSpec(v_set=v_set, v_reset=v_reset, rate=rate, compliance=compliance,
                     series_resistance=series_resistance, cycles=cycles,
                     temperature=temperature)
    res = run_sweep(spec, _load_card(card_path), engine)
    frame = sweep_frame(res)
    write_atomic(out, lambda p: frame.to_csv(p, index=False))
    click.echo(f"wrote {len(frame)} rows to {out}", err=True)
    if res.circuit == "compliance":
        m = loop_metrics(res)
        click.echo(m.drop(columns=["device"]).to_string(index=False, float_format="%.4g"),
                   err=True)


@main.command()
@click.option("--out", type=click.Path(file_okay=False), default="out", show_default=True,
              help="Output folder.")
@click.option("--card", "card_path", type=click.Path(exists=True, dir_okay=False),
              help="Model card JSON (default: the built-in card).")
@handle_errors
def demo(out: str, card_path: str | None) -> None:
    """Run every RRAM phenomenon and write loops, a summary and plots."""
    from .demo import run_demo

    click.echo(f"rram {__version__}: phenomena on the {'given' if card_path else 'default'} "
               "card", err=True)
    results = run_demo(out, _load_card(card_path), log=lambda s: click.echo(s, err=True))
    for p in results:
        click.echo(f"{'PASS' if p.passed else 'FAIL'}  {p.name}")
    click.echo(f"summary: {Path(out) / 'phenomena.md'}; plots in {Path(out) / 'plots'}",
               err=True)
    if not all(p.passed for p in results):
        sys.exit(1)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["spice", "veriloga"]), required=True,
              help="spice: ngspice .subckt library; veriloga: CMC-style Verilog-A module.")
@click.option("--card", "card_path", type=click.Path(exists=True, dir_okay=False),
              help="Model card JSON whose values become the defaults (default: built-in).")
@click.option("--name", default="rram", show_default=True,
              help="Subcircuit / module name.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file (.lib or .va).")
@handle_errors
def export(fmt: str, card_path: str | None, name: str, out: str) -> None:
    """Write the model for a simulator, with a card's values as parameter defaults."""
    from .io import write_text_atomic
    from .model import MODEL
    from .spice import validate

    validate.identifier(name, "--name")
    card = _load_card(card_path)
    if fmt == "spice":
        from .printers.spice_printer import render_subckt

        text = render_subckt(MODEL, card, name=name)
    else:
        from .printers.veriloga_printer import render_module

        text = render_module(MODEL, card, name=name)
    write_text_atomic(out, text)
    click.echo(f"wrote {out} ({fmt}, card {card.digest[:12]})", err=True)


def _assignments(values: tuple[str, ...], what: str) -> dict[str, float]:
    out = {}
    for item in values:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise InputError(f"{what} {item!r} must look like NAME=VALUE")
        try:
            out[name] = float(text)
        except ValueError:
            if what == "--option" and name.lower() == "method":
                out[name] = text  # checked by the testbench
                continue
            raise InputError(f"{what} {name}: {text!r} is not a number") from None
    return out


@main.command()
@click.argument("kind", type=click.Choice(["dc-loop", "1t1r", "pulses", "read-disturb",
                                           "overshoot"]))
@click.option("--card", "card_path", type=click.Path(exists=True, dir_okay=False),
              help="Model card JSON (default: the built-in card).")
@click.option("--set", "settings", multiple=True, metavar="NAME=VALUE",
              help="Testbench setting (repeatable); `rram netlist KIND --help-settings` "
                   "lists them.")
@click.option("--model", "model_kind", type=click.Choice(["subckt", "osdi"]),
              default="subckt", show_default=True,
              help="Use the ngspice subcircuit or a compiled OSDI module.")
@click.option("--model-path", default=None,
              help="Path of the .lib (.include) or .osdi (pre_osdi) the deck loads "
                   "[default: rram.lib / rram.osdi next to the deck].")
@click.option("--instance", default="cell", show_default=True, help="Instance name.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="ngspice .options entry (repeatable), e.g. reltol=1e-4.")
@click.option("--tmax", type=float, default=None, callback=_finite,
              help="Maximum time step (s) [default: 1/200 of the stimulus].")
@click.option("--help-settings", is_flag=True, help="List the settings of KIND and exit.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Output deck (.cir).")
@handle_errors
def netlist(kind, card_path, settings, model_kind, model_path, instance, options, tmax,
            help_settings, out) -> None:
    """Write a standalone ngspice deck for a testbench KIND (run it with ngspice -b)."""
    from .spice.decks import build, settings_help
    from .spice.testbench import ModelRef

    if help_settings:
        click.echo(settings_help(kind).replace("; ", "\n"))
        return
    if out is None:
        raise InputError("--out is required")
    path = model_path or ("rram.lib" if model_kind == "subckt" else "rram.osdi")
    tb = build(kind, _assignments(settings, "--set"), _load_card(card_path),
               ModelRef(model_kind, path), instance=instance,
               options=_assignments(options, "--option"), tmax=tmax, print_results=True)
    from .io import write_text_atomic

    write_text_atomic(out, tb.render())
    click.echo(f"wrote {out} ({kind}, {model_kind} model from {path})", err=True)


@main.command()
@click.option("--card", "card_path", type=click.Path(exists=True, dir_okay=False),
              help="Model card JSON (default: the built-in card).")
@click.option("--variation", "variation_path", type=click.Path(exists=True, dir_okay=False),
              help="Variation spec JSON (default: the built-in spec).")
@click.option("--engine", type=click.Choice(["python", "ngspice", "veriloga"]),
              default="python", show_default=True)
@click.option("--devices", type=click.IntRange(1, 10**8), required=True)
@click.option("--cycles", type=click.IntRange(1, 10**6), required=True)
@click.option("--seed", type=click.IntRange(0, None), required=True)
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="Worker processes [default: 1 (this process, numba threads) for the "
                   "Python engine, one per core for ngspice].")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler address (tcp://host:8786) instead of a local cluster.")
@click.option("--chunk", type=click.IntRange(1, 10**7), default=None,
              help="Devices per task [default: ~20k device-cycles, 20 devices on ngspice].")
@click.option("--resume", is_flag=True, help="Complete an interrupted run of the same study.")
@click.option("--circuit", type=click.Choice(["compliance", "1t1r", "resistor"]),
              default="compliance", show_default=True)
@click.option("--v-set", type=float, default=2.0, show_default=True, callback=_finite)
@click.option("--v-reset", type=float, default=-2.0, show_default=True, callback=_finite)
@click.option("--rate", type=float, default=1e3, show_default=True, callback=_finite,
              help="Sweep rate (V/s).")
@click.option("--compliance", type=float, default=100e-6, show_default=True,
              callback=_finite, help="SET compliance (A; compliance circuit).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output table: .parquet or .csv (one row per device and cycle).")
@click.option("--plots", type=click.Path(file_okay=False), default=None,
              help="Write CDF, histogram and R-versus-cycle plots and a summary here.")
@handle_errors
def mc(card_path, variation_path, engine, devices, cycles, seed, workers, scheduler, chunk,
       resume, circuit, v_set, v_reset, rate, compliance, out, plots) -> None:
    """Monte Carlo of D2D and C2C variation: one row per device and cycle."""
    from .mc import MonteCarlo, Protocol
    from .mc.backend import run_mc
    from .variation import default_variation, load_variation

    spec = default_variation() if variation_path is None else load_variation(variation_path)
    study = MonteCarlo(_load_card(card_path), spec, devices, cycles, seed, engine,
                       Protocol(circuit=circuit, v_set=v_set, v_reset=v_reset, rate=rate,
                                icc_set=compliance))
    info = run_mc(study, out, workers=workers, scheduler=scheduler, chunk=chunk,
                  resume=resume, log=lambda s: click.echo(s, err=True))
    click.echo(f"wrote {info.rows} rows to {out} ({info.failed_rows} not converged) in "
               f"{info.seconds:.1f} s: {info.rows / max(info.seconds, 1e-9):.0f} "
               "device-cycles/s", err=True)
    from .mc.report import load_table, switching_failures

    frame = load_table(out)
    fails = switching_failures(frame)
    click.echo(f"did not switch (resistance changed less than 2x): {fails['no_set']} SETs "
               f"and {fails['no_reset']} RESETs of {fails['rows']} converged device-cycles "
               "(column reason)", err=True)
    if plots:
        from .mc.report import summary, write_plots

        click.echo(summary(frame).to_string(float_format="%.4g"))
        write_plots(frame, plots)
        click.echo(f"plots in {plots}", err=True)


@main.command()
@handle_errors
def generate() -> None:
    """Re-render the generated files (kernels, netlists) from the equations."""
    from .generate import write_all

    changed = write_all()
    for path in changed:
        click.echo(f"updated {path}")
    if not changed:
        click.echo("generated files are up to date")


from . import cli_fit  # noqa: E402,F401  (registers rram fit and rram fit-variation)

if __name__ == "__main__":
    # `python -m rram.cli` runs this file as __main__: use the imported module's group,
    # on which rram.cli_fit registered its commands
    from rram.cli import main as _main

    _main()
