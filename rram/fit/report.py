"""Reports of a fit: the fitted card with provenance, a text report, overlay plots (of
a DC loop, and of a pulse record)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .. import __version__
from ..card import Card
from ..io import write_text_atomic
from .iv import LoopFit
from .loop import MeasuredLoop, protocol_of_loop
from .recipe import Recipe


def fitted_card(fit: LoopFit, recipe: Recipe, data_sha256: str, sources: list[str],
                loop: MeasuredLoop) -> Card:
    """The fitted card, its metadata carrying the provenance and the fit figures."""
    stages = _stage_rows(fit.stages)
    from ..states import with_programmed_states

    # the programmed states of the fitted card, not the default card's (rram.states)
    return with_programmed_states(fit.card).with_meta(provenance={
        "rram_version": __version__, "data_sha256": data_sha256, "data": sources,
        "cycle": loop.cycle, "recipe": json.loads(recipe.to_json())},
        fit={**fit.figures(), "protocol": protocol_of_loop(loop).as_meta(), "stages": stages,
             "identification": fit.identification})


def _stage_rows(stages) -> list[dict]:
    """A fit's stage reports as the card's metadata."""
    return [{"name": s.name, "rms_log10_decades": s.rms_dec, "simulations": s.nfev,
             "seconds": round(s.seconds, 2), "parameters": s.parameters,
             "correlations": s.correlations} for s in stages]


def save_card(card: Card, path: str | Path) -> Path:
    return write_text_atomic(path, _clean(card.to_json()))


def _clean(text: str) -> str:
    # NaN (a standard error lmfit could not estimate) is not JSON: write null
    return text.replace("NaN", "null")


def pulse_card(fit, recipe: Recipe, data_sha256: str, sources: list[str], record) -> Card:
    """The card of a pulse fit (:class:`rram.fit.pulse_fit.PulseFit`), its metadata
    carrying the provenance, the fit figures and the record's protocol: the pulses
    (:meth:`~rram.fit.pulses.PulseRecord.protocol`) and the DC loop equivalent to its
    staircases, which ``rram sweep`` and ``rram mc`` run."""
    stages = _stage_rows(fit.stages)
    return fit.card.with_meta(provenance={
        "rram_version": __version__, "data_sha256": data_sha256, "data": sources,
        "recipe": json.loads(recipe.to_json())},
        fit={**fit.figures(), "pulses": record.protocol(),
             "protocol": record.as_loop(fit.card["polarity"]).as_meta(), "stages": stages,
             "identification": fit.identification})


def pulse_report(fit) -> str:
    """The text report of a pulse fit."""
    lines = [f"RMS log10 error over the reads: {fit.rms_dec:.3f} decades "
             f"({fit.seconds:.1f} s)"]
    for label, key in (("SET at", "v_set_V"), ("RESET at", "v_reset_V")):
        d, m = fit.switching[key]["data"], fit.switching[key]["model"]
        lines.append(f"  {label:8s} data {d:8.4g} V  model {m:8.4g} V ({1e3 * (m - d):+.1f} "
                     "mV)")
    if fit.identification is not None:
        lines += _identification_lines(fit.identification)
    return "\n".join(lines)


def pulse_plot(record, resistance: np.ndarray, sign: float, path: str | Path,
               title: str) -> Path:
    """Each sequence's reads against the pulse amplitude: data (dots) and model
    (lines), one panel for the SET staircases and one for the RESET staircases."""
    from ..plots import _save, plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    for k, idx in enumerate(record.sequences):
        read = idx[np.isfinite(record.resistance[idx])]
        sets = np.sign(record.v_pulse[read]) == sign
        for ax, pick in ((axes[0], sets), (axes[1], ~sets)):
            if pick.sum() < 2:
                continue
            a = np.abs(record.v_pulse[read][pick])
            label = str(record.sequence[idx[0]])
            ax.semilogy(a, record.resistance[read][pick], "o", ms=3, color=f"C{k}",
                        label=label)
            ax.semilogy(a, resistance[read][pick], "-", lw=1.2, color=f"C{k}")
    for ax, name in zip(axes, ("SET pulses", "RESET pulses"), strict=True):
        ax.set(xlabel="|pulse amplitude| (V)", title=name)
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, title="sequence (dots: data)")
    axes[0].set_ylabel("resistance read after the pulse (Ω)")
    fig.suptitle(title)
    return _save(fig, path)


def text_report(fit: LoopFit) -> str:
    lines = [f"RMS log10 error over the loop: {fit.rms_dec:.3f} decades "
             f"({fit.seconds:.1f} s)"]
    for label, (d, m), unit in (("V_set", fit.v_set, "V"), ("V_reset", fit.v_reset, "V"),
                                ("R_LRS", fit.r_lrs, "ohm"), ("R_HRS", fit.r_hrs, "ohm")):
        diff = f"{1e3 * (m - d):+.1f} mV" if unit == "V" else f"{100 * (m / d - 1):+.1f} %"
        lines.append(f"  {label:8s} data {d:11.4g} {unit:3s} model {m:11.4g} {unit:3s} ({diff})")
    if fit.identification is not None:
        lines += _identification_lines(fit.identification)
        return "\n".join(lines)
    final = fit.stages[-1]
    lines.append(f"fitted parameters (stage {final.name}; ± one standard error):")
    seen = {}
    for s in fit.stages:
        seen.update(s.parameters)
    seen.update(final.parameters)
    for name, p in seen.items():
        err = p["stderr"]
        rel = f"± {100 * err / abs(p['value']):.2g} %" if math.isfinite(err) and p["value"] \
            else "± n/a"
        lines.append(f"  {name:8s} {p['value']:12.5g}  {rel}")
    strong = {k: v for k, v in final.correlations.items() if abs(v) >= 0.95}
    if strong:
        lines.append("strongly correlated pairs (|r| >= 0.95): "
                     + ", ".join(f"{k} {v:+.3f}" for k, v in sorted(strong.items())))
    return "\n".join(lines)


def _identification_lines(ident: dict) -> list[str]:
    rules = ident["rules"]
    lines = [f"fitted parameters (identified: relative error <= "
             f"{rules['max_relative_error']:.0%}, |r| <= {rules['max_correlation']}; "
             "± one standard error):"]
    for name, p in ident["fitted"].items():
        lines.append(f"  {name:8s} {p['value']:12.5g}  ± {100 * p['relative_error']:.2g} %")
    if ident["fixed"]:
        lines.append("fixed (not identified by these data):")
        for name, p in ident["fixed"].items():
            lines.append(f"  {name:8s} {p['value']:12.5g}  {p['reason']}")
    if "polish" in ident and "skipped" not in ident["polish"]:
        p = ident["polish"]
        lines.append(f"identified values polished at tolerances /{p['tightening']:g}: RMS "
                     f"{p['rms_dec']:.4f} dec ({p['nfev']} simulations, {p['seconds']} s)")
    strong = {k: v for k, v in ident["correlations"].items() if abs(v) >= 0.9}
    if strong:
        lines.append("correlated fitted pairs (|r| >= 0.9): "
                     + ", ".join(f"{k} {v:+.3f}" for k, v in sorted(strong.items())))
    return lines


def overlay_plot(loop: MeasuredLoop, current: np.ndarray, path: str | Path, title: str,
                 extra: dict[str, np.ndarray] | None = None) -> Path:
    """log|I| against V of the data and the model (and ``extra`` traces)."""
    from ..plots import _save, plt

    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    v = loop.voltage
    ax.semilogy(v, np.abs(loop.current) + 1e-12, ".", ms=3, color="0.3", label="measured")
    ax.semilogy(v, np.abs(current) + 1e-12, "-", lw=1.4, color="C3", label="model (Python)")
    for k, (label, trace) in enumerate((extra or {}).items()):
        ax.semilogy(v, np.abs(trace) + 1e-12, "--", lw=1, color=f"C{k}", label=label)
    ax.set(xlabel="voltage (V)", ylabel="|I| (A)", title=title, ylim=(1e-8, None))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def overlay_cdfs(fit, folder: str | Path) -> list[Path]:
    """Probit CDFs of data and model, one panel per metric, of a
    :class:`rram.fit.variation.VariationFit`."""
    from scipy.stats import norm

    from ..io import output_folder
    from ..metrics import LOG_METRICS
    from ..plots import _save, plt

    metrics = fit.target.metrics
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.6))
    for ax, m in zip(np.atleast_1d(axes), metrics, strict=True):
        for label, x, style in (("measured", fit.target.values[m], "."),
                                ("model", fit.model_frame[m].to_numpy(float), "-")):
            x = np.sort(x[np.isfinite(x)])
            q = norm.ppf((np.arange(1, x.size + 1) - 0.5) / x.size)
            ax.plot(x, q, style, ms=2, label=label)
        if m in LOG_METRICS:
            ax.set_xscale("log")
        ax.set(xlabel=m, ylabel="standard normal quantile")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    return [_save(fig, output_folder(folder) / "variation_cdfs.png")]
