"""``rram fit`` and ``rram fit-variation``: calibration from the command line."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from pathlib import Path

import click

from ..errors import InputError, RramError
from ..io import VERDICT_SUFFIX as VERDICT
from .common import (
    InputPath,
    OutputFolder,
    OutputPath,
    card_option,
    command_guard,
    finite,
    load_card,
)
from .protocol import echo_protocol, protocol_options, resolve_protocol


def _cycle_range(text: str | None) -> tuple[int, int] | None:
    from ..fit.holdout import parse_cycle_range

    return None if text is None else parse_cycle_range(text, "--cycles")


def _parse_holdout(ctx: click.Context, param: click.Parameter, value: str | None):
    from ..fit.holdout import Holdout

    try:
        return None if value is None else Holdout.parse(value)
    except InputError as exc:
        raise click.BadParameter(str(exc)) from None


def holdout_option(reported: str):
    """``--holdout``: the same rule for the loop and the variation fit."""
    return click.option(
        "--holdout", default=None, metavar="F|A:B|C,D,...", callback=_parse_holdout,
        help="Hold out cycles the fit never sees (a fraction: every 1/F-th cycle; a range; "
             f"a list) and report {reported} on them beside the training errors.")


def _columns(ctx: click.Context, param: click.Parameter, value: str | None
             ) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = tuple(n.strip() for n in value.split(","))
    if not all(names):
        raise click.BadParameter(f"expected NAME,NAME,... with no empty name, got {value!r}")
    return names


def columns_option(example: str) -> Callable:
    """``--columns``: the column names of a headerless file."""
    return click.option("--columns", default=None, metavar="NAME,...", callback=_columns,
                        help="The column names of a headerless file (its first line is "
                             f"data), with unit suffixes, e.g. {example}.")


def read_record_options(card_help: str) -> Callable:
    """The options of a read record's file (rram.fit.reads.load_reads): ``--columns``,
    ``--layout``, ``--card`` (``card_help``), ``--v-read`` and ``--interval``."""
    options = (
        columns_option("cell,time_ms,resistance_kohm"),
        click.option("--layout", default="long", show_default=True,
                     metavar="long|wide[:UNIT]",
                     help="long: a row per read (cell, time or read, resistance or "
                          "current); wide: a row per cell, one resistance per read "
                          "(wide:kohm for kΩ)."),
        card_option(card_help),
        click.option("--v-read", type=float, default=0.1, show_default=True,
                     callback=finite, help="Read voltage (V) of every read."),
        click.option("--interval", type=float, default=None, callback=finite,
                     help="Time between reads (s), for a record without a time column."),
    )

    def apply(func: Callable) -> Callable:
        for option in reversed(options):
            func = option(func)
        return func

    return apply


def transistor_options(func: Callable) -> Callable:
    """``--kp``, ``--wl``, ``--vto``: a 1T1R cell's access transistor (level 1); the
    command gets ``transistor``, the values given."""
    names = ("kp", "wl", "vto")
    helps = ("transconductance parameter (A/V^2)", "W/L", "threshold voltage (V)")
    for name, text in zip(reversed(names), reversed(helps), strict=True):
        func = click.option(f"--{name}", type=float, default=None, callback=finite,
                            help=f"1T1R access transistor's {text} [default: the 1T1R "
                                 "circuit's].")(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        given = {n: kwargs.pop(n) for n in names}
        kwargs["transistor"] = {n: v for n, v in given.items() if v is not None}
        return func(*args, **kwargs)

    return wrapper


def gate_options(func: Callable) -> Callable:
    """``--v-gate`` and ``--reset-gate``: a 1T1R cell's loop, and the transistor."""
    func = transistor_options(func)
    func = click.option("--reset-gate", type=float, default=None, callback=finite,
                        help="Gate voltage (V) of the RESET sweeps [default: --v-gate].")(func)
    return click.option("--v-gate", type=float, default=None, callback=finite,
                        help="A 1T1R cell: the gate voltage (V) of the SET sweeps; the "
                             "voltages are those across cell and transistor.")(func)


def accept_option(what: str) -> Callable:
    return click.option("--accept", is_flag=True,
                        help=f"Write the {what} even when the fit fails a check of its "
                             "verdict (the verdict goes into its metadata).")


def judged(verdict, out: str, accept: bool, what: str) -> None:
    """Print and write ``verdict`` beside ``out``; refuse a failed fit unless
    ``accept`` (exit 1: nothing but the verdict written)."""
    click.echo("\n".join(verdict.lines()))
    path = verdict.write(out)
    click.echo(f"wrote {path}", err=True)
    if not verdict.passed and not accept:
        failed = ", ".join(c.figure for c in verdict.failed)
        raise RramError(f"the {verdict.fit} failed {len(verdict.failed)} check(s) ({failed}); "
                        f"no {what} written (the verdict is in {path}; --accept writes the "
                        f"{what} anyway)")


