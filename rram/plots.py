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


def lrs_vs_compliance(p: Phenomenon, path: str | Path) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    icc = np.array(p.figures["compliance_A"])
    ax.loglog(1e6 * icc, p.figures["r_lrs_ohm"], "o-")
    ax.set(xlabel="SET compliance (µA)", ylabel="R_LRS at +0.1 V (Ω)",
           title=f"LRS set by compliance (slope {p.figures['log_slope']:.2f})")
    ax.grid(True, which="both", alpha=0.3)
    return _save(fig, path)


def hrs_vs_reset_voltage(p: Phenomenon, path: str | Path) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.semilogy(np.abs(p.figures["v_reset_V"]), p.figures["r_hrs_ohm"], "o-")
    ax.set(xlabel="|RESET maximum voltage| (V)", ylabel="R_HRS at +0.1 V (Ω)",
           title=f"HRS set by RESET voltage ({p.figures['ratio']:.0f}x)")
    ax.grid(True, which="both", alpha=0.3)
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
