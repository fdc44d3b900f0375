"""What ngspice's options cost a many-cell OSDI deck (issue 37): the options the docs
recommend against ngspice's defaults, one at a time.

``--cells`` cells (default 100) on one source, each behind its own load (5 kΩ, ±10 %
drawn per cell, or all equal with ``--identical``), a 4 ms loop 0 → 2 V → 0 → −2 V → 0,
``tmax`` 1 µs, the current OSDI build with ``set num_threads=1``.  Each option set runs
``--repeats`` times, the sets alternating: device-loops/s (median), Newton iterations
and time points (ngspice's ``rusage``), iterations per time point, and the mean cell
resistance read at the end of the SET (R_on) and of the RESET (R_off) against the
default options'; then, on ``--step-cells`` of the cells, how far R_on and R_off move
from ``tmax`` 10 µs to 0.1 µs under each option set: what the options buy.  Last, at
ngspice's defaults, the current module against issue 37's baseline rendering
(``--baseline``, commit 4683b4a) on the same deck with identical and with ±10 % loads,
alternating ``--repeats`` times.  Last, the same deck in VACASK (the same module, its
default options and the ones ``rram.spice.vacask_deck`` runs) beside ngspice's defaults.

The VM is shared and noisy: read the ratios, measured side by side in one run.

    python benchmarks/bench_deck_options.py [--cells 100] [--repeats 3] [--identical]
                                            [--markdown]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from pathlib import Path

import numpy as np
import report
from ngspice_batch import batch

#: The loop's corners (s, V): 0 -> 2 V -> 0 -> -2 V -> 0 in 4 ms.
LOOP = ((0.0, 0.0), (1e-3, 2.0), (2e-3, 0.0), (3e-3, -2.0), (4e-3, 0.0))
PWL = "PWL(" + " ".join(f"{t:g} {v:g}" for t, v in LOOP) + ")"
#: Times (s) at which the source is at +0.2 V after the SET and −0.2 V after the RESET
#: (on the way back to 0): the reads of R_on and R_off.
READS = {"r_on": 1.9e-3, "r_off": 3.9e-3}
SETS = {
    "ngspice defaults": "",
    "klu": "klu",
    "method=gear": "method=gear",
    "reltol=1e-4": "reltol=1e-4",
    "klu method=gear reltol=1e-4": "klu method=gear reltol=1e-4",
}
ACCT = {"iterations": r"Transient iterations = (\d+)",
        "timepoints": r"Transient timepoints = (\d+)",
        "rejected": r"Rejected timepoints = (\d+)"}


def deck(osdi: Path, loads: np.ndarray, options: str, tmax: float = 1e-6) -> str:
    lines = ["* many-cell OSDI deck", f".options num_threads=1 {options}", ".control",
             f"pre_osdi {osdi}", "set num_threads=1", "run",
             *(f"meas tran {name}_{i} find i(vr{i}) at={t}" for i in range(len(loads))
               for name, t in READS.items()),
             "rusage all", ".endc", f"Vbl bl 0 {PWL}", ".model rrmod rram"]
    for i, r in enumerate(loads):
        lines += [f"Rs{i} bl mid{i} {r:.6g}", f"Vr{i} mid{i} c{i} 0", f"N{i} c{i} 0 rrmod"]
    lines += [f".tran {tmax:g} 0.004 0 {tmax:g}", ".end"]
    return "\n".join(lines) + "\n"


def run(text: str, workdir: Path, loads: np.ndarray) -> dict[str, float]:
    out, wall = batch(text, workdir)
    if "too small" in out or "no simulations run" in out:
        raise RuntimeError(f"ngspice failed:\n{out[-2000:]}")
    got = {k: float(re.search(p, out).group(1)) for k, p in ACCT.items()}
    got["wall_s"] = wall
    got["singular"] = out.lower().count("singular matrix")  # warnings, the run goes on
    for name, t in READS.items():
        v = abs(float(np.interp(t, *zip(*LOOP, strict=True))))
        currents = [abs(float(m)) for m in re.findall(rf"{name}_\d+\s*=\s*([-\d.eE+]+)", out)]
        if len(currents) != len(loads):
            raise RuntimeError(f"{name}: {len(currents)} of {len(loads)} reads:\n{out[-2000:]}")
        got[name] = float(np.mean(v / np.array(currents) - loads))  # the cells alone
    return got


def cell_loads(cells: int, identical: bool) -> np.ndarray:
    """Each cell's load (Ω): 5 kΩ, or drawn within ±10 % of it (seed 37)."""
    if identical:
        return np.full(cells, 5e3)
    return 5e3 * (1.0 + 0.1 * np.random.default_rng(37).uniform(-1, 1, cells))


