"""Worst data pattern search and wire checks: time, nonlinear reads, figures.

    python benchmarks/bench_array_worst.py [--worst 16 32 64] [--topologies 1r 1s1r]
                                           [--wires 64 256] [--markdown]

* ``--worst N``: the far corner's worst V/2 background on an N x N array (default card
  and wires; 1R at 0.4 V, 1S1R at 1.4 V), both objectives: margin, the all-LRS margin
  beside it, nonlinear reads and seconds.
* ``--wires N``: an all-LRS read at 0.2 V of an N x N crossbar: the electromigration
  check (worst ratio, flagged share, its time beside the read's) and the self-heated
  read (largest rise, fixed-point iterations, IR drop change, time).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import report


def worst(n: int, topology: str) -> tuple[list[str], list[list[str]]]:
    """The printed lines and the table rows."""
    from rram.array.spec import ArraySpec
    from rram.array.worst import worst_pattern

    spec = ArraySpec(topology, n, n)
    v = 1.4 if topology == "1s1r" else 0.4
    out, rows = [], []
    for objective in ("same", "window"):
        w = worst_pattern(spec, v, objective=objective)
        out.append(f"worst {topology} {n}x{n} {objective}: margin {w.margin:.4g} (all-LRS "
                   f"{w.standard['all-lrs']:.4g}), {w.reads} reads, {w.seconds:.3g} s")
        rows.append([f"{topology} {n}x{n}", objective, f"{w.margin:.4g}",
                     f"{w.standard['all-lrs']:.4g}", str(w.reads), f"{w.seconds:.3g}"])
    return out, rows


def wires(n: int) -> tuple[list[str], list[str], list[str]]:
    """The printed lines, the electromigration row and the self-heating row."""
    from rram.array.cells import pattern_states
    from rram.array.read import read
    from rram.array.spec import ArraySpec
    from rram.array.wires import heated_read, wire_currents

    spec = ArraySpec("1r", n, n)
    states = pattern_states(np.ones((n, n), bool))
    r = read(spec, 0.2, states)
    t0 = time.perf_counter()
    w = wire_currents(spec, r.circuit, r.v_nets)
    t_em = time.perf_counter() - t0
    h = heated_read(spec, 0.2, states)
    grow = h.read.worst_drop / r.worst_drop - 1
    lines = [f"wires 1r {n}x{n}: worst ratio {w.worst_ratio:.3g}, flagged "
             f"{w.flagged.mean():.1%}; check {t_em:.3g} s beside the read's {r.seconds:.3g} s",
             f"heated 1r {n}x{n}: +{h.max_delta_t:.3g} K, {h.iterations} iterations, IR drop "
             f"+{grow:.2%}, {h.read.seconds:.3g} s"]
    return (lines, [f"1r {n}x{n}", f"{w.worst_ratio:.3g}", f"{100 * w.flagged.mean():.1f}",
                    f"{t_em:.3g}", f"{r.seconds:.3g}"],
            [f"1r {n}x{n}", f"{h.max_delta_t:.3g}", str(h.iterations), f"{100 * grow:.2f}",
             f"{h.read.seconds:.3g}"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worst", type=int, nargs="*", default=[16, 32, 64])
    ap.add_argument("--topologies", nargs="*", default=["1r", "1s1r"])
    ap.add_argument("--wires", type=int, nargs="*", default=[64, 256])
    report.add_option(ap)
    args = ap.parse_args()
    from rram.array.read import read
    from rram.array.spec import ArraySpec

    read(ArraySpec("1r", 2, 2), 0.2)  # compile/load the kernels outside the timings
    patterns, em, heated = [], [], []
    for topology in args.topologies:
        for n in args.worst:
            lines, rows = worst(n, topology)
            print("\n".join(lines), flush=True)
            patterns += rows
    for n in args.wires:
        lines, em_row, heated_row = wires(n)
        print("\n".join(lines), flush=True)
        em.append(em_row)
        heated.append(heated_row)
    if args.markdown:
        report.write(__file__, "Worst data pattern search and wire checks", (
            "The far corner's worst V/2 background (default card and wires; 1R at 0.4 V, 1S1R "
            "at 1.4 V) for both objectives, and on an "
            "all-LRS 1R read at 0.2 V the electromigration check and the self-heated read"), [
            ("Worst pattern", ["array", "objective", "margin (of i_on)",
                               "all-LRS margin (of i_on)", "nonlinear reads", "time (s)"],
             patterns),
            ("Electromigration check", ["array", "worst |I| / I_max", "flagged sections (%)",
                                        "check (s)", "read (s)"], em),
            ("Self-heated read", ["array", "largest rise (K)", "fixed-point iterations",
                                  "IR drop change (%)", "time (s)"], heated)])


if __name__ == "__main__":
    main()
