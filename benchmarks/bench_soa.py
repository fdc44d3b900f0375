"""The lockstep SoA engine against the per-device engine, side by side in one run.

One default DC loop per device (compliance circuit, 0 → 2 V → 0 → −2 V → 0 at 1 kV/s,
100 µA, default card), ``record=False`` as a Monte Carlo study runs it, for each N of
``--sizes``: device-loops per second of both engines, their ratio (what holds on a noisy
shared machine), step attempts and evaluations per loop, and the process' peak memory.

    python benchmarks/bench_soa.py [--sizes 1000 10000] [--repeat 1] [--block 32]

Issue #16 asks for ≥ 10,000 loops/s at N = 10⁴..10⁶ on 2 cores and ≥ 8x the old engine.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--block", type=int, default=32)
    args = ap.parse_args()
    import numba

    from rram.engine.run import Options, simulate
    from rram.engine.stimulus import dc_loops
    from rram.status import Stat

    stim = dc_loops(v_step=0.01)
    engines = {"device": Options(), "soa": Options(engine="soa", block=args.block)}
    for opts in engines.values():  # compile (or load the cache) before timing
        simulate("compliance", stim, n_devices=2, record=False, options=opts)
    print(f"{numba.get_num_threads()} threads")
    print(f"{'N':>8} {'engine':>7} {'seconds':>8} {'loops/s':>8} {'attempts':>8} "
          f"{'Newton':>7} {'ok':>6}")
    for n in args.sizes:
        rate = {}
        for name, opts in engines.items():
            best, res = np.inf, None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res = simulate("compliance", stim, n_devices=n, record=False, options=opts)
                best = min(best, time.perf_counter() - t0)
            rate[name] = n / best
            st = res.stats
            attempts = float((st[:, Stat.STEPS] + st[:, Stat.REJECTED]).mean())
            print(f"{n:>8} {name:>7} {best:8.2f} {rate[name]:8.0f} {attempts:8.0f} "
                  f"{st[:, Stat.NEWTON].mean():7.0f} {int((res.status == 0).sum()):>6}")
        print(f"{'':>8} ratio soa/device: {rate['soa'] / rate['device']:.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
