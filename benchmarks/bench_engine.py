"""Throughput of the vectorised Python engine: device-loops per second and peak memory.

One full SET/RESET DC loop per device at the default sweep (0 → 2 V → 0 → −2 V → 0 at
1 kV/s, 100 µA compliance, default card), for N = 1, 10³, 10⁴, 10⁵ devices.  Each N runs
in its own process (after a warm-up) so peak memory is that run's own; the engine keeps
only per-segment events (``record=False``), as a Monte Carlo study would.

    python benchmarks/bench_engine.py [--sizes 1 1000 10000 100000] [--repeat 1] [--markdown]
    python benchmarks/bench_engine.py --baseline 61f1ca6 --sizes 10000 --repeat 3

Timing on shared machines is noisy: the best of ``--repeat`` runs is reported.  With
``--baseline COMMIT`` the engine of that commit (its ``rram/`` from ``git archive``, its own
compiled kernels and default card) runs the same loops in the same run, the two
alternating, and the ratio is printed: issue #16 measures the engine against 61f1ca6's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import report


def _child(n: int, repeat: int) -> dict:
    import numba

    import rram
    from rram.engine.run import simulate
    from rram.engine.stimulus import dc_loops

    if (Path(rram.__file__).parent / "metrics.py").exists():
        from rram.metrics import loop_metrics
    else:  # a --baseline from before rram.analysis became rram.metrics
        from rram.analysis import loop_metrics

    stim = dc_loops(v_step=0.01)
    simulate("compliance", stim, n_devices=2, record=False)  # load the compiled engine
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = simulate("compliance", stim, n_devices=n, record=False)
        best = min(best, time.perf_counter() - t0)
    ok = int((res.status == 0).sum())
    t0 = time.perf_counter()
    metrics = loop_metrics(res) if n <= 10_000 else None
    t_metrics = time.perf_counter() - t0
    return {
        "n": n,
        "seconds": best,
        "loops_per_s": n / best,
        "converged": ok,
        "steps_per_loop": float(res.stats[:, 0].mean()),
        "threads": numba.get_num_threads(),
        "metrics_seconds": t_metrics if metrics is not None else None,
        "peak_rss_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _run_child(n: int, repeat: int, pythonpath: str | None = None) -> dict:
    env = os.environ.copy()
    if pythonpath:
        env["PYTHONPATH"] = pythonpath  # the baseline's rram/ ahead of the installed one
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n), "--repeat", str(repeat)],
        check=True, capture_output=True, text=True, env=env,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _row(label: str, r: dict) -> str:
    return (f"{label:>9} {r['n']:>8} {r['seconds']:>9.3f} {r['loops_per_s']:>9.0f} "
            f"{r['steps_per_loop']:>10.0f} {r['peak_rss_MiB']:>9.0f} "
            f"{r['converged']}/{r['n']} ({r['threads']} threads)")


def _cells(r: dict) -> list[str]:
    metrics = r["metrics_seconds"]
    return [r["engine"], str(r["n"]), f"{r['seconds']:.3f}", f"{r['loops_per_s']:.0f}",
            f"{r['steps_per_loop']:.0f}", f"{r['peak_rss_MiB']:.0f}",
            f"{r['converged']}/{r['n']}", str(r["threads"]),
            "—" if metrics is None else f"{metrics:.3f}"]


def _baseline_tree(commit: str, root: Path) -> str:
    """``rram/`` of ``commit`` unpacked under ``root`` (a path for PYTHONPATH)."""
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(["git", "archive", commit, "rram"], cwd=repo, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return str(root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 1000, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--baseline", metavar="COMMIT",
                    help="also run the engine of this commit, alternating with this one")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    report.add_option(ap)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(_child(args.child, args.repeat)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        engines = {"this": None}
        if args.baseline:
            engines[args.baseline] = _baseline_tree(args.baseline, Path(tmp))
        rows, ratios = [], []
        print(f"{'engine':>9} {'N':>8} {'seconds':>9} {'loops/s':>9} {'steps/loop':>10} "
              f"{'peak MiB':>9} ok")
        for n in args.sizes:
            best: dict[str, dict] = {}
            # one run per engine in turn, --repeat rounds: both see the same machine load
            for _ in range(args.repeat if args.baseline else 1):
                for name, path in engines.items():
                    r = _run_child(n, 1 if args.baseline else args.repeat, path)
                    if name not in best or r["seconds"] < best[name]["seconds"]:
                        best[name] = r
            for name, r in best.items():
                rows.append({"engine": name, **r})
                print(_row(name, r), flush=True)
            if args.baseline:
                ratio = best["this"]["loops_per_s"] / best[args.baseline]["loops_per_s"]
                print(f"{'':>9} {n:>8} this/{args.baseline}: {ratio:.2f}x", flush=True)
                ratios.append([str(n), f"{ratio:.2f}"])
        print(json.dumps(rows))
    if args.markdown:
        columns = ["engine", "devices", "time (s)", "loops/s", "steps/loop", "peak RSS (MiB)",
                   "converged", "threads", "loop_metrics (s)"]
        tables = [("", columns, [_cells(r) for r in rows])]
        if ratios:
            tables.append((f"This engine against {args.baseline}",
                           ["devices", f"this/{args.baseline} loops/s (×)"], ratios))
        report.write(__file__, "Python engine throughput",
                     "One SET/RESET DC loop per device (default sweep and card, compliance "
                     f"circuit, record=False), best of {args.repeat} run(s) per size, each "
                     "size in its own process", tables)


if __name__ == "__main__":
    main()
