"""Monte Carlo throughput: device-cycles per second for each engine, side by side in one run.

Every configuration runs the default study (default card, default variation spec, DC
sweeps through the compliance circuit) through :func:`rram.mc.backend.run_mc`, in a
fresh process, and reports its device-cycles per second and peak resident memory (the
main process, and the largest Dask worker).  The naive baseline runs one PySpice
simulation per sample: one deck per device-cycle, one process, no state carried over.

    python benchmarks/bench_mc.py [--python-devices 1000 10000] [--spice-devices 400]
                                  [--markdown]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import report


def _peak_mb() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def one(engine: str, devices: int, cycles: int, workers: int) -> dict:
    """One configuration, in this process (called through a subprocess)."""
    from rram.mc import MonteCarlo
    from rram.mc.backend import run_mc

    mc = MonteCarlo(devices=devices, cycles=cycles, seed=1, engine=engine)
    if engine == "python":  # JIT warm-up outside the timing
        run_mc(MonteCarlo(devices=2, cycles=1, seed=1), Path(tempfile.mkdtemp()) / "w.parquet",
               workers=1, progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        info = run_mc(mc, Path(tmp) / "mc.parquet", workers=workers, progress=False)
        seconds = time.perf_counter() - t0
    own, children = _peak_mb()
    return {"rate": devices * cycles / seconds, "failed": info.failed_rows,
            "main_mb": own, "worker_mb": children if workers > 1 else 0.0}


def naive(devices: int, tuned: bool = False) -> dict:
    """One PySpice run per sample: the full SET/RESET loop of each device in its own deck,
    at the default deck settings (``tuned``: with the Monte Carlo's SET options)."""
    from rram.card import default_card
    from rram.engine.stimulus import dc_loops
    from rram.mc import MonteCarlo
    from rram.mc.draws import draw
    from rram.mc.run import SPICE_SET_OPTIONS
    from rram.spice import SpiceOptions, simulate_spice

    mc = MonteCarlo(devices=devices, cycles=1, seed=1)
    base = default_card()
    values = draw(mc.spec, base.values, 1, range(devices), 0, "set")
    st = dc_loops(mc.protocol.v_set, mc.protocol.v_reset, mc.protocol.rate)
    options = SpiceOptions(spice_options=SPICE_SET_OPTIONS) if tuned else SpiceOptions()
    t0 = time.perf_counter()
    failed = 0
    for i in range(devices):
        drawn = {p: float(values[p][i]) for p in mc.spec.parameters}
        drawn["x0"] = min(max(drawn.get("x0", base["x0"]), 0.0), base["l0"])  # as run_devices
        card = base.replace(**drawn)
        res = simulate_spice(mc.protocol.circuit, st, cards=[card],
                             circuit_params=mc.protocol.circuit_params, model="osdi",
                             options=options)
        failed += len(res.failures())
    own, _ = _peak_mb()
    return {"rate": devices / (time.perf_counter() - t0), "failed": failed, "main_mb": own,
            "worker_mb": 0.0}


def _spawn(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", *args], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python-devices", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--spice-devices", type=int, default=400)
    ap.add_argument("--subckt-devices", type=int, default=4)
    ap.add_argument("--cycles", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    report.add_option(ap)
    args = ap.parse_args()
    if args.one:
        kind, *rest = args.one
        result = naive(int(rest[0]), kind == "naive-tuned") if kind.startswith("naive") else one(
            kind, int(rest[0]), int(rest[1]), int(rest[2]))
        print(json.dumps(result))
        return

    w = args.workers
    configs = [("python", n, args.cycles, k) for n in args.python_devices for k in (1, w)]
    configs += [("veriloga", args.spice_devices, args.cycles, k) for k in (1, w)]
    configs += [("ngspice", args.subckt_devices, args.cycles, w)]
    print(f"{'engine':28s} {'workers':>7s} {'dev-cycles':>10s} {'per s':>9s} {'failed':>6s} "
          f"{'main MB':>8s} {'worker MB':>9s}", flush=True)
    rates: dict[str, float] = {}
    rows: list[list[str]] = []

    def show(label: str, workers: int, n: int, r: dict) -> None:
        print(f"{label:28s} {workers:7d} {n:10d} {r['rate']:9.1f} {r['failed']:6d} "
              f"{r['main_mb']:8.0f} {r['worker_mb']:9.0f}", flush=True)
        rows.append([label, str(workers), str(n), f"{r['rate']:.1f}", str(r["failed"]),
                     f"{r['main_mb']:.0f}", f"{r['worker_mb']:.0f}"])

    r = _spawn("naive", str(args.spice_devices))
    rates["naive"] = r["rate"]
    show("naive PySpice (OSDI)", 1, args.spice_devices, r)
    r = _spawn("naive-tuned", str(args.spice_devices))
    r_tuned = r["rate"]
    show("naive, Monte Carlo SET deck", 1, args.spice_devices, r)
    for engine, n, cycles, workers in configs:
        r = _spawn(engine, str(n), str(cycles), str(workers))
        label = {"python": "python engine", "veriloga": "ngspice OSDI (per operation)",
                 "ngspice": "ngspice subckt (per operation)"}[engine]
        show(label, workers, n * cycles, r)
        rates[engine] = max(rates.get(engine, 0.0), r["rate"])
    spice = max(rates["veriloga"], rates["ngspice"])
    ratios = [rates["python"] / spice, spice / rates["naive"], spice / r_tuned]
    print(f"\npython / best ngspice: {ratios[0]:.1f}x;  "
          f"best ngspice / naive: {ratios[1]:.2f}x;  "
          f"/ naive with the Monte Carlo SET deck: {ratios[2]:.2f}x")
    if args.markdown:
        columns = ["engine", "workers", "device-cycles", "device-cycles/s", "failed",
                   "main peak (MB)", "largest worker peak (MB)"]
        report.write(__file__, "Monte Carlo throughput",
                     "The default study (default card and variation, DC sweeps through the "
                     "compliance circuit) through rram.mc.backend.run_mc per engine, each "
                     "configuration in a fresh process, beside one PySpice deck per sample",
                     [("", columns, rows),
                      ("Ratios", ["python / best ngspice (×)", "best ngspice / naive (×)",
                                  "best ngspice / naive with the Monte Carlo SET deck (×)"],
                       [[f"{ratios[0]:.1f}", f"{ratios[1]:.2f}", f"{ratios[2]:.2f}"]])])


if __name__ == "__main__":
    main()
