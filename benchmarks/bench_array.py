"""Array engine speed: the linear read path and the nonlinear read, with peak memory.

    python benchmarks/bench_array.py [--linear 256 512 1024] [--nonlinear 64 128 256]
                                     [--vectors 10] [--spice 32]
                                     [--mc 128 --samples 1000 --workers 2] [--markdown]

* Linear path (1R, every cell a fixed chord conductance, random LRS/HRS pattern): the
  time to assemble, order (nested dissection) and factorise the nodal matrix (SuperLU)
  once, then the time per input vector (solved as one block of ``--vectors`` vectors).
* Nonlinear read (1R and 1S1R, the model's cells, Newton on the array): the total time,
  Newton iterations and the cells' condensation time share.
* ``--spice N``: the same N x N 1R read in ngspice (OSDI cells), side by side.
* ``--mc N``: a Monte Carlo of the VMM accuracy over ``--samples`` N x N 1R arrays (the
  default variation, a random pattern, ``--vectors`` inputs), in ``--workers`` processes.

Each figure is measured in its own process, so the reported peak resident memory
(``ru_maxrss``) belongs to that case.  The first case of a fresh checkout also pays the
one-time numba compilation of the cell kernel (cached afterwards).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import report

#: Each kind of case's table heading, and its figures' column names (with units).
HEADINGS = {"linear": "Linear path (1R, chord conductances)",
            "nonlinear": "Nonlinear read (Newton on the array)",
            "spice": "The same 1R read in ngspice (OSDI cells)",
            "mc": "Monte Carlo of the VMM accuracy"}
COLUMNS = {"case": "case", "nets": "nets", "cells_s": "cells (s)", "build_s": "build (s)",
           "factor_s": "order + factor (s)", "of_which_order_s": "of which order (s)",
           "per_vector_s": "per vector (s)", "seconds": "time (s)", "iterations": "iterations",
           "worst_drop_V": "worst IR drop (V)", "native_s": "native (s)",
           "ngspice_s": "ngspice (s)", "max_rel_diff": "max relative difference",
           "samples": "samples", "workers": "workers", "s_per_array": "per array (s)",
           "rel_err_median": "median relative error",
           "variation_rel_err_median": "median relative error, variation only",
           "peak_MB": "peak RSS (MB)"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def linear(n: int, vectors: int) -> dict:
    from rram.array.build import build
    from rram.array.cells import pattern_states
    from rram.array.read import chord_conductance
    from rram.array.solve import LinearSolver
    from rram.array.spec import ArraySpec

    spec = ArraySpec(rows=n, cols=n)
    states = pattern_states(np.random.default_rng(1).random((n, n)) < 0.5)
    t0 = time.perf_counter()
    g = chord_conductance(spec, states, 0.2)
    t_cells = time.perf_counter() - t0
    t0 = time.perf_counter()
    c = build(spec, 0.0, states)
    t_build = time.perf_counter() - t0
    solver = LinearSolver(c, g)
    volts = np.zeros((len(c.src), vectors))
    volts[:n] = np.random.default_rng(2).uniform(0, 0.2, (n, vectors))
    t0 = time.perf_counter()
    solver.solve(volts)
    t_solve = (time.perf_counter() - t0) / vectors
    return {"case": f"linear 1r {n}x{n}", "nets": c.n_nets, "cells_s": t_cells,
            "build_s": t_build, "factor_s": solver.factor_seconds,
            "of_which_order_s": solver.order_seconds, "per_vector_s": t_solve,
            "peak_MB": _peak_mb()}


def nonlinear(n: int, topology: str) -> dict:
    from rram.array.cells import pattern_states
    from rram.array.read import read
    from rram.array.spec import ArraySpec

    spec = ArraySpec(topology, n, n)
    states = pattern_states(np.random.default_rng(1).random((n, n)) < 0.5)
    v = 1.2 if topology == "1s1r" else 0.2
    read(ArraySpec(topology, 2, 2), v)  # compile/load the kernels outside the timing
    r = read(spec, v, states)
    return {"case": f"nonlinear {topology} {n}x{n}", "seconds": r.seconds,
            "iterations": r.iterations, "worst_drop_V": r.worst_drop, "peak_MB": _peak_mb()}


def spice(n: int) -> dict:
    from rram.array.build import build
    from rram.array.cells import pattern_states
    from rram.array.export import frozen_osdi, render
    from rram.array.solve import operating_point
    from rram.array.spec import ArraySpec
    from rram.card import default_card
    from rram.spice.ngspice import NgspiceSession

    spec = ArraySpec("1r", n, n)
    states = pattern_states(np.random.default_rng(1).random((n, n)) < 0.5)
    c = build(spec, 0.2, states)
    operating_point(build(ArraySpec("1r", 2, 2), 0.2))  # load the kernels
    t0 = time.perf_counter()
    op = operating_point(c)
    t_native = time.perf_counter() - t0
    session = NgspiceSession.get()
    path = frozen_osdi(default_card().model)
    session.load_osdi(path)
    deck = render(c, "osdi", path, in_deck_osdi=False)
    t0 = time.perf_counter()
    vec = session.run(deck).vectors
    t_spice = time.perf_counter() - t0
    out = np.array([vec[f"i(vout{j})"][0] for j in range(n)])
    native = -op.i_source[-n:]
    return {"case": f"ngspice vs native 1r {n}x{n}", "native_s": t_native,
            "ngspice_s": t_spice, "max_rel_diff": float(np.max(np.abs(native / out - 1))),
            "peak_MB": _peak_mb()}


def monte_carlo(n: int, samples: int, vectors: int, workers: int) -> dict:
    from rram.array.accuracy import vmm_monte_carlo
    from rram.array.cells import named_pattern, pattern_states
    from rram.array.spec import ArraySpec, Metal
    from rram.variation import default_variation

    spec = ArraySpec("1r", n, n, row_metal=Metal(rho=1e-7), col_metal=Metal(rho=1e-7),
                     variation=default_variation())
    states = pattern_states(named_pattern("random", (n, n), 1))
    x = np.random.default_rng(0).uniform(0, 0.2, (vectors, n))
    t0 = time.perf_counter()
    study = vmm_monte_carlo(spec, x, samples, 1, states, workers=workers, progress=False)
    seconds = time.perf_counter() - t0
    q = study.summary()
    return {"case": f"vmm-mc {n}x{n}", "samples": samples, "workers": workers,
            "seconds": seconds, "s_per_array": seconds / samples,
            "rel_err_median": float(q.loc["relative_error", "q50"]),
            "variation_rel_err_median": float(q.loc["variation_relative_error", "q50"]),
            "peak_MB": _peak_mb()}


def markdown(results: dict[str, list[dict]]) -> None:
    """The figures main() prints, one table per kind of case, as docs/benchmarks/array.md."""
    tables = [(HEADINGS[kind], [COLUMNS[k] for k in rows[0]],
               [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in r.values()]
                for r in rows])
              for kind, rows in results.items() if rows]
    report.write(__file__, "Array engine speed and peak memory",
                 "The linear read path (assemble, order, factorise once, then per input "
                 "vector), the nonlinear read of 1R and 1S1R arrays, the same read in ngspice "
                 "and a Monte Carlo of the VMM accuracy, each case in its own process",
                 tables)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--linear", type=int, nargs="*", default=[256, 512, 1024])
    ap.add_argument("--nonlinear", type=int, nargs="*", default=[64, 128, 256])
    ap.add_argument("--topologies", nargs="*", default=["1r", "1s1r"])
    ap.add_argument("--vectors", type=int, default=10)
    ap.add_argument("--spice", type=int, nargs="*", default=[32])
    ap.add_argument("--mc", type=int, nargs="*", default=[128])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a child process
    report.add_option(ap)
    args = ap.parse_args()
    if args.case:
        kind, _, rest = args.case.partition(":")
        if kind == "linear":
            out = linear(int(rest), args.vectors)
        elif kind == "spice":
            out = spice(int(rest))
        elif kind == "mc":
            out = monte_carlo(int(rest), args.samples, args.vectors, args.workers)
        else:
            topo, size = rest.split(",")
            out = nonlinear(int(size), topo)
        print(json.dumps(out))
        return
    cases = [f"linear:{n}" for n in args.linear]
    cases += [f"nonlinear:{t},{n}" for t in args.topologies for n in args.nonlinear]
    cases += [f"spice:{n}" for n in args.spice]
    cases += [f"mc:{n}" for n in args.mc]
    results: dict[str, list[dict]] = {kind: [] for kind in HEADINGS}
    for case in cases:
        proc = subprocess.run([sys.executable, __file__, "--case", case, "--vectors",
                               str(args.vectors), "--samples", str(args.samples),
                               "--workers", str(args.workers)], capture_output=True,
                              text=True)
        if proc.returncode != 0:
            print(f"{case}: failed\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in r.items()), flush=True)
        results[case.partition(":")[0]].append(r)
    if args.markdown:
        markdown(results)


if __name__ == "__main__":
    main()
