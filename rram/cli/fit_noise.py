"""``rram fit-noise``: the read noise (traps at the CF) from a record of repeated reads."""

from __future__ import annotations

from pathlib import Path

import click

from ..io import VERDICT_SUFFIX as VERDICT
from .common import InputPath, OutputPath, command_guard, load_card
from .fit import accept_option, judged, read_record_options


@click.command("fit-noise")
@click.argument("read_file", type=InputPath())
@read_record_options("The device's card [default: the built-in card]: it places each cell "
                     "on its programming path by its resistance; a card fitted to this "
                     "device's loops is the one to use.")
@click.option("--fit-rtrap/--hold-rtrap", default=True, show_default=True,
              help="Fit the traps' reach where the record identifies it, or keep the "
                   "card's.")
@click.option("--out", required=True, type=OutputPath(companions=(VERDICT,)),
              help="The card with the fitted ntrap (and rtrap), with provenance and the "
                   "fit report; its verdict goes beside it (<out>.verdict.json).")
@accept_option("card")
@click.option("--plot", type=OutputPath(), default=None,
              help="The read-to-read spread against R, data and model (PNG).")
@command_guard
def fit_noise_cmd(read_file, columns, layout, card_path, v_read, interval, fit_rtrap, out,
                  accept, plot) -> None:
    """Fit the read noise to READ_FILE: cells held at their states and read again and
    again; the spread of each cell's reads against its resistance."""
    from .. import __version__
    from ..fit.data import sha256_of
    from ..fit.noise_fit import fit_noise
    from ..fit.reads import load_reads
    from ..fit.report import save_card
    from ..fit.verdict import noise_verdict, on_bound

    card0 = load_card(card_path)
    record = load_reads(read_file, columns, v_read=v_read, interval=interval, layout=layout)
    result = fit_noise(record, card0, fit_rtrap=fit_rtrap,
                       log=lambda s: click.echo(s, err=True))
    click.echo(result.report())
    bounds = [p for p in result.fitted
              if on_bound(result.card[p], *_range(result.card, p))]
    still = int((~result.moving).sum())
    notes = [f"{k} held: {why}" for k, why in result.held.items()]
    if still:
        notes.append(f"{still} cell(s) read the same resistance every time (their traps "
                     "sat still): counted in the summed variance, not in the law")
    verdict = noise_verdict(result.median_ratio, result.slopes(), bounds, notes)
    judged(verdict, out, accept, "card")
    card = result.card.with_meta(
        provenance={"rram_version": __version__, "data_sha256": sha256_of(read_file),
                    "data": [Path(read_file).name]},
        fit={"noise": result.figures(), "read_protocol": {"v_read": v_read,
                                                          "layout": layout}},
        verdict=verdict.as_dict())
    save_card(card, out)
    click.echo(f"wrote {out} (card {card.digest[:12]})", err=True)
    if plot:
        result.plot(plot, f"{Path(read_file).name}: ntrap {result.card['ntrap']:.3g}/decade,"
                          f" rtrap {result.card['rtrap'] * 1e9:.3g} nm")
        click.echo(f"wrote {plot}", err=True)


def _range(card, name: str) -> tuple[float, float]:
    p = card.model.parameter(name)
    return p.lower, p.upper