#: The ramp rate of I-V files that carry no time column (never assumed: it sets the kinetics).
sweep_rate_option = click.option(
    "--sweep-rate", type=float, default=None, callback=finite, metavar="V/S",
    help="The sweeps' ramp rate (V/s), for files without a time column (required there: "
         "the rate sets the switching kinetics).")


@click.command()
@click.argument("iv_files", nargs=-1, required=True, type=InputPath())
@click.option("--cycle", type=int, default=None,
              help="Cycle to fit [default: the median cycle of the data].")
@click.option("--cycles", "cycle_range", default=None, metavar="A:B",
              help="Choose the median cycle among cycles A..B only.")
@card_option("Initial card [default: the built-in card].")
@click.option("--recipe", "recipe_path", type=InputPath(),
              default=None, help="Recipe JSON [default: rram.fit.recipe.default_recipe].")
@click.option("--compliance", type=float, default=None, callback=finite,
              help="SET compliance (A) [default: the SET sweeps' median peak current].")
@click.option("--set-polarity", type=click.Choice(["auto", "negative", "positive"]),
              default="auto", show_default=True)
@gate_options
@click.option("--voltage-column", default=None, help="Name of the voltage column.")
@click.option("--current-column", default=None, help="Name of the current column.")
@columns_option("time_s,voltage_V,current_uA")
@sweep_rate_option
@click.option("--out", required=True, type=OutputPath(companions=(VERDICT,)),
              help="Fitted card (JSON, with provenance and the fit report); its verdict "
                   "goes beside it (<out>.verdict.json).")
@accept_option("card")
@click.option("--plot", type=OutputPath(), default=None,
              help="Overlay plot of log|I| against V (PNG).")
@holdout_option("the fitted card's errors")
@click.option("--starts", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Screen this many starts spread over the recipe's bounds (plus the "
                   "documented card; the fitted values of --card are not used) and fit "
                   "from the best two: a result that does not depend on the start, at "
                   "about twice the time.")
@click.option("--refit/--no-refit", default=False, show_default=True,
              help="Set the parameters the loop does not identify to their documented "
                   "values and refit the others (kept if the RMS stays within 0.02 dec): "
                   "identified values that depend neither on the start nor on the "
                   "integrator's tolerances, at a slightly higher RMS.")
@command_guard
def fit(iv_files, cycle, cycle_range, card_path, recipe_path, compliance, set_polarity,
        v_gate, reset_gate, transistor, voltage_column, current_column, columns, sweep_rate,
        out, accept, plot, holdout, starts, refit) -> None:
    """Fit the model to a measured DC loop: IV_FILES hold the SET and RESET sweeps
    (one file with whole loops, or one file per polarity)."""
    from ..fit.data import load_iv, sha256_of
    from ..fit.iv import fit_loop
    from ..fit.loop import build_loops, median_cycle, select_loop
    from ..fit.recipe import default_recipe, load_recipe
    from ..fit.report import fitted_card, overlay_plot, save_card, text_report

    if cycle is not None and cycle_range is not None:
        raise InputError("give --cycle or --cycles, not both")
    recipe = load_recipe(recipe_path) if recipe_path else default_recipe()
    curves = [c for f in iv_files for c in load_iv(
        f, voltage=voltage_column, current=current_column, columns=columns,
        sweep_rate=sweep_rate)]
    loops = build_loops(curves, compliance, set_polarity, recipe.icc_reset, v_gate,
                        reset_gate, transistor)
    held: list = []
    if holdout is not None:
        held_cycles = set(holdout.split([lp.cycle for lp in loops])[1])
        held = [lp for lp in loops if lp.cycle in held_cycles]
        loops = [lp for lp in loops if lp.cycle not in held_cycles]
        if cycle is not None and cycle in held_cycles:
            raise InputError(f"--cycle {cycle} is one of the --holdout cycles")
    if cycle is not None:
        loop = select_loop(loops, cycle)
    else:
        span = _cycle_range(cycle_range)
        pool = [lp for lp in loops if span is None or span[0] <= lp.cycle <= span[1]]
        if not pool:
            raise InputError(f"--cycles {cycle_range}: no cycle with both sweeps in range")
        loop = median_cycle(pool)
    limit = (f"compliance {loop.icc_set:.4g} A" if loop.v_gate is None else
             f"1T1R, gate {loop.v_gate:g} V, SET limited to {loop.icc_set:.4g} A")
    click.echo(f"fitting cycle {loop.cycle} ({len(loop.time)} points, SET at "
               f"{'negative' if loop.polarity < 0 else 'positive'} V, {limit})", err=True)
    result = fit_loop(loop, load_card(card_path), recipe, starts=starts, refit=refit,
                      log=lambda s: click.echo(s, err=True))
    reason = result.failed_reason()
    if reason:  # nothing is written: a card that does not describe its data is no card
        click.echo(text_report(result))
        raise RramError(reason)
    card = fitted_card(result, recipe, sha256_of(*iv_files), [Path(f).name for f in iv_files],
                       loop)
    validation = None
    if held:
        from ..fit.holdout import loop_errors, report_lines, summarise

        click.echo(f"validating on {len(held)} held-out cycles ...", err=True)
        training, errors = loop_errors([loop], result.card), loop_errors(held, result.card)
        validation = report_lines(training, errors)
        card = card.with_meta(holdout={
            "rule": holdout.text, "training": summarise(training), "held_out": summarise(errors),
            "cycles": errors.to_dict(orient="records")})
    click.echo(text_report(result))
    if validation:
        click.echo("\n".join(validation))
    from ..fit.verdict import loop_verdict, parameters_on_bounds

    fitted = (list(result.identification["fitted"]) if result.identification
              else list(recipe.parameters))
    verdict = loop_verdict(result.rms_dec, result.v_set, result.v_reset,
                           parameters_on_bounds(result.card, recipe, fitted))
    judged(verdict, out, accept, "card")
    save_card(card.with_meta(verdict=verdict.as_dict()), out)
    click.echo(f"wrote {out} (card {card.digest[:12]})", err=True)
    if plot:
        overlay_plot(loop, result.model_current, plot,
                     f"cycle {loop.cycle}: RMS {result.rms_dec:.3f} dec")
        click.echo(f"wrote {plot}", err=True)


