"""Figures for the demo and the reports (matplotlib, no screen needed).

Every function takes results, draws one figure and writes it atomically to ``path``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from .io import write_atomic
from .phenomena import Phenomenon


def _save(fig, path: str | Path) -> Path:
    fig.tight_layout()
    out = write_atomic(path, lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)
    return out


def iv_loops(frame, path: str | Path, title: str = "DC I-V loops") -> Path:
    """log|I| and I against the applied voltage, one line per cycle."""
    fig, (ax_log, ax_lin) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (dev, cyc), g in frame.groupby(["device", "cycle"]):
        label = f"cycle {cyc}" if frame["device"].nunique() == 1 else f"dev {dev} cyc {cyc}"
        ax_log.semilogy(g["v_applied_V"], np.abs(g["current_A"]) + 1e-15, lw=1, label=label)
        ax_lin.plot(g["v_applied_V"], 1e6 * g["current_A"], lw=1, label=label)
    ax_log.set(xlabel="applied voltage (V)", ylabel="|I| (A)", title=title)
    ax_lin.set(xlabel="applied voltage (V)", ylabel="I (µA)", title="linear scale")
    for ax in (ax_log, ax_lin):
        ax.grid(True, which="both", alpha=0.3)
    ax_log.legend(fontsize=8)
    return _save(fig, path)


def states(frame, path: str | Path) -> Path:
    """Gap, width and temperature along the loop, against time."""
    fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    t = 1e3 * frame["time_s"]
    for ax, col, lab in zip(axes, ("gap_nm", "width_nm", "temperature_K"),
                            ("gap x (nm)", "CF width w (nm)", "CF temperature (K)"),
                            strict=True):
        ax.plot(t, frame[col], lw=1)
        ax.set_ylabel(lab)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (ms)")
    return _save(fig, path)


def compliance(lrs: Phenomenon, reset: Phenomenon, path: str | Path) -> Path:
    """R_LRS against the compliance; I_reset/I_cc and the CF temperature at the RESET."""
    fig, (ax_r, ax_i) = plt.subplots(1, 2, figsize=(11, 4))
    icc = np.array(lrs.figures["compliance_A"])
    ax_r.loglog(1e6 * icc, lrs.figures["r_lrs_ohm"], "o-", label="model")
    ax_r.loglog(1e6 * icc, 0.5 / icc, "k:", lw=1, label="0.5 V / I_cc")
    ax_r.set(xlabel="SET compliance (µA)", ylabel="R_LRS at +0.1 V (Ω)",
             title=f"LRS set by compliance (slope {lrs.figures['log_slope']:.2f})")
    ax_r.legend(fontsize=8)
    icc_r = 1e6 * np.array(reset.figures["compliance_A"])
    ax_i.semilogx(icc_r, reset.figures["i_reset_over_icc"], "o-", label="I_reset / I_cc")
    ax_i.set(xlabel="SET compliance (µA)", ylabel="I_reset / I_cc", ylim=(0, 2),
             title="Joule-assisted RESET: I_reset ≈ I_cc")
    ax_t = ax_i.twinx()
    ax_t.semilogx(icc_r, reset.figures["t_at_reset_peak_K"], "s--", color="C3",
                  label="CF temperature at the RESET peak")
    ax_t.set(ylabel="T at the RESET current peak (K)", ylim=(300, 1000))
    ax_i.legend(fontsize=8, loc="lower left")
    ax_t.legend(fontsize=8, loc="lower right")
    for ax in (ax_r, ax_i):
        ax.grid(True, which="both", alpha=0.3)
    return _save(fig, path)


def hrs_vs_reset_voltage(loop: Phenomenon, pulses: Phenomenon, path: str | Path) -> Path:
    """R_HRS and the gap against the RESET amplitude: 1R DC loops and 1T1R pulses."""
    fig, (ax_r, ax_x) = plt.subplots(1, 2, figsize=(11, 4))
    for p, label in ((loop, "1R DC loop, |V_reset,max|"),
                     (pulses, "1T1R pulse, source-line V")):
        v = np.abs(p.figures.get("v_reset_V", p.figures.get("v_source_line_V")))
        ax_r.semilogy(v, p.figures["r_hrs_ohm"], "o-", label=label)
        ax_x.plot(v, p.figures["gap_end_nm"], "o-", label=label)
    ax_r.set(xlabel="RESET amplitude (V)", ylabel="R_HRS at +0.1 V (Ω)",
             title="HRS set by the RESET voltage")
    ax_x.set(xlabel="RESET amplitude (V)", ylabel="gap after the RESET (nm)",
             title="the gap self-limits inside the layer")
    for ax in (ax_r, ax_x):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, path)


def read_immunity(p: Phenomenon, path: str | Path) -> Path:
    """R(t)/R(0) of each state under a constant read or half-select voltage."""
    res = p.data["result"]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for d, label in enumerate(p.figures["cases"]):
        a = res.device_arrays(d)
        t, i = a["time_s"], np.abs(a["current_A"])
        keep = t >= 1e-5
        ax.loglog(t[keep], i[keep][0] / i[keep], lw=1.2, label=label)
    ax.axvline(10 * 365.25 * 86400, color="r", ls="--", lw=1, label="10 years")
    for f in (0.5, 2.0):
        ax.axhline(f, color="k", ls=":", lw=1)
    ax.set(xlabel="time under bias (s)", ylabel="R(t) / R(0)", ylim=(0.2, 5),
           title="Read immunity and half-select disturb")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def endurance(p: Phenomenon, path: str | Path) -> Path:
    """Median and 10–90 % band of R_LRS and R_HRS against the cycle."""
    df = p.data["table"]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for col, label in (("r_lrs_ohm", "R_LRS"), ("r_hrs_ohm", "R_HRS")):
        g = df.groupby("cycle")[col]
        c = g.median().index.to_numpy()
        ax.semilogy(c, g.median(), lw=1.5, label=f"{label} median")
        ax.fill_between(c, g.quantile(0.1), g.quantile(0.9), alpha=0.25,
                        label=f"{label} 10–90 %")
    f = p.figures
    ax.set(xlabel="cycle", ylabel="R at +0.1 V (Ω)",
           title=f"{f['devices']} devices × {f['cycles']} cycles: "
                 f"{100 * f['failed_set_share']:.1f} % failed SETs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def endurance_record(table, failures, path: str | Path, title: str = "endurance",
                     data=None) -> Path:
    """R_LRS and R_HRS against the cycle (log) of each device of an endurance run, each
    device's closure marked; ``data`` (an endurance record's rows) as points."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for k, (_, g) in enumerate(table.groupby("device")):
        first = k == 0
        c = g["cycle"].to_numpy() + 1
        ax.loglog(c, g["r_lrs_ohm"], color="C0", lw=1, alpha=0.7,
                  label="R_LRS" if first else None)
        ax.loglog(c, g["r_hrs_ohm"], color="C3", lw=1, alpha=0.7,
                  label="R_HRS" if first else None)
    for k, f in enumerate(failures.itertuples()):
        if np.isfinite(f.closure_cycle):
            ax.axvline(f.closure_cycle + 1, color="0.5", ls=":", lw=0.8,
                       label="window closed" if k == 0 else None)
    if data is not None:
        ax.loglog(data["cycle"] + 1, data["r_lrs_ohm"], "o", ms=3, color="C0", mfc="none",
                  label="data R_LRS")
        ax.loglog(data["cycle"] + 1, data["r_hrs_ohm"], "o", ms=3, color="C3", mfc="none",
                  label="data R_HRS")
    modes = ", ".join(sorted({m for m in failures["mode"] if m})) or "none"
    ax.set(xlabel="cycle + 1", ylabel="R (Ω)", title=f"{title} (failures: {modes})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def relaxation_record(record, cells, path: str | Path, title: str = "relaxation",
                      most: int = 24) -> Path:
    """Each cell's reads against the time after programming (points) and its drift at the
    fitted card (the cell's hopping share at the card's ``lrel``: lines), at most
    ``most`` cells; ``cells``: the fit's per-cell table (``model_drift_per_decade``)."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for k, row in enumerate(cells.head(most).itertuples()):
        t, r = record.of(row.cell)
        later = t > 0
        t, r = t[later], r[later]
        color = f"C{k % 10}"
        ax.loglog(t, r, "o", ms=3, mfc="none", color=color)
        # through the cell's reads at their mean log-time: the slopes are compared
        lt = np.log10(t)
        line = np.exp(np.mean(np.log(r)) + row.model_drift_per_decade * (lt - lt.mean()))
        ax.loglog(t, line, "-", lw=1, color=color)
    ax.plot([], [], "ko", mfc="none", ms=3, label="data")
    ax.plot([], [], "k-", lw=1, label="fitted card")
    ax.set(xlabel="time after programming (s)", ylabel="R (Ω)", title=title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def overshoot(p: Phenomenon, path: str | Path) -> Path:
    res = p.data["result"]
    fig, (ax_i, ax_w) = plt.subplots(1, 2, figsize=(11, 4))
    icc = p.figures["compliance_A"]
    for d, cd in enumerate(p.figures["cd_F"]):
        a = res.device_arrays(d)
        t = 1e9 * a["time_s"]
        ax_i.plot(t, 1e6 * a["current_A"], lw=1, label=f"C_d = {cd * 1e15:g} fF")
        ax_w.plot(t, a["width_nm"], lw=1)
    ax_i.axhline(1e6 * icc, color="k", ls=":", lw=1, label="transistor limit")
    ax_i.set(xlabel="time (ns)", ylabel="cell current (µA)", title="1T1R SET pulse: overshoot")
    ax_w.set(xlabel="time (ns)", ylabel="CF width (nm)", title="lateral growth")
    ax_i.legend(fontsize=8)
    for ax in (ax_i, ax_w):
        ax.grid(True, alpha=0.3)
    return _save(fig, path)


def read_disturb(p: Phenomenon, path: str | Path) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    v = np.array(p.figures["voltage_V"])
    t = np.array(p.figures["t_half_s"])
    ax.semilogy(v, t, "o-", label="time for R_HRS to halve")
    ax.axhline(10 * 365.25 * 86400, color="r", ls="--", lw=1, label="10 years")
    ax.set(xlabel="read voltage (V)", ylabel="time (s)", title="Read disturb of the HRS")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def array_heat_maps(read, path: str | Path, title: str = "array read",
                    em: np.ndarray | None = None) -> Path:
    """IR drop of the wires and RRAM voltage of every cell of an array read
    (:class:`rram.array.read.ReadResult`), rows down and columns across; with ``em``,
    a third map: the wires' electromigration ratio I/I_max next to each cell
    (:meth:`rram.array.wires.WireCurrents.cell_map`)."""
    panels = [(1e3 * read.line_drop, "wire IR drop (mV)"),
              (read.v_cell, "cell voltage te-be (V)")]
    if em is not None:
        panels.append((em, "wire current / EM limit"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.6))
    ax_drop, ax_v = axes[0], axes[1]
    if em is not None:
        axes[2].set_title(f"{title}: wire EM ratio (worst {np.max(em):.3g})")
    for ax, (data, label) in zip(axes, panels, strict=True):
        im = ax.imshow(data, origin="upper", aspect="auto", cmap="viridis",
                       interpolation="nearest")
        fig.colorbar(im, ax=ax, label=label)
        ax.set(xlabel="column (sensed at the bottom)", ylabel="row (driven from the left)")
    ax_drop.set_title(f"{title}: IR drop")
    ax_v.set_title(f"{title}: cell voltage")
    return _save(fig, path)


def disturb_heat_map(result, path: str | Path, title: str = "array write") -> Path:
    """Resistance change R/R0 − 1 (%) of every cell after a write
    (:class:`rram.array.write.WriteResult`; the selected cell, which switches, masked
    and marked) and the RRAM voltage of every cell on the first pulse, rows down and
    columns across."""
    change = 100 * np.array(result.change, float)
    change[result.cell] = np.nan
    fig, (ax_d, ax_v) = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax, data, label in ((ax_d, change, "resistance change R/R0 - 1 (%)"),
                            (ax_v, result.v_first, "cell voltage on the first pulse (V)")):
        im = ax.imshow(data, origin="upper", aspect="auto", cmap="viridis",
                       interpolation="nearest")
        fig.colorbar(im, ax=ax, label=label)
        ax.plot(result.cell[1], result.cell[0], "rx", ms=10, mew=2)
        ax.set(xlabel="column (sensed at the bottom)", ylabel="row (driven from the left)")
    p = result.pulse
    ax_d.set_title(f"{title}: disturb after {p.count} x {p.amplitude:g} V / {p.width:g} s "
                   f"({result.scheme})", fontsize=9)
    ax_v.set_title(f"{title}: cell voltage (x: selected)", fontsize=9)
    return _save(fig, path)


def vmm_accuracy_plot(acc, study, path: str | Path, title: str = "VMM") -> Path:
    """Each column's relative RMS error against the target product (variation, wires,
    both: :class:`rram.array.accuracy.VmmAccuracy`) and, given a Monte Carlo
    ``study``, the distribution of the relative error over the arrays."""
    panels = 2 if study is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.2), squeeze=False)
    ax = axes[0, 0]
    for name in ("variation", "wires", "both"):
        s = getattr(acc, name)
        ax.plot(100 * s.column_error, label=f"{name} ({100 * s.relative_error:.3g} %)")
    ax.set(xlabel="column (far from the drivers →)", ylabel="column error (% RMS)",
           title=f"{title}: error against the target")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if study is not None:
        ax = axes[0, 1]
        for col, label in (("relative_error", "both"),
                           ("relative_error_after_gain", "both, after gain"),
                           ("variation_relative_error", "variation")):
            x = np.sort(100 * study.frame[col].to_numpy(float))
            ax.plot(x, (np.arange(1, x.size + 1) - 0.5) / x.size, label=label)
        ax.set(xscale="log", xlabel="relative error (%)", ylabel="fraction of arrays",
               title=f"{len(study.frame)} arrays")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, path)
