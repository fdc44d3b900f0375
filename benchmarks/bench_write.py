"""Quasi-static array writes: half-select disturb, native engine against ngspice.

    python benchmarks/bench_write.py [--sizes 8 32 64] [--count 100] [--amplitude 1.7]
                                     [--schemes v/2] [--no-spice] [--markdown]

Every cell of an N x N 1R crossbar (default wires) starts in the HRS (a positive
``--amplitude``: SET pulses) or in the LRS (negative: RESET pulses); the cell
(N/2 − 1, N/2) gets ``--count`` pulses of ``--amplitude`` V / 1 µs under each
scheme.  For each case: the native write's time, array solves and relaxation sweeps, the
half-selected cells' resistance changes (smallest, median, largest |R/R0 − 1|), the
unselected cells' largest, and (V/2 and ``--spice``) the same write as an ngspice
transient of the exported deck (OSDI cells) with the worst relative difference of the
half-selected cells' changes.  One process per case, so ``peak_MB`` (``ru_maxrss``)
belongs to it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

import numpy as np
import report

#: The table's columns: a case's figure and its column name (with units).
COLUMNS = {"case": "case", "native_s": "native (s)", "array_solves": "array solves",
           "relaxations": "relaxation sweeps", "selected_R_ohm": "selected R: from, to (Ω)",
           "half_min": "half-selected |R/R0 − 1| min", "half_median": "half-selected median",
           "half_max": "half-selected max", "unselected_max": "unselected |R/R0 − 1| max",
           "ngspice_s": "ngspice (s)", "deck_MB": "deck (MB)",
           "worst_rel_diff": "half-selected changes vs ngspice: worst relative difference",
           "median_rel_diff": "median relative difference", "peak_MB": "peak RSS (MB)"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def case(n: int, count: int, amplitude: float, scheme: str, spice: bool) -> dict:
    from rram.array.cells import pattern_states
    from rram.array.spec import ArraySpec
    from rram.array.write import PulseTrain, write

    spec = ArraySpec("1r", n, n)
    states = pattern_states(np.full((n, n), amplitude < 0))
    cell = (n // 2 - 1, n // 2)
    pulse = PulseTrain(amplitude, 1e-6, count)
    r = write(spec, cell, pulse, scheme, states)
    h = r.half_selected
    rest = ~h
    rest[cell] = False
    d = np.abs(r.change[h])
    out = {"case": f"1r {n}x{n} {scheme} {count} x {amplitude:g} V / 1 us",
           "native_s": r.seconds, "array_solves": r.array_solves,
           "relaxations": r.relaxations, "selected_R_ohm": [float(r.r0[cell]),
                                                            float(r.r[cell])],
           "half_min": float(d.min()), "half_median": float(np.median(d)),
           "half_max": float(d.max()),
           "unselected_max": float(np.abs(r.change[rest]).max()) if rest.any() else 0.0}
    if spice:
        from rram.array.write_spice import ngspice_write

        s = ngspice_write(spec, cell, pulse, scheme, states)
        a, b = r.change[h], s.change[h]
        out.update({"ngspice_s": s.seconds, "deck_MB": s.deck_chars / 1e6,
                    "worst_rel_diff": float(np.max(np.abs(a / b - 1))),
                    "median_rel_diff": float(np.median(np.abs(a / b - 1)))})
    out["peak_MB"] = _peak_mb()
    return out


def _cell(v: object) -> str:
    if isinstance(v, list):
        return " → ".join(f"{x:.4g}" for x in v)
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def markdown(results: list[dict]) -> None:
    """The figures main() prints, as docs/benchmarks/write.md (— where not run)."""
    rows = [[_cell(r[k]) if k in r else "—" for k in COLUMNS] for r in results]
    report.write(__file__, "Quasi-static array writes: half-select disturb",
                 "Pulses on one cell of an N x N 1R crossbar (default wires) under each "
                 "scheme: the native write's cost, the half-selected and unselected cells' "
                 "resistance changes and, for V/2, the same write as an ngspice transient "
                 "(OSDI cells), each case in its own process",
                 [("", list(COLUMNS.values()), rows)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[8, 32, 64])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--amplitude", type=float, default=1.7,
                    help="V; > 0: SET pulses on an all-HRS array, < 0: RESET on all-LRS")
    ap.add_argument("--schemes", nargs="*", default=["v/2", "v/3", "float"])
    ap.add_argument("--no-spice", action="store_true")
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    report.add_option(ap)
    args = ap.parse_args()
    if args.one:
        n, count, scheme, spice = args.one
        print(json.dumps(case(int(n), int(count), args.amplitude, scheme, spice == "1")))
        return
    results = []
    for n in args.sizes:
        for scheme in args.schemes:
            spice = "1" if scheme == "v/2" and not args.no_spice else "0"
            run = subprocess.run([sys.executable, __file__,
                                  f"--amplitude={args.amplitude}", "--one", str(n), str(args.count),
                                  scheme, spice], capture_output=True, text=True)
            if run.returncode:
                print(f"{n}x{n} {scheme}: failed\n{run.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(run.stdout.strip().splitlines()[-1])
            print(json.dumps(r), flush=True)
            results.append(r)
    if args.markdown:
        markdown(results)


if __name__ == "__main__":
    main()