@click.command("fit-variation")
@click.argument("dist_file", type=InputPath())
@columns_option("device,cycle,state,resistance_kohm")
@click.option("--layout", default="long", show_default=True, metavar="long|wide:STATES[:UNIT]",
              help="long: a row per read (device, cycle, state, resistance) or per cycle "
                   "(device, cycle, r_lrs, r_hrs); wide:LRS,HRS[:kohm]: a row per device, "
                   "its values cycle by cycle in that order of states (first column "
                   "'device' or the devices numbered by row).")
@card_option("Fitted card [default: the built-in card].")
@click.option("--devices", type=click.IntRange(20, 100_000), default=None,
              help="Simulated devices per evaluation [default: 200; --nested: 256].")
@click.option("--cycles", type=click.IntRange(1, 100), default=None,
              help="Simulated cycles per device, after one not compared [default: 2; "
                   "--nested: 5].")
@click.option("--refine-devices", type=click.IntRange(0, 100_000), default=None,
              help="Devices of the last matching steps and of the reported figures "
                   "[default: 1000; 0: none]: more than --devices remove the bias a "
                   "small sample's noise leaves in the medians.")
@click.option("--nested", is_flag=True,
              help="Fit D2D and C2C apart (array data: >= 2 devices with >= 2 cycles "
                   "each): D2D σ from the spread of the per-device medians, C2C σ from "
                   "the spread within devices; both kinds in one spec.")
@click.option("--seed", type=click.IntRange(0, None), default=1, show_default=True)
@click.option("--rounds", type=click.IntRange(0, 50), default=8, show_default=True,
              help="Moment-matching steps (each re-probes the sensitivities).")
@click.option("--polish", type=click.IntRange(0, 500), default=10, show_default=True,
              help="Monte Carlo runs of the lmfit polish of all spreads together.")
@click.option("--skip", multiple=True,
              type=click.Choice(["r_lrs_ohm", "r_hrs_ohm", "v_set_V", "v_reset_V"]),
              help="Leave a metric out of the fit (repeatable).")
@click.option("--weight", "weights", multiple=True, metavar="METRIC=W",
              help="Weigh a metric's median and spread mismatch by W > 0 (default 1; "
                   "repeatable), e.g. v_reset_V=0.5.")
@click.option("--scatter", "scatter_path", type=InputPath(),
              default=None, help="Per-cycle fits (rram fit-cycles): start from their spread.")
@click.option("--out", required=True, type=OutputPath(companions=(VERDICT,)),
              help="Variation spec JSON; its verdict goes beside it (<out>.verdict.json).")
