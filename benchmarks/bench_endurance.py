"""Endurance over 1000 cycles: failed SETs, failure runs and drift of the medians.

    python benchmarks/bench_endurance.py [--devices 20] [--cycles 1000] [--markdown]

Runs the Python Monte Carlo (each SET and RESET its own run, the state carried over) for
the default card with the default variation spec, and for the fitted TU Darmstadt card
with its fitted spec under the measured protocol (the device itself cycled 1000 times
with 1.4 % failed SETs).  Prints, per study: the share of cycles that failed to SET (the
resistance fell less than 2x), the longest run of consecutive failures of any device,
the medians of R_LRS and R_HRS per block of 100 cycles, and the throughput.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import report

from rram.card import default_card, load_card
from rram.fit.variation import protocol_of
from rram.mc import MonteCarlo, run_devices
from rram.variation import default_variation, load_variation

FIT = Path(__file__).resolve().parents[1] / "fitting" / "results"


def longest_run(failed: np.ndarray) -> int:
    best = run = 0
    for f in failed:
        run = run + 1 if f else 0
        best = max(best, run)
    return best


def study(name: str, mc: MonteCarlo) -> tuple[list[str], list[list[str]]]:
    """Run and print one study; its summary row and its rows per block of cycles."""
    t0 = time.perf_counter()
    df = run_devices(mc, range(mc.devices))
    seconds = time.perf_counter() - t0
    failed = df["reason"].astype(str).str.contains("no_set") | ~df["converged"]
    runs = [longest_run(g.sort_values("cycle")["f"].to_numpy())
            for _, g in df.assign(f=failed).groupby("device")]
    print(f"\n{name}: {mc.devices} devices x {mc.cycles} cycles, {seconds:.0f} s "
          f"({len(df) / seconds:.0f} device-cycles/s), {int((~df['converged']).sum())} "
          "not converged")
    print(f"  failed SETs: {100 * failed.mean():.2f} % of cycles; longest run of "
          f"consecutive failures: {max(runs)}")
    print("  cycles      median R_LRS (ohm)  median R_HRS (ohm)  failed SETs")
    summary = [name, str(mc.devices), str(mc.cycles), f"{seconds:.0f}",
               f"{len(df) / seconds:.0f}", str(int((~df["converged"]).sum())),
               f"{100 * failed.mean():.2f}", str(max(runs))]
    blocks = []
    block = max(1, mc.cycles // 10)
    for a in range(0, mc.cycles, block):
        sel = (df["cycle"] >= a) & (df["cycle"] < a + block)
        ok = sel & df["converged"]
        r_lrs, r_hrs = df.loc[ok, "r_lrs_ohm"].median(), df.loc[ok, "r_hrs_ohm"].median()
        print(f"  {a:4d}-{a + block - 1:<4d}  {r_lrs:18.4g}  "
              f"{r_hrs:18.4g}  {100 * failed[sel].mean():9.2f} %")
        blocks.append([f"{a}–{a + block - 1}", f"{r_lrs:.4g}", f"{r_hrs:.4g}",
                       f"{100 * failed[sel].mean():.2f}"])
    return summary, blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=20)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    report.add_option(ap)
    args = ap.parse_args()
    card = load_card(FIT / "tud_H16248L_M12.card.json")
    studies = {
        "default card, default variation":
            MonteCarlo(card=default_card(), spec=default_variation(), devices=args.devices,
                       cycles=args.cycles, seed=args.seed),
        "fitted TUD card and spec, measured protocol":
            MonteCarlo(card=card, spec=load_variation(FIT / "tud_H16248L_M12.variation.json"),
                       devices=args.devices, cycles=args.cycles, seed=args.seed,
                       protocol=protocol_of(card))}
    results = {name: study(name, mc) for name, mc in studies.items()}
    if args.markdown:
        columns = ["study", "devices", "cycles", "time (s)", "device-cycles/s",
                   "not converged", "failed SETs (% of cycles)",
                   "longest run of failed SETs (cycles)"]
        blocks = ["cycles", "median R_LRS (Ω)", "median R_HRS (Ω)", "failed SETs (%)"]
        report.write(__file__, "Endurance: failed SETs and drift over cycles",
                     "The Python Monte Carlo (each SET and RESET its own run, the state "
                     "carried over) of the default card and variation and of the fitted TUD "
                     "card and spec under its measured protocol; a SET fails when the "
                     "resistance falls less than 2x",
                     [("", columns, [summary for summary, _ in results.values()]),
                      *((name, blocks, rows) for name, (_, rows) in results.items())])


if __name__ == "__main__":
    main()
