"""``rram mc``: Monte Carlo of device-to-device and cycle-to-cycle variation."""

from __future__ import annotations

import click

from ..errors import InputError, SimulationError
from .common import (
    OutputFolder,
    OutputPath,
    card_option,
    command_guard,
    engine_option,
    load_card,
    load_variation,
    variation_option,
)
from .protocol import echo_protocol, protocol_options, resolve_protocol


@click.command()
@card_option()
@variation_option("default")
@engine_option()
@click.option("--devices", type=click.IntRange(1, 10**8), required=True)
@click.option("--cycles", type=click.IntRange(1, 10**6), required=True)
@click.option("--seed", type=click.IntRange(0, None), required=True)
@click.option("--burn-in", type=click.IntRange(0, 10**6), default=0, show_default=True,
              help="Cycles run first and not recorded (the first SET starts from the "
                   "formed state; compare with cycled devices' data after >= 1).")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="Worker processes [default: 1 (this process, numba threads) for the "
                   "Python engine, one per core for ngspice].")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler address (tcp://host:8786) instead of a local cluster.")
@click.option("--chunk", type=click.IntRange(1, 10**7), default=None,
              help="Devices per task [default: ~20k device-cycles, 20 devices on ngspice].")
@click.option("--resume", is_flag=True, help="Complete an interrupted run of the same study.")
@click.option("--out", required=True,
              type=OutputPath(companions=(".json",), companion_folders=(".parts",)),
              help="Output table: .parquet or .csv (one row per device and cycle).")
@click.option("--plots", type=OutputFolder(), default=None,
              help="Write CDF, histogram and R-versus-cycle plots and a summary here.")
@click.option("--strict", is_flag=True,
              help="Refuse a study whose nominal device leaves the model's range of validity "
                   "under the stimulus (checked before any device runs: exit 2, nothing "
                   "written), and exit 2 after the run if a drawn device left it (the table "
                   "stays, its column out_of_range saying what left the range).")
@command_guard
@protocol_options
def mc(card_path, variation, engine, devices, cycles, seed, burn_in, workers, scheduler, chunk,
       resume, protocol_choice, out, plots, strict) -> None:
    """Monte Carlo of D2D and C2C variation: one row per device and cycle, each
    cycle a DC loop (the spec's or the card's fitted protocol unless --protocol or the
    flags change it)."""
    from ..mc import MonteCarlo
    from ..mc.backend import run_mc
    from ..variation import VariationSpec

    card = load_card(card_path)
    spec = load_variation(variation, card) or VariationSpec((), model=card.model)
    loop, source = resolve_protocol(card, protocol_choice, variation)
    study = MonteCarlo(card, spec, devices, cycles, seed, engine, loop, burn_in)
    if strict:
        from ..experiment import nominal_excursion

        why = nominal_excursion(card, study.protocol)
        if why:
            raise InputError(f"--strict: the stimulus takes the nominal device out of the "
                             f"model's range of validity ({why}); nothing run or written")
    info = run_mc(study, out, workers=workers, scheduler=scheduler, chunk=chunk,
                  resume=resume, log=lambda s: click.echo(s, err=True))
    echo_protocol(loop, source)
    click.echo(f"wrote {info.rows} rows to {out} ({info.failed_rows} not converged) in "
               f"{info.seconds:.1f} s: {info.rows / max(info.seconds, 1e-9):.0f} "
               "device-cycles/s", err=True)
    from ..mc.report import check_outcome, load_table, switching_failures

    why = check_outcome(info)
    if why is not None:  # the table stays: its error column says why each row failed
        raise SimulationError(why)

    frame = load_table(out)
    fails = switching_failures(frame)
    click.echo(f"did not switch (resistance changed less than 2x): {fails['no_set']} SETs "
               f"and {fails['no_reset']} RESETs of {fails['rows']} converged device-cycles "
               "(column reason)", err=True)
    from ..validity import summary_line

    line = summary_line(frame)
    if line:
        click.echo(line, err=True)
    if plots:
        from ..mc.report import summary, write_plots

        click.echo(summary(frame).to_string(float_format="%.4g"))
        write_plots(frame, plots)
        click.echo(f"plots in {plots}", err=True)
    if line and strict:  # after the table and its plots: the study is not lost
        raise InputError(f"--strict: {line.removeprefix('warning: ')}; the table is kept")
