"""Statistics and plots of a Monte Carlo table (one row per device and cycle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import output_folder, write_atomic
from ..metrics import LINEAR_METRICS, LOG_METRICS, NO_RESET, NO_SET, did_not_switch


def load_table(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".csv":
        return pd.read_csv(path, keep_default_na=True)
    raise InputError(f"{path}: expected a .parquet or .csv Monte Carlo table")


def check_outcome(info) -> str | None:
    """Why a finished run (:class:`~rram.mc.backend.RunInfo`) must not count as a
    success, or ``None``: every device-cycle failed to converge (a study of nothing)."""
    if info.rows > 0 and info.failed_rows >= info.rows:
        return (f"all {info.rows} device-cycles failed to converge; {info.out} holds "
                "their errors (column error)")
    return None


def switching_failures(frame: pd.DataFrame) -> dict[str, int]:
    """Converged device-cycles whose SET or RESET did not switch (the ``reason``
    column, :func:`rram.metrics.switching_rule`), and the converged rows counted."""
    ok = frame[frame["converged"].astype(bool)] if "converged" in frame else frame
    return {"rows": len(ok), NO_SET: int(did_not_switch(ok["reason"], NO_SET).sum()),
            NO_RESET: int(did_not_switch(ok["reason"], NO_RESET).sum())}


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median, ln-σ (resistances) or σ (voltages), and the count, of converged rows;
    plus the rank correlations between the four metrics."""
    ok = frame[frame["converged"].astype(bool)]
    rows = {}
    for col in LOG_METRICS:
        x = ok[col].to_numpy(float)
        x = x[np.isfinite(x) & (x > 0)]
        rows[col] = {"median": np.median(x) if x.size else np.nan,
                     "ln_sigma": np.std(np.log(x), ddof=1) if x.size > 1 else np.nan,
                     "sigma": np.nan, "n": x.size}
    for col in LINEAR_METRICS:
        x = ok[col].to_numpy(float)
        x = x[np.isfinite(x)]
        rows[col] = {"median": np.median(x) if x.size else np.nan, "ln_sigma": np.nan,
                     "sigma": np.std(x, ddof=1) if x.size > 1 else np.nan, "n": x.size}
    table = pd.DataFrame(rows).T
    corr = ok[list(LOG_METRICS + LINEAR_METRICS)].corr(method="spearman")
    return pd.concat([table, corr.add_prefix("rho_")], axis=1)


def _probit(ax, values, label):
    from scipy.stats import norm

    x = np.sort(values[np.isfinite(values) & (values > 0)])
    if x.size == 0:
        return
    p = (np.arange(1, x.size + 1) - 0.5) / x.size
    ax.plot(x, norm.ppf(p), ".", ms=3, label=label)


def _save(fig, path: Path) -> None:
    write_atomic(path, lambda p: fig.savefig(p, dpi=120, format="png"))


def write_plots(frame: pd.DataFrame, folder: str | Path) -> list[Path]:
    """Probit CDFs of R_LRS and R_HRS, histograms of V_set and V_reset, R versus cycle."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = output_folder(folder)
    ok = frame[frame["converged"].astype(bool)]
    paths = []

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for col, label in (("r_lrs_ohm", "LRS"), ("r_hrs_ohm", "HRS")):
        _probit(ax, ok[col].to_numpy(float), label)
    ax.set_xscale("log")
    ax.set_xlabel("read resistance (Ω)")
    ax.set_ylabel("normal quantile")
    # a fixed corner (CDFs rise left to right, so the lower right is empty): "best"
    # searches every point for a free spot, slow for 10^6 rows
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(folder / "resistance_cdf.png")
    _save(fig, paths[-1])
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, col, label in zip(axes, LINEAR_METRICS, ("V_set (V)", "V_reset (V)"), strict=True):
        x = ok[col].to_numpy(float)
        ax.hist(x[np.isfinite(x)], bins=40)
        ax.set_xlabel(label)
        ax.set_ylabel("count")
    fig.tight_layout()
    paths.append(folder / "switching_voltages.png")
    _save(fig, paths[-1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    by_cycle = ok.groupby("cycle")
    for col, label in (("r_lrs_ohm", "LRS"), ("r_hrs_ohm", "HRS")):
        med = by_cycle[col].median()
        lo, hi = by_cycle[col].quantile(0.1), by_cycle[col].quantile(0.9)
        ax.plot(med.index, med.to_numpy(), label=f"{label} median")
        ax.fill_between(med.index, lo.to_numpy(), hi.to_numpy(), alpha=0.25,
                        label=f"{label} 10-90 %")
    ax.set_yscale("log")
    ax.set_xlabel("cycle")
    ax.set_ylabel("read resistance (Ω)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(folder / "resistance_vs_cycle.png")
    _save(fig, paths[-1])
    plt.close(fig)

    from ..io import write_text_atomic

    paths.append(write_text_atomic(folder / "summary.csv", summary(frame).to_csv()))
    return paths
