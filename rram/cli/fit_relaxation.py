"""``rram fit-relaxation``: the drift after programming from a relaxation record."""

from __future__ import annotations

from pathlib import Path

import click

from .common import InputPath, OutputPath, command_guard, load_card
from .fit import read_record_options


@click.command("fit-relaxation")
@click.argument("read_file", type=InputPath())
@read_record_options("The device's card [default: the built-in card]: it places each cell "
                     "on its programming path by its first read; a card without the "
                     "relaxation block is taken into it.")
@click.option("--out", required=True, type=OutputPath(),
              help="The card with the fitted lrel, with provenance and the fit's figures.")
@click.option("--plot", type=OutputPath(), default=None,
              help="Each cell's reads against the time after programming and the fitted "
                   "card's drift (PNG).")
@command_guard
def fit_relaxation_cmd(read_file, columns, layout, card_path, v_read, interval, out,
                       plot) -> None:
    """Fit the relaxation after programming to READ_FILE: cells read again and again
    after they were programmed, each read's time counted from the programming; ln R
    against log10 t of each cell gives its drift per decade."""
    from .. import __version__
    from ..card import in_model
    from ..fit.data import sha256_of
    from ..fit.reads import load_reads
    from ..fit.relaxation_fit import fit_relaxation
    from ..fit.report import save_card
    from ..model import relaxing_model

    card0 = in_model(load_card(card_path), relaxing_model())
    record = load_reads(read_file, columns, v_read=v_read, interval=interval, layout=layout)
    result = fit_relaxation(record, card0)
    click.echo(result.report())
    card = result.card.with_meta(
        provenance={"rram_version": __version__, "data_sha256": sha256_of(read_file),
                    "data": [Path(read_file).name]},
        fit={"relaxation": {"lrel_m": result.lrel, "lrel_ln_sigma": result.lrel_sigma,
                            "drift_per_decade": result.drift_per_decade,
                            "cells": len(result.cells)},
             "read_protocol": {"v_read": v_read, "layout": layout}})
    save_card(card, out)
    click.echo(f"wrote {out} (card {card.digest[:12]})", err=True)
    if plot:
        from ..plots import relaxation_record

        relaxation_record(record, result.cells, plot,
                          f"{Path(read_file).name}: lrel {result.lrel * 1e9:.3g} nm, "
                          f"{result.drift_per_decade:+.3f} ln R per decade")
        click.echo(f"wrote {plot}", err=True)
