"""The lockstep torch engine beside the compiled Python engine: device-loops per second,
in one run (issue 40).

One full SET/RESET DC loop per device at the default sweep (0 → 2 V → 0 → −2 V → 0 at
1 kV/s, 100 µA compliance), ``record=False`` as a Monte Carlo study runs it, for N lanes:
identical default cards, and cards with the default device-to-device variation (the
lanes then take different steps, and a lockstep round waits for its slowest lane).  The
compiled engine runs its devices in parallel over the machine's cores; the torch engine
runs every lane in one set of tensor operations on ``cpu`` and, where one is present,
on ``cuda`` (the same code).  Both warm up first; the best of ``--repeat`` runs is kept.

    python benchmarks/bench_torch_engine.py [--sizes 1 64 512 2048] [--repeat 1] [--markdown]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import report
import torch

from rram.array.cells import cell_parameters
from rram.array.spec import ArraySpec
from rram.card import CardBatch
from rram.engine.run import simulate
from rram.engine.stimulus import dc_loops
from rram.torch.transient import simulate as torch_simulate
from rram.variation import default_variation


def cards(n: int, varied: bool) -> CardBatch:
    """n default cards, or n cards of the default D2D variation (as an array's cells)."""
    spec = ArraySpec(rows=1, cols=n, variation=default_variation() if varied else None,
                     seed=1)
    return cell_parameters(spec)


def best_rate(run, n: int, repeat: int) -> tuple[float, object]:
    best, res = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = run()
        best = min(best, time.perf_counter() - t0)
    return n / best, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 512, 2048])
    ap.add_argument("--repeat", type=int, default=1)
    report.add_option(ap)
    args = ap.parse_args()
    stim = dc_loops(v_step=0.01)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    simulate("compliance", stim, n_devices=2, record=False)  # load the compiled engine
    for d in devices:
        torch_simulate("compliance", stim, n_devices=2, record=False, device=d)
    rows = []
    for varied in (False, True):
        for n in args.sizes:
            batch = cards(n, varied)
            numba, ref = best_rate(lambda b=batch: simulate(
                "compliance", stim, b, record=False), n, args.repeat)
            row = ["D2D" if varied else "identical", n, f"{numba:.0f}"]
            for d in devices:
                rate, res = best_rate(lambda b=batch, d=d: torch_simulate(
                    "compliance", stim, b, record=False, device=d), n, args.repeat)
                agree = np.nanmax(np.abs(res.events["imax"] / ref.events["imax"] - 1))
                row += [f"{rate:.1f}", f"{numba / rate:.1f}", f"{agree:.1e}"]
            print(" ".join(map(str, row)), flush=True)
            rows.append(row)
    columns = ["cards", "devices", "compiled loops/s"]
    for d in devices:
        columns += [f"torch {d} loops/s", f"compiled / torch {d}", f"peak-current error {d}"]
    if args.markdown:
        report.write(__file__, "The lockstep torch engine beside the compiled engine",
                     "Device-loops per second of one default DC loop per device, the "
                     "compiled Python engine (parallel over the cores) against the torch "
                     "lockstep engine (every device a lane), and the largest relative "
                     "difference of the peak currents of their segments",
                     [("", columns, rows)])


if __name__ == "__main__":
    main()