def against_baseline(commit: str, current: Path, cells: int, repeats: int,
                     workdir: Path) -> report.Table:
    """The issue's deck at ngspice's defaults: today's module against ``commit``'s."""
    from rram.spice import models

    va = workdir / f"rram_{commit}.va"
    va.write_text(report.committed(commit, "netlists/veriloga/rram.va"))
    builds = {commit: models.compile_osdi(va), "current": current}
    rows = []
    for kind in ("identical", "±10 % loads"):
        loads = cell_loads(cells, kind == "identical")
        runs: dict[str, list[dict[str, float]]] = {k: [] for k in builds}
        for _ in range(repeats):
            for name, osdi in builds.items():
                runs[name].append(run(deck(osdi, loads, ""), workdir, loads))
        rate = {k: cells / statistics.median(r["wall_s"] for r in rs) for k, rs in runs.items()}
        for name, rs in runs.items():
            s = rs[0]
            row = [kind, name, f"{rate[name]:.1f}", f"{rate[name] / rate[commit]:.2f}",
                   f"{s['iterations']:.0f}", f"{s['timepoints']:.0f}", f"{s['rejected']:.0f}",
                   f"{s['iterations'] / s['timepoints']:.2f}"]
            print("  " + "  ".join(row), flush=True)
            rows.append(row)
    return (f"The same deck at ngspice's defaults, against {commit} (median of {repeats} runs)",
            ["loads", "module", "device-loops/s", f"× {commit}", "Newton iterations",
             "time points", "rejected", "iterations per point"], rows)


def vacask_netlist(osdi: Path, loads: np.ndarray, options: str, tmax: float = 1e-6) -> str:
    """The same deck in VACASK: the module, the loads, the loop; every cell node saved."""
    wave = ", ".join(f"{t!r}, {v!r}" for t, v in LOOP)
    lines = ["many-cell OSDI deck", "ground 0", f'load "{osdi}"', 'load "resistor.osdi"',
             "model vsrc vsource", "model res resistor", "model rrmod rram",
             f'vbl (bl 0) vsrc type="pwl" wave=[{wave}]']
    for i, r in enumerate(loads):
        lines += [f"rs{i} (bl c{i}) res r={float(r)!r}", f"n{i} (c{i} 0) rrmod"]
    saved = " ".join(["v(bl)", *(f"v(c{i})" for i in range(len(loads)))])
    lines += ["control", f"  options {options}".rstrip(), f"  save {saved}",
              f"  analysis tr tran step={tmax!r} stop={LOOP[-1][0]!r} maxstep={tmax!r}",
              "endc", ""]
    return "\n".join(lines)


def run_vacask_deck(text: str, loads: np.ndarray) -> dict[str, float]:
    """Wall time, time points and the cells' mean R_on, R_off of a VACASK deck."""
    import time

    from rram.spice.vacask import run_vacask

    t0 = time.perf_counter()
    wave = run_vacask(text, timeout=3600)["tr"]
    got = {"wall_s": time.perf_counter() - t0, "timepoints": float(wave["time"].size)}
    for name, at in READS.items():
        v_bl = np.interp(at, wave["time"], wave["bl"])
        cells = np.array([np.interp(at, wave["time"], wave[f"c{i}"])
                          for i in range(len(loads))])
        got[name] = float(np.mean(cells / ((v_bl - cells) / loads)))
    return got


#: VACASK's option sets: its defaults, and Gear with SPICE's truncation-error rule at
#: reltol 1e-4 (what ``rram.spice.vacask_deck`` runs).
VACASK_SETS = {"VACASK defaults": "",
               "VACASK gear2 spicelte reltol=1e-4":
                   'tran_method="gear2" tran_spicelte=1 reltol=1e-4'}