@accept_option("spec")
@click.option("--plots", type=OutputFolder(), default=None,
              help="Probit CDF overlays of data and model, and the record against cycle.")
@click.option("--memory/--no-memory", default=True, show_default=True,
              help="When the record drifts, split each C2C carrier into a fast part and a "
                   "slow one with the record's autocorrelation (same distributions, "
                   "drifting device records).")
@click.option("--modes/--no-modes", default=True, show_default=True,
              help="When a resistance is bimodal (a cell in one of two configurations for "
                   "many cycles at a time), fit every carrier's offset in the upper one and "
                   "the length of the CF's path through the layer (l0) there.")
@click.option("--episodes/--no-episodes", default=True, show_default=True,
              help="When the record's SETs fail more often than the fitted spread gives, fit "
                   "SET-failure episodes to its runs of failed SETs (their share and length; "
                   "inside, the SET barrier raised, or the contact where the barrier's range "
                   "cannot fail a SET).")
@holdout_option("the model's median, spread and KS errors")
@command_guard
@protocol_options
def fit_variation_cmd(dist_file, columns, layout, card_path, devices, cycles,
                      refine_devices, nested, seed, rounds, polish, skip, weights,
                      scatter_path, out, accept, plots, memory, modes, episodes, holdout,
                      protocol_choice) -> None:
    """Fit the D2D/C2C spreads so that simulated R_LRS, R_HRS, V_set and V_reset
    distributions match DIST_FILE (device, cycle, state, resistance_ohm[, v_set_V,
    v_reset_V]).

    Each simulated cycle is a DC loop: the card's fitted protocol unless --protocol or
    the flags change it (the spec records the one it was fitted at, which rram mc then
    uses).

    Without --nested the spread of all values is fitted and split between D2D and C2C
    in the proportion of the data's between- and within-device variance; with --nested
    (many devices, many cycles each) the two are fitted apart."""
    from ..fit.data import load_distribution, sha256_of
    from ..fit.drift import drift_lines, drift_plot, drift_stats, slow_parts
    from ..fit.report import overlay_cdfs
    from ..fit.slow import match_slow_shares, memory_lines, record_drift, simulated_record
    from ..fit.variation import (
        choose_carriers,
        fit_variation,
        save_spec,
        target_of,
    )

    parsed = {}
    for item in weights:
        metric, sep, value = item.partition("=")
        try:
            weight = float(value) if sep else math.nan
        except ValueError:
            weight = math.nan
        if not math.isfinite(weight):
            raise InputError(f"--weight {item!r}: expected METRIC=W with W a number")
        parsed[metric.strip()] = weight
    measured = load_distribution(dist_file, columns, layout)
    frame, held = measured, None
    if holdout is not None:
        from ..fit.holdout import split_distribution

        frame, held = split_distribution(measured, holdout)
    target = target_of(frame, skip=tuple(skip), weights=parsed, nested=nested)
    if cycles is None and not nested:
        cycles = 2
    card = load_card(card_path)
    start = None
    if scatter_path:
        from ..fit.cycles import load_scatter, scatter_sigmas

        start = scatter_sigmas(load_scatter(scatter_path))
        click.echo("per-cycle scatter: " + ", ".join(f"{k} {v:.4g}" for k, v in start.items()),
                   err=True)
    drift = drift_stats(measured)
    click.echo("\n".join(drift_lines(drift)), err=True)
    protocol, source = resolve_protocol(card, protocol_choice)
    echo_protocol(protocol, source)
    carriers = choose_carriers(target, card, protocol, seed,
                               log=lambda s: click.echo(s, err=True))
    slow: dict = {}
    if memory and any(s["drifts"] for s in drift.values()):
        # from the training cycles only: the held-out ones stay unseen
        slow = slow_parts(carriers, frame)
    config = None
    if modes and not nested:
        from ..fit.modes import configuration_lines, measured_configurations
        from ..fit.target import metric_rows

        rows = {m: r for m, r in metric_rows(frame).items() if m in target.metrics}
        config = measured_configurations(rows, carriers, slow)
        if config is not None:
            click.echo("\n".join(configuration_lines(config)), err=True)
    result = fit_variation(target, card, devices=devices, cycles=cycles, seed=seed,
                           rounds=rounds, polish_nfev=polish, start_sigma=start,
                           log=lambda s: click.echo(s, err=True), protocol=protocol,
                           carriers=carriers, slow=slow, config=config,
                           refine_devices=refine_devices)
    model_drift = model_record = None
    if slow:
        record = int(measured.groupby("device")["cycle"].nunique().median())
        trained = drift if held is None else drift_stats(frame)
        spec = match_slow_shares(card, result.spec, carriers, trained, protocol, record, seed)
        model_record = simulated_record(card, spec, protocol, record, seed)
        model_drift = record_drift(model_record)
        result = result.with_spec(spec, card)
        parts = {v.parameter: (v.slow, v.memory) for v in spec.of_kind("c2c")}
        click.echo("\n".join(memory_lines(parts, drift, model_drift)), err=True)
    if episodes:
        from ..fit.episodes import episode_lines, fit_episodes

        found = fit_episodes(frame, card, result.spec, protocol, result.failed_sets(), seed,
                             log=lambda s: click.echo(s, err=True))
        if found is not None:
            result = result.with_spec(dataclasses.replace(result.spec, episodes=found), card)
        click.echo("\n".join(episode_lines(frame, found)), err=True)
    validation, lines = None, []
    if held is not None:
        from ..fit.holdout import distribution_errors, distribution_lines

        errors = distribution_errors({"training": target, "held out": target_of(
            held, skip=tuple(skip))}, result.model_frame)
        lines = distribution_lines(errors)
        validation = {"rule": holdout.text, "rows_held_out": len(held),
                      "errors": errors.to_dict(orient="records")}
    click.echo(result.report())
    if lines:
        click.echo("\n".join(lines))
    if plots:  # the diagnosis of a failed fit as of a good one
        for p in (*overlay_cdfs(result, plots), drift_plot(measured, plots,
                                                                 model=model_record)):
            click.echo(f"wrote {p}", err=True)
    from ..fit.verdict import carriers_on_bounds, variation_verdict

    verdict = variation_verdict(result.data_stats, result.model_stats, result.ks(),
                                (result.target.failed_sets, result.failed_sets()),
                                carriers_on_bounds(result.spec, card),
                                (result.target.failed_resets, result.failed_resets()))
    judged(verdict, out, accept, "spec")
    save_spec(result, out, data_sha256=sha256_of(dist_file), card=card, holdout=validation,
              drift=drift, model_drift=model_drift, verdict=verdict.as_dict())
    click.echo(f"wrote {out}", err=True)


