"""Wear-out in the three renderings over 1000 pulsed cycles: the Python engine, the
Verilog-A module (OSDI in ngspice) and the ngspice subcircuit, side by side in one run.

    python benchmarks/bench_wear_renderings.py [--cycles 1000] [--chunks 10]
        [--workers 2] [--engines veriloga,ngspice] [--markdown]

One 1T1R cell of the default card with the wear block (``kwear`` 3e6 /m: its window
closes near cycle 360) is pulsed every cycle (rram.engine.stimulus.PulseCycle).  The
Python engine runs all cycles in one transient, the reference.  Each ngspice rendering
runs them in ``chunks`` decks of consecutive cycles, each deck starting from the
reference's state at its first cycle (gap, width and wear after the RESET before it),
in ``workers`` processes: a subcircuit cycle costs seconds.  Prints, per rendering, the
largest deviation from the reference of the wear after every RESET (relative) and of
the RESET's gap (in units of the fresh gap), the cycle where the window closed
(rram.mc.endurance.failure_of: R_HRS/R_LRS below CLOSED_WINDOW) and the time.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pandas as pd
import report

from rram.card import Card
from rram.mc.endurance import cycled_in_one_run, failure_of
from rram.model import wearing_model

KWEAR = 3e6
#: The fresh LRS a cycled cell starts from (as tests/test_wear.py).
START = {"x0": 0.0, "w0": 5.7e-9}


def card() -> Card:
    return Card.of(wearing_model(), {"kwear": KWEAR, **START}, name="worn")


def run(engine: str, start: dict[str, float], cycles: int) -> pd.DataFrame:
    return cycled_in_one_run(card().replace(**start), cycles, engine)


def closed_at(table: pd.DataFrame) -> str:
    cycle, mode = failure_of(table)
    return f"{cycle:.0f} ({mode})" if np.isfinite(cycle) else "open"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engines", default="veriloga,ngspice")
    report.add_option(ap)
    args = ap.parse_args()
    t0 = time.perf_counter()
    ref = run("python", START, args.cycles)
    rows = [["python engine", "reference", "reference", closed_at(ref),
             f"{time.perf_counter() - t0:.1f}"]]
    print(" | ".join(rows[0]), flush=True)
    bounds = np.linspace(0, args.cycles, args.chunks + 1).astype(int)
    for engine in args.engines.split(","):
        starts = [START if a == 0 else {"x0": ref["gap_hrs_nm"][a - 1] * 1e-9,
                                        "w0": ref["width_hrs_nm"][a - 1] * 1e-9,
                                        "wear0": float(ref["wear"][a - 1])}
                  for a in bounds[:-1]]
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool:
            parts = list(pool.map(run, [engine] * args.chunks, starts,
                                  np.diff(bounds).tolist()))
        seconds = time.perf_counter() - t0
        for a, part in zip(bounds[:-1], parts, strict=True):
            part["cycle"] += a
        got = pd.concat(parts, ignore_index=True)
        wear = np.max(np.abs(got["wear"] - ref["wear"]) / np.maximum(ref["wear"], 1e-3))
        gap = np.max(np.abs(got["gap_hrs_nm"] - ref["gap_hrs_nm"])) / ref["gap_hrs_nm"][0]
        row = [engine, f"{wear:.2%}", f"{gap:.2%}", closed_at(got), f"{seconds:.1f}"]
        print(" | ".join(row), flush=True)
        rows.append(row)
    if args.markdown:
        columns = ["rendering", "wear after each RESET, largest deviation",
                   "RESET gap, largest deviation / fresh gap", "window closed at cycle",
                   "time (s)"]
        report.write(__file__, "Wear-out in the three renderings",
                     f"{args.cycles} pulsed cycles of one 1T1R cell (kwear {KWEAR:g} /m) in "
                     f"the Python engine, and in ngspice in {args.chunks} decks of "
                     f"consecutive cycles each started from the Python engine's state "
                     f"({args.workers} processes)", [("", columns, rows)])


if __name__ == "__main__":
    main()