def in_vacask(osdi: Path, cells: int, repeats: int, workdir: Path) -> report.Table:
    """The issue's deck in ngspice (its defaults) and in VACASK, the same module."""
    rows = []
    for kind in ("identical", "±10 % loads"):
        loads = cell_loads(cells, kind == "identical")
        runs: dict[str, list[dict[str, float]]] = {"ngspice defaults": [],
                                                   **{k: [] for k in VACASK_SETS}}
        for _ in range(repeats):
            runs["ngspice defaults"].append(run(deck(osdi, loads, ""), workdir, loads))
            for name, options in VACASK_SETS.items():
                runs[name].append(run_vacask_deck(vacask_netlist(osdi, loads, options), loads))
        rate = {k: cells / statistics.median(r["wall_s"] for r in rs) for k, rs in runs.items()}
        ref = runs["ngspice defaults"][0]
        for name, rs in runs.items():
            s = rs[0]
            shifts = [100 * (s[k] / ref[k] - 1) for k in READS]
            row = [kind, name, f"{rate[name]:.1f}",
                   f"{rate[name] / rate['ngspice defaults']:.2f}", f"{s['timepoints']:.0f}",
                   f"{shifts[0]:+.2f}", f"{shifts[1]:+.2f}"]
            print("  " + "  ".join(row), flush=True)
            rows.append(row)
    return (f"The same deck in VACASK (the same module; median of {repeats} runs)",
            ["loads", "simulator", "device-loops/s", "× ngspice", "time points",
             "R_on vs ngspice (%)", "R_off vs ngspice (%)"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--identical", action="store_true", help="every load 5 kΩ")
    ap.add_argument("--baseline", default="4683b4a",
                    help="commit whose rendering the current module runs beside")
    ap.add_argument("--step-cells", type=int, default=10,
                    help="cells of the step-dependence decks (tmax 10 us and 0.1 us)")
    report.add_option(ap)
    args = ap.parse_args()
    from rram.card import default_card
    from rram.spice import models

    osdi = models.osdi_module(default_card().model)
    loads = cell_loads(args.cells, args.identical)
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in SETS}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".spiceinit").write_text("set num_threads=1\n")
        for _ in range(args.repeats):
            for name, options in SETS.items():
                runs[name].append(run(deck(osdi, loads, options), Path(tmp), loads))
    base = runs["ngspice defaults"][0]
    rows = []
    for name, rs in runs.items():
        rate = args.cells / statistics.median(r["wall_s"] for r in rs)
        s = rs[0]
        per_point = s["iterations"] / s["timepoints"]
        shifts = [100 * (s[k] / base[k] - 1) for k in READS]
        print(f"  {name:36s} {rate:7.1f} device-loops/s  {s['singular']:.0f} singular  "
              f"{s['iterations']:6.0f} iterations "
              f"{s['timepoints']:6.0f} points ({per_point:.2f}/point, {s['rejected']:.0f} "
              f"rejected)  R_on {shifts[0]:+.2f} %  R_off {shifts[1]:+.2f} %", flush=True)
        rows.append([name, f"{rate:.1f}", f"{s['singular']:.0f}", f"{s['iterations']:.0f}",
                     f"{s['timepoints']:.0f}",
                     f"{s['rejected']:.0f}", f"{per_point:.2f}", f"{shifts[0]:+.2f}",
                     f"{shifts[1]:+.2f}"])
    kind = "identical" if args.identical else "±10 % loads"
    # what the options buy: the reads' dependence on the step cap, 10 us against 0.1 us
    steps, few = [], loads[:args.step_cells]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".spiceinit").write_text("set num_threads=1\n")
        for name, options in SETS.items():
            try:
                coarse, fine = (run(deck(osdi, few, options, t), Path(tmp), few)
                                for t in (1e-5, 1e-7))
            except RuntimeError as exc:  # a deck that aborts is a finding, not a crash
                found = re.search(r"Timestep too small; time = ([-\d.eE+]+)", str(exc))
                what = f"aborted at {float(found.group(1)) * 1e3:.3g} ms" if found else "failed"
                print(f"  {name:36s} {what} (timestep too small)", flush=True)
                steps.append([name, what, what, "-"])
                continue
            moved = [100 * (coarse[k] / fine[k] - 1) for k in READS]
            warned = int(coarse["singular"] + fine["singular"])
            print(f"  {name:36s} tmax 10 us against 0.1 us: R_on {moved[0]:+.2f} %  "
                  f"R_off {moved[1]:+.2f} %  ({warned} singular-matrix warnings)", flush=True)
            steps.append([name, f"{moved[0]:+.2f}", f"{moved[1]:+.2f}", str(warned)])
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".spiceinit").write_text("set num_threads=1\n")
        versus = against_baseline(args.baseline, osdi, args.cells, args.repeats, Path(tmp))
        hosts = in_vacask(osdi, args.cells, args.repeats, Path(tmp))
    table = (f"{args.cells} cells on one source ({kind}), median of {args.repeats} runs",
             ["options", "device-loops/s", "singular-matrix warnings", "Newton iterations",
              "time points", "rejected",
              "iterations per point", "R_on vs defaults (%)", "R_off vs defaults (%)"], rows)
    step_table = (f"The reads' step dependence, {len(few)} of the cells: tmax 10 µs against "
                  "0.1 µs", ["options", "R_on (%)", "R_off (%)", "singular-matrix warnings"], steps)
    if args.markdown:
        report.write(__file__, "What ngspice's options cost a many-cell OSDI deck",
                     "The recommended options against ngspice's defaults, one at a time, in "
                     "one many-cell deck, and their reads' dependence on the step cap",
                     [table, step_table, versus, hosts])


if __name__ == "__main__":
    main()
