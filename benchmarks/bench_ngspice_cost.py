"""What a device-loop costs in ngspice: subcircuit against OSDI, and the OSDI model against
the rendering of commit 61f1ca6 (issue 16's baseline) in a many-cell deck.

1. The default DC loop (0 → 2 V → 0 → −2 V → 0 at 1 kV/s through 10 kΩ) per device through
   :func:`rram.spice.simulate_spice`, subcircuit and OSDI build on the same cards
   (within ±1σ of the default variation): device-loops/s and their ratio.  Then the
   default-card deck once per model in ``ngspice -b`` with ``.options acct``: Newton
   iterations, time points, load time per iteration; also the subcircuit and deck of the
   baseline commit (its own default card).
2. ``--cells`` cells (default 100) in one OSDI deck, each behind its own 10 kΩ from one
   source: the current Verilog-A against ``git show 61f1ca6:netlists/veriloga/rram.va``
   and against itself built without its SET-runaway step hint (``-D RRAM_NO_BOUND_STEP``),
   both at their own default cards with the variation offsets (dea, deh, dei, kw, fw)
   drawn per cell from the current default variation, runs alternating ``--repeats``
   times: device-loops/s (median), Newton iterations, load time per iteration.

The VM is shared and noisy: read the ratios, measured side by side in one run.

    python benchmarks/bench_ngspice_cost.py [--devices 4] [--cells 100] [--repeats 3]
                                            [--markdown]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

import report
from ngspice_batch import batch

BASELINE = "61f1ca6"
OPTIONS = ".options method=gear reltol=0.0001 acct"
LOOP_PWL = "PWL(0.0 0.0 0.002 2.0 0.004 0.0 0.006 -2.0 0.008 0.0)"
ACCT = {"iterations": r"Transient iterations = (\d+)",
        "timepoints": r"Transient timepoints = (\d+)",
        "analysis_s": r"Transient analysis time = ([\d.eE+-]+)",
        "load_s": r"Transient load time = ([\d.eE+-]+)"}


def run_deck(text: str, workdir: Path) -> dict[str, float]:
    """``ngspice -b`` on ``text``: its accounting, and the wall time."""
    out, wall = batch(text, workdir)
    if "too small" in out or "rror" in out.replace("Error estimate", ""):
        raise RuntimeError(f"ngspice failed:\n{out[-2000:]}")
    stats = {k: float(re.search(p, out).group(1)) for k, p in ACCT.items()}
    stats["wall_s"] = wall
    return stats


def osdi_deck(osdi: Path, cells: list[dict[str, float]]) -> str:
    lines = ["* OSDI cost deck", OPTIONS + " klu num_threads=1", ".control",
             f"pre_osdi {osdi}", "set num_threads=1", ".endc", f"Vbl bl 0 {LOOP_PWL}",
             ".model rrmod rram"]
    for i, inst in enumerate(cells):
        words = " ".join(f"{k}={v:.6g}" for k, v in inst.items())
        lines += [f"Rs{i} bl mid{i} 1e4", f"N{i} mid{i} 0 rrmod {words}"]
    lines += [".tran 4e-05 0.008 0 4e-05", ".print tran v(mid0)", ".end"]
    return "\n".join(lines) + "\n"


def per_device(n: int) -> list[report.Table]:
    from rram.engine.stimulus import dc_loops
    from rram.spice import simulate_spice
    from rram.variation import corner_cards, default_variation

    cards = corner_cards(default_variation(), n, seed=7, width=1.0)
    st = dc_loops(2.0, -2.0, 1e3)
    rates, rows = {}, []
    for model in ("osdi", "subckt"):
        simulate_spice("resistor", st, cards=cards[:1], circuit_params={"rs": 10e3},
                       model=model)  # warm-up: render, compile, load
        t0 = time.perf_counter()
        res = simulate_spice("resistor", st, cards=cards, circuit_params={"rs": 10e3},
                             model=model)
        rates[model] = n / (time.perf_counter() - t0)
        print(f"  {model:7s} {rates[model]:8.2f} device-loops/s  failed "
              f"{len(res.failures())}  retries {int(res.meta['retries'].sum())}", flush=True)
        rows.append([model, f"{rates[model]:.2f}", str(len(res.failures())),
                     str(int(res.meta["retries"].sum()))])
    ratio = rates["osdi"] / rates["subckt"]
    print(f"  subckt/osdi time per loop: {ratio:.1f}x")
    return [(f"The default DC loop, {n} devices, one deck each (simulate_spice)",
             ["model", "device-loops/s", "failed", "retries"], rows),
            ("", ["subckt/osdi time per loop (×)"], [[f"{ratio:.1f}"]])]


def default_decks(workdir: Path) -> list[report.Table]:
    from rram.card import default_card
    from rram.spice import decks, models
    from rram.spice.testbench import ModelRef

    model = default_card().model
    refs = {"osdi": ModelRef("osdi", str(models.osdi_module(model))),
            "subckt": ModelRef("subckt", str(models.subckt_library(model)))}
    texts = {name: decks.build("dc-loop", model=ref).render() for name, ref in refs.items()}
    # the subcircuit as the baseline rendered it (its own card, the same loop)
    old = workdir / BASELINE
    (old / "ngspice").mkdir(parents=True, exist_ok=True)
    library = old / "ngspice" / "rram.lib"
    library.write_text(report.committed(BASELINE, "netlists/ngspice/rram.lib"))
    texts[f"subckt@{BASELINE}"] = report.committed(
        BASELINE, "netlists/testbenches/dc-loop.cir").replace("../ngspice/rram.lib", str(library))
    rows = []
    for name, text in texts.items():
        text = re.sub(r"^\.options (.*)$", r".options \1 acct", text, flags=re.M)
        text = re.sub(r"^\.save .*$", ".print tran v(te)", text, flags=re.M)
        text = re.sub(r"^\.print tran v\(bl\).*$", "", text, flags=re.M)
        s = run_deck(text, workdir)
        per_iteration = s["load_s"] / s["iterations"] * 1e6
        print(f"  {name:15s} {s['iterations']:6.0f} Newton iterations, {s['timepoints']:4.0f} "
              f"time points, {s['analysis_s']:6.3f} s, load {per_iteration:6.1f} us/iteration",
              flush=True)
        rows.append([name, f"{s['iterations']:.0f}", f"{s['timepoints']:.0f}",
                     f"{s['analysis_s']:.3f}", f"{per_iteration:.1f}"])
    return [("The default DC-loop deck, default card (ngspice -b, .options acct)",
             ["deck", "Newton iterations", "time points", "analysis (s)",
              "load per iteration (µs)"], rows)]


def many_cells(n: int, repeats: int, workdir: Path) -> list[report.Table]:
    from rram.card import default_card
    from rram.spice import models
    from rram.variation import corner_cards, default_variation

    old_va = workdir / f"rram_{BASELINE}.va"
    old_va.write_text(report.committed(BASELINE, "netlists/veriloga/rram.va"))
    from rram.printers.veriloga_printer import NO_BOUND_STEP

    # "no hint": today's module built without its SET-runaway step hint
    model = default_card().model
    builds = {BASELINE: models.compile_osdi(old_va),
              "no hint": models.compile_osdi(models.veriloga_source(model), (NO_BOUND_STEP,)),
              "current": models.osdi_module(model)}
    offsets = ("dea", "deh", "dei", "kw", "fw")
    cards = corner_cards(default_variation(), n, seed=7, width=1.0)
    cells = [{k: c[k] for k in offsets} for c in cards]
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in builds}
    for _ in range(repeats):
        for name, osdi in builds.items():
            runs[name].append(run_deck(osdi_deck(osdi, cells), workdir))
    rate, rows = {}, []
    for name, rs in runs.items():
        rate[name] = n / statistics.median(r["wall_s"] for r in rs)
        s = rs[0]
        print(f"  {name:8s} {rate[name]:8.1f} device-loops/s  {s['iterations']:6.0f} Newton "
              f"iterations, {s['timepoints']:5.0f} time points, load "
              f"{s['load_s'] / s['iterations'] * 1e6:7.1f} us/iteration", flush=True)
        rows.append([name, f"{rate[name]:.1f}", f"{s['iterations']:.0f}",
                     f"{s['timepoints']:.0f}", f"{s['load_s'] / s['iterations'] * 1e6:.1f}"])
    ratios = [rate["current"] / rate[BASELINE], rate["current"] / rate["no hint"]]
    print(f"  current/{BASELINE}: {ratios[0]:.2f}x device-loops/s; "
          f"current/no hint: {ratios[1]:.2f}x")
    return [(f"{n} cells in one OSDI deck (median of {repeats} runs)",
             ["build", "device-loops/s", "Newton iterations", "time points",
              "load per iteration (µs)"], rows),
            ("", [f"current/{BASELINE} device-loops/s (×)", "current/no hint (×)"],
             [[f"{r:.2f}" for r in ratios]])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--cells", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    report.add_option(ap)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".spiceinit").write_text("set num_threads=1\n")
        print(f"default DC loop, {args.devices} devices, one deck each (simulate_spice):")
        tables = per_device(args.devices)
        print("default DC-loop deck, default card (ngspice -b, .options acct):")
        tables += default_decks(Path(tmp))
        print(f"{args.cells}-cell OSDI deck:")
        tables += many_cells(args.cells, args.repeats, Path(tmp))
    if args.markdown:
        report.write(__file__, "What a device-loop costs in ngspice",
                     "The subcircuit against the OSDI build per device and in ngspice's own "
                     f"accounting, and the OSDI model against {BASELINE}'s rendering and "
                     "against itself without its SET-runaway step hint in a many-cell deck",
                     tables)


if __name__ == "__main__":
    main()
