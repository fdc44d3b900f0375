"""Endurance over 1000 cycles: failed SETs, failure runs and drift of the medians.

    python benchmarks/bench_endurance.py [--devices 20] [--cycles 1000]

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


def study(name: str, mc: MonteCarlo) -> None:
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
    block = max(1, mc.cycles // 10)
    for a in range(0, mc.cycles, block):
        sel = (df["cycle"] >= a) & (df["cycle"] < a + block)
        ok = sel & df["converged"]
        print(f"  {a:4d}-{a + block - 1:<4d}  {df.loc[ok, 'r_lrs_ohm'].median():18.4g}  "
              f"{df.loc[ok, 'r_hrs_ohm'].median():18.4g}  {100 * failed[sel].mean():9.2f} %")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=20)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    study("default card, default variation",
          MonteCarlo(card=default_card(), spec=default_variation(), devices=args.devices,
                     cycles=args.cycles, seed=args.seed))
    card = load_card(FIT / "tud_H16248L_M12.card.json")
    study("fitted TUD card and spec, measured protocol",
          MonteCarlo(card=card, spec=load_variation(FIT / "tud_H16248L_M12.variation.json"),
                     devices=args.devices, cycles=args.cycles, seed=args.seed,
                     protocol=protocol_of(card)))


if __name__ == "__main__":
    main()