@click.command("fit-cycles")
@click.argument("iv_files", nargs=-1, required=True, type=InputPath())
@card_option("The fitted card of the median cycle (rram fit).", required=True)
@click.option("--cycles", "cycle_range", default=None, metavar="A:B",
              help="Only cycles A..B.")
@click.option("--compliance", type=float, default=None, callback=finite,
              help="SET compliance (A) [default: the SET sweeps' median peak current].")
@click.option("--set-polarity", type=click.Choice(["auto", "negative", "positive"]),
              default="auto", show_default=True)
@gate_options
@sweep_rate_option
@click.option("--out", required=True, type=OutputPath(),
              help="CSV: one row per cycle (fitted ea, eh, kth, x0, RMS, error).")
@command_guard
def fit_cycles_cmd(iv_files, card_path, cycle_range, compliance, set_polarity, v_gate,
                   reset_gate, transistor, sweep_rate, out) -> None:
    """Refit every measured loop (ea, eh, kth, x0 from the median-cycle card): the
    cycle-to-cycle scatter of the kinetics, for rram fit-variation --scatter."""
    from ..fit.cycles import fit_cycles, scatter_sigmas
    from ..fit.data import load_iv
    from ..fit.loop import build_loops
    from ..fit.recipe import recipe_of
    from ..io import write_atomic

    card = load_card(card_path)
    recipe = recipe_of(card)  # the per-cycle fits keep the card's bounds
    loops = build_loops([c for f in iv_files for c in load_iv(f, sweep_rate=sweep_rate)],
                        compliance, set_polarity,
                        recipe.icc_reset, v_gate, reset_gate, transistor)
    span = _cycle_range(cycle_range)
    loops = [lp for lp in loops if span is None or span[0] <= lp.cycle <= span[1]]
    if not loops:
        raise InputError(f"--cycles {cycle_range}: no cycle with both sweeps in range")
    table = fit_cycles(loops, card, recipe, log=lambda s: click.echo(s, err=True))
    write_atomic(out, lambda p: table.to_csv(p, index=False))
    ok = table[table["error"] == ""]
    click.echo(f"wrote {out}", err=True)
    if ok.empty:
        raise RramError(f"none of the {len(table)} loops could be fitted (column error of "
                        f"{out} says why)")
    click.echo(f"{len(ok)} of {len(table)} loops fitted; median RMS "
               f"{ok['rms_dec'].median():.3f} dec; C2C scatter: " + ", ".join(
                   f"{k} {v:.4g}" for k, v in scatter_sigmas(table).items()))
