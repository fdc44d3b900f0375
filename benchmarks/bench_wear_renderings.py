"""Wear-out in the three renderings over 1000 pulsed cycles: the Python engine, the
Verilog-A module (OSDI in ngspice) and the ngspice subcircuit, side by side in one run.

    python benchmarks/bench_wear_renderings.py [--cycles 1000] [--chunks 10]
        [--workers 2] [--engines veriloga,ngspice] [--markdown]

One 1T1R cell of the default card with the wear block (``kwear`` 3e6 /m: its window
closes near cycle 630) is pulsed every cycle (rram.engine.stimulus.PulseCycle).  The
Python engine runs all cycles in one transient, the reference.  Each ngspice rendering
runs them in ``chunks`` decks of consecutive cycles, each deck starting from the
reference's state at its first cycle (gap, width and wear after the RESET before it),
in ``workers`` processes: a subcircuit cycle costs seconds.  Prints, per rendering, the
largest deviation from the reference of the wear after every RESET (relative) and of
the RESET's gap (in units of the fresh gap), the cycle where the window closed (the gap
below 20 % of the fresh one) and the time.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import report

from rram.card import Card
from rram.engine.stimulus import PulseCycle
from rram.experiment import simulate_with
from rram.model import wearing_model

KWEAR = 3e6
#: The fresh LRS a cycled cell starts from (as tests/test_wear.py).
START = {"x0": 0.0, "w0": 5.7e-9}


def card() -> Card:
    return Card.of(wearing_model(), {"kwear": KWEAR, **START}, name="worn")


def ends(engine: str, start: dict[str, float], cycles: int) -> dict[str, np.ndarray]:
    """Wear, gap (nm) and width (nm) after each RESET of ``cycles`` cycles from ``start``."""
    cycle = PulseCycle()
    res = simulate_with(engine, cycle.circuit, cycle.stimulus(cycles),
                        [card().replace(**start)], record=False)
    res.raise_on_failure()
    _, resets = cycle.ends(cycles)
    return {k: res.events[f"{k}_end"][0, resets] for k in ("wear", "gap", "width")}


def closed_at(gap: np.ndarray) -> int:
    below = np.flatnonzero(gap < 0.2 * gap[0])
    return int(below[0]) if below.size else -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engines", default="veriloga,ngspice")
    report.add_option(ap)
    args = ap.parse_args()
    t0 = time.perf_counter()
    ref = ends("python", START, args.cycles)
    rows = [["python engine", "reference", "reference",
             f"{closed_at(ref['gap'])}", f"{time.perf_counter() - t0:.1f}"]]
    print(" | ".join(rows[0]), flush=True)
    bounds = np.linspace(0, args.cycles, args.chunks + 1).astype(int)
    for engine in args.engines.split(","):
        starts = [START if a == 0 else {"x0": ref["gap"][a - 1] * 1e-9,
                                        "w0": ref["width"][a - 1] * 1e-9,
                                        "wear0": float(ref["wear"][a - 1])}
                  for a in bounds[:-1]]
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool:
            parts = list(pool.map(ends, [engine] * args.chunks, starts,
                                  np.diff(bounds).tolist()))
        seconds = time.perf_counter() - t0
        got = {k: np.concatenate([p[k] for p in parts]) for k in ref}
        wear = np.max(np.abs(got["wear"] - ref["wear"]) / np.maximum(ref["wear"], 1e-3))
        gap = np.max(np.abs(got["gap"] - ref["gap"])) / ref["gap"][0]
        row = [engine, f"{wear:.2%}", f"{gap:.2%}", f"{closed_at(got['gap'])}",
               f"{seconds:.1f}"]
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
