"""``rram endurance`` and ``rram fit-endurance``: wear-out over pulsed cycles."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import (
    InputPath,
    OutputPath,
    card_option,
    command_guard,
    engine_option,
    finite,
    load_card,
    load_variation,
    variation_option,
)


def _pulse_options(func):
    from ..engine.stimulus import PulseCycle

    d = PulseCycle()
    for name, unit, what in reversed((
            ("v-set", "V", "SET pulse amplitude"), ("v-reset", "V", "RESET pulse amplitude"),
            ("width", "s", "flat top of each pulse"), ("edge", "s", "rise and fall time"),
            ("gap", "s", "0 V after each pulse"), ("v-gate", "V", "word line (1T1R gate)"),
            ("v-read", "V", "read voltage"))):
        func = click.option(f"--{name}", type=float, callback=finite, default=None,
                            help=f"{what} ({unit}) [default: the card's endurance pulses "
                                 f"(rram fit-endurance), else "
                                 f"{getattr(d, name.replace('-', '_')):g}].")(func)
    return func


def _cycle(card, **given):
    """The card's endurance pulses (or the default cycle), with the options given."""
    import dataclasses

    from ..engine.stimulus import PulseCycle

    return dataclasses.replace(PulseCycle.from_meta(card.meta),
                               **{k: v for k, v in given.items() if v is not None})


def _wearing(card):
    """The card in the wearing model (a card without the wear block wears nothing)."""
    from ..card import in_model
    from ..model import wearing_model

    return in_model(card, wearing_model())


@click.command("endurance")
@card_option("Model card JSON with the wear-out block (kwear, xres, ews) [default: the "
             "built-in card, which does not wear].")
@variation_option("none")
@engine_option()
@click.option("--cycles", type=click.IntRange(1, 10**9), required=True)
@click.option("--devices", type=click.IntRange(1, 10**6), default=1, show_default=True)
@click.option("--seed", type=click.IntRange(0, None), default=0, show_default=True)
@click.option("--every-cycle", is_flag=True,
              help="Simulate every cycle instead of jumping over the cycles a wear step "
                   "allows (the jumps are verified against it: docs/model.md §11).")
@_pulse_options
@click.option("--out", required=True, type=OutputPath(companions=(".json",)),
              help="Table of the simulated cycles (.csv or .parquet); the failures and "
                   "the provenance go beside it (<out>.json).")
@click.option("--plot", type=OutputPath(), default=None,
              help="R_LRS and R_HRS against the cycle (PNG).")
@command_guard
def endurance_cmd(card_path, variation, engine, cycles, devices, seed, every_cycle, v_set,
                  v_reset, width, edge, gap, v_gate, v_read, out, plot) -> None:
    """Cycle DEVICES cells CYCLES times with SET/RESET pulses (1T1R) and report when
    their windows close and how they fail (stuck-LRS, stuck-HRS)."""
    from ..io import write_atomic, write_text_atomic
    from ..mc.endurance import NO_WINDOW, Endurance, require_room, run_endurance

    loaded = load_card(card_path)
    protocol = _cycle(loaded, v_set=v_set, v_reset=v_reset, width=width, edge=edge, gap=gap,
                      v_gate=v_gate, v_read=v_read)
    card = _wearing(loaded)
    spec = load_variation(variation, card)
    study = Endurance(card=card, cycles=cycles, devices=devices, seed=seed, spec=spec,
                      protocol=protocol, engine=engine, skip=not every_cycle)
    require_room(study)
    if card is not loaded:  # after every check: a refused command says one line
        click.echo("note: the card has no wear-out block (kwear = 0): its window stays "
                   "open", err=True)
    result = run_endurance(study, progress=True)
    failures = result.failures()
    table = result.table
    suffix = Path(out).suffix.lower()
    write_atomic(out, lambda p: table.to_parquet(p, index=False) if suffix == ".parquet"
                 else table.to_csv(p, index=False))
    side = {"provenance": result.provenance,
            "failures": json.loads(failures.to_json(orient="records"))}
    write_text_atomic(f"{out}.json", json.dumps(side, indent=2) + "\n")
    click.echo(failures.to_string(index=False))
    unswitched = int((failures["mode"] == NO_WINDOW).sum())
    if unswitched:
        click.echo(f"note: {unswitched} of {devices} device(s) read a window below "
                   f"{study.closed_window:g} from their first cycle ({NO_WINDOW}): these "
                   "pulses do not switch the card; try a stronger RESET or SET (--v-reset, "
                   "--v-set, --width, --v-gate)", err=True)
    click.echo(f"wrote {len(table)} simulated cycles of {devices} device(s) to {out} "
               f"({cycles} cycles each)", err=True)
    if plot:
        from ..plots import endurance_record as endurance_plot

        endurance_plot(table, failures, plot, f"{card.name}: kwear {card['kwear']:.3g} /m")
        click.echo(f"wrote {plot}", err=True)


@click.command("fit-endurance")
@click.argument("record_file", type=InputPath())
@card_option("The device's card, calibrated on its fresh cycles [default: the built-in "
             "card]; for a record that fails stuck-HRS before its window closes, its kwear.")
@_pulse_options
@click.option("--out", required=True, type=OutputPath(),
              help="The card with the fitted kwear, xres (and ews), with provenance.")
@click.option("--plot", type=OutputPath(), default=None,
              help="The record and the fitted card's run, R against the cycle (PNG).")
@command_guard
def fit_endurance_cmd(record_file, card_path, v_set, v_reset, width, edge, gap, v_gate,
                      v_read, out, plot) -> None:
    """Fit wear-out to RECORD_FILE: R_LRS and R_HRS against the cycle (columns cycle,
    lrs, hrs, optionally device), as an endurance test keeps them."""
    from .. import __version__
    from ..engine.stimulus import PulseCycle
    from ..fit.data import sha256_of
    from ..fit.endurance_fit import EnduranceRecord, fit_endurance
    from ..fit.report import save_card

    record = EnduranceRecord.load(record_file)
    fresh = load_card(card_path)
    protocol = _cycle(fresh, v_set=v_set, v_reset=v_reset, width=width, edge=edge, gap=gap,
                      v_gate=v_gate, v_read=v_read)
    result = fit_endurance(record, fresh, protocol)
    click.echo(result.report())
    click.echo(result.devices.to_string(index=False))
    card = result.card.with_meta(
        provenance={"rram_version": __version__, "data_sha256": sha256_of(record_file),
                    "data": [Path(record_file).name]},
        fit={"endurance": {"kwear": result.kwear, "xres": result.xres, "ews": result.ews,
                           "kwear_sigma": result.kwear_sigma, "mode": result.mode},
             PulseCycle.META_KEY: protocol.as_meta()})
    save_card(card, out)
    click.echo(f"wrote {out} (card {card.digest[:12]})", err=True)
    if plot:
        from ..mc.endurance import Endurance, run_endurance
        from ..plots import endurance_record as endurance_plot

        last = int(record.frame["cycle"].max()) + 1
        run = run_endurance(Endurance(card=card, cycles=last, protocol=protocol))
        endurance_plot(run.table, run.failures(), plot,
                       f"{Path(record_file).name}: kwear {result.kwear:.3g} /m",
                       data=record.frame)
        click.echo(f"wrote {plot}", err=True)
