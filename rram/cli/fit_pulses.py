"""``rram fit-pulses``: calibration on a pulse record (staircases, 1T1R or 1R)."""

from __future__ import annotations

from pathlib import Path

import click

from ..io import VERDICT_SUFFIX as VERDICT
from .common import InputPath, OutputPath, card_option, command_guard, finite, load_card
from .fit import accept_option, columns_option, judged, transistor_options


@click.command("fit-pulses")
@click.argument("pulse_file", type=InputPath())
@columns_option("sequence,v_pulse_V,width_ns,v_gate_V,resistance_kohm")
@card_option("Initial card [default: the built-in card]; a card fitted to a loop of the "
             "same device is the best start.")
@click.option("--recipe", "recipe_path", type=InputPath(), default=None,
              help="Recipe JSON [default: the model's pulse recipe].")
@click.option("--width", type=float, default=None, callback=finite,
              help="Pulse width (s) of every pulse, for a file without a width column.")
@click.option("--v-read", type=float, default=0.2, show_default=True, callback=finite,
              help="Read voltage (V) of the reads after the pulses.")
@click.option("--read-gate", type=float, default=None, callback=finite,
              help="Gate voltage (V) of the reads (1T1R) [default: the highest gate].")
@click.option("--read", type=click.Choice(["cell", "path"]), default="cell",
              show_default=True,
              help="cell: the file's resistance is the cell's own (V_cell/I); path: "
                   "V_read/I through the access transistor.")
@click.option("--start", type=click.Choice(["lrs", "hrs", "card"]), default="lrs",
              show_default=True,
              help="Each sequence's initial state: the card's programmed LRS or HRS, or "
                   "its x0, w0.")
@transistor_options
@click.option("--set-polarity", type=click.Choice(["auto", "negative", "positive"]),
              default="auto", show_default=True)
@click.option("--out", required=True, type=OutputPath(companions=(VERDICT,)),
              help="Fitted card (JSON, with provenance and the fit report); its verdict "
                   "goes beside it (<out>.verdict.json).")
@accept_option("card")
@click.option("--holdout", default=None, metavar="SEQ,...",
              help="Hold out these sequences (labels of the sequence column): the fit never "
                   "sees them, and the fitted card's RMS on them is reported beside the "
                   "training RMS.")
@click.option("--plot", type=OutputPath(), default=None,
              help="The reads against the pulse amplitude, data and model (PNG).")
@click.option("--starts", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Screen this many starts spread over the recipe's bounds (plus the "
                   "documented card) and fit from the best two, as rram fit --starts.")
@command_guard
def fit_pulses_cmd(pulse_file, columns, card_path, recipe_path, width, v_read, read_gate,
                   read, start, transistor, set_polarity, out, accept, holdout,
                   plot, starts) -> None:
    """Fit the model to a pulse record: PULSE_FILE has a row per pulse (v_pulse, width,
    v_gate or icc, the resistance read after it, and optionally sequence)."""
    from ..fit.data import sha256_of
    from ..fit.pulse_fit import fit_pulses, held_out_rms
    from ..fit.pulses import load_pulses
    from ..fit.recipe import default_recipe, load_recipe
    from ..fit.report import pulse_card, pulse_plot, pulse_report, save_card
    from ..fit.verdict import loop_verdict, parameters_on_bounds

    card0 = load_card(card_path)
    recipe = (load_recipe(recipe_path, card0.model) if recipe_path
              else default_recipe(card0.model, kind="pulses"))
    record = load_pulses(pulse_file, columns, v_read=v_read, read_gate=read_gate, read=read,
                         transistor=transistor, start=start, width=width)
    sign = {"auto": 0.0, "negative": -1.0, "positive": 1.0}[set_polarity]
    full = record
    held = [h.strip() for h in holdout.split(",")] if holdout else []
    if held:
        record = full.without_reads(held)
    click.echo(f"fitting {record.summary()}", err=True)
    result = fit_pulses(record, card0, recipe, sign=sign, starts=starts,
                        log=lambda s: click.echo(s, err=True))
    click.echo(pulse_report(result))
    validation = held_out_rms(full, held, result) if held else None
    if validation:
        click.echo(f"held-out sequences {', '.join(held)}: RMS "
                   f"{validation['held_out_rms_log10_decades']:.4f} dec over "
                   f"{validation['reads']} reads (training: {result.rms_dec:.4f} dec)")
    sw = result.switching
    fitted = (list(result.identification["fitted"]) if result.identification
              else list(recipe.parameters))
    verdict = loop_verdict(result.rms_dec,
                           (sw["v_set_V"]["data"], sw["v_set_V"]["model"]),
                           (sw["v_reset_V"]["data"], sw["v_reset_V"]["model"]),
                           parameters_on_bounds(result.card, recipe, fitted),
                           fit="pulse fit")
    judged(verdict, out, accept, "card")
    card = pulse_card(result, recipe, sha256_of(pulse_file), [Path(pulse_file).name], record)
    if validation:
        card = card.with_meta(holdout=validation)
    save_card(card.with_meta(verdict=verdict.as_dict()), out)
    click.echo(f"wrote {out} (card {card.digest[:12]})", err=True)
    if plot:
        pulse_plot(record, result.model_resistance, result.card["polarity"], plot,
                   f"{Path(pulse_file).name}: RMS {result.rms_dec:.3f} dec")
        click.echo(f"wrote {plot}", err=True)
