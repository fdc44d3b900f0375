"""Throughput of the SPICE paths: device-loops per second, side by side in one run.

One SET/RESET DC loop per device (0 → 2 V → 0 → −2 V → 0 at 1 kV/s) through a 10 kΩ
series resistor and on a 1T1R cell, cards drawn within ±1σ of the default variation;
for the subcircuit (B-sources) and the OSDI build, one deck per device ("per sample")
and many cells per deck ("batched"); the OSDI build also in VACASK.  The Python engine
runs the same devices for reference.

    python benchmarks/bench_spice.py [--devices 64] [--subckt-devices 8] [--markdown]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=64)
    ap.add_argument("--subckt-devices", type=int, default=8)
    ap.add_argument("--batches", type=int, nargs="+", default=[8, 32])
    report.add_option(ap)
    args = ap.parse_args()

    from rram.engine.run import simulate
    from rram.engine.stimulus import dc_loops
    from rram.spice import simulate_spice, simulate_vacask
    from rram.variation import corner_cards, default_variation

    benches = {
        "dc-loop": ("resistor", dc_loops(2.0, -2.0, 1e3), {"rs": 10e3}),
        "1t1r": ("1t1r", dc_loops(2.0, -2.0, 1e3, v_gate=1.28), {}),
    }
    print(f"{'bench':8s} {'engine':26s} {'devices':>7s} {'loops/s':>9s} {'failed':>6s}")
    rows = []
    for name, (circuit, st, cp) in benches.items():
        cards = corner_cards(default_variation(), args.devices, seed=7, width=1.0)
        simulate(circuit, st, cards=cards[:2], circuit_params=cp)  # JIT warm-up
        t0 = time.perf_counter()
        res = simulate(circuit, st, cards=cards, circuit_params=cp, record=False)
        rate = len(cards) / (time.perf_counter() - t0)
        print(f"{name:8s} {'python engine':26s} {len(cards):7d} {rate:9.1f} "
              f"{len(res.failures()):6d}")
        rows.append([name, "python engine", str(len(cards)), f"{rate:.1f}",
                     str(len(res.failures()))])
        hosts = (("ngspice osdi", args.devices, partial(simulate_spice, model="osdi")),
                 ("vacask osdi", args.devices, simulate_vacask),
                 ("ngspice subckt", args.subckt_devices,
                  partial(simulate_spice, model="subckt")))
        simulate_vacask(circuit, st, cards=cards[:1], circuit_params=cp)  # compile, load
        for host, n, run in hosts:
            for batch in (1, *args.batches):
                if batch > n:
                    continue
                t0 = time.perf_counter()
                res = run(circuit, st, cards=cards[:n], circuit_params=cp, batch=batch)
                rate = n / (time.perf_counter() - t0)
                label = f"{host} " + ("per sample" if batch == 1 else f"batch {batch}")
                print(f"{name:8s} {label:26s} {n:7d} {rate:9.1f} {len(res.failures()):6d}",
                      flush=True)
                rows.append([name, label, str(n), f"{rate:.1f}", str(len(res.failures()))])
    if args.markdown:
        report.write(__file__, "ngspice throughput",
                     "One SET/RESET DC loop per device (0 → 2 V → 0 → −2 V → 0 at 1 kV/s; "
                     "through 10 kΩ and on a 1T1R cell), cards within ±1σ of the default "
                     "variation, the Python engine beside ngspice's subcircuit and OSDI "
                     "builds and the OSDI build in VACASK, per sample and batched",
                     [("", ["bench", "engine", "devices", "device-loops/s", "failed"], rows)])


if __name__ == "__main__":
    main()
