"""The main job: every RRAM phenomenon on the default card, written to a folder.

``rram demo --out out`` (and ``make demo``) writes:

* ``loops.csv``: the default DC loops (tidy columns of :data:`rram.engine.run.COLUMNS`);
* ``metrics.csv``: V_set, V_reset, R_LRS, R_HRS per cycle;
* ``phenomena.json`` and ``phenomena.md``: every measured figure and its verdict, with
  provenance (package version, card sha256);
* ``plots/*.png``;
* ``mc/``: a small Monte Carlo of the default variation spec (``mc.csv`` with its
  provenance ``mc.csv.json``, ``plots/`` with the probit CDFs, histograms, R versus cycle
  and ``summary.csv``);
* ``array/``: a 32 x 32 crossbar read (random data, D2D variation, resistive wires):
  ``cells.csv`` and ``heat_maps.png`` (IR drop, cell voltages and the wires' current
  against the electromigration limit).

Everything is made in a temporary folder beside ``out`` and moved into it at the end
(:func:`rram.io.publish`), under a lock on ``out`` (:func:`rram.io.hold_lock`): a failed
or interrupted demo leaves ``out`` as it was, and two demos on one folder never mix.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, phenomena, plots
from .card import Card, default_card
from .errors import InputError
from .io import hold_lock, output_folder, publish, staged_folder, write_atomic, write_text_atomic
from .metrics import loop_metrics
from .resources import MiB, require_disk


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if np.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    if isinstance(x, (np.integer, int)) and not isinstance(x, bool):
        return int(x)
    return x


def _markdown(results: list[phenomena.Phenomenon], prov: dict[str, Any]) -> str:
    lines = ["# RRAM phenomena on the default card", "",
             f"rram {prov['version']}, card sha256 {prov['card_sha256'][:16]}…, "
             f"{prov['seconds']:.1f} s.", ""]
    for p in results:
        lines.append(f"## {p.name.replace('_', ' ')}: {'PASS' if p.passed else 'FAIL'}")
        lines.append("")
        for k, v in p.figures.items():
            if isinstance(v, list):
                v = ", ".join(f"{x:.4g}" if isinstance(x, float) else str(x) for x in v)
            elif isinstance(v, float):
                v = f"{v:.4g}"
            lines.append(f"- {k}: {v}")
        for k, ok in p.checks.items():
            lines.append(f"- [{'x' if ok else ' '}] {k}")
        lines.append("")
    return "\n".join(lines)


#: The demo's Monte Carlo: small enough for a minute, large enough for the CDFs.
MC_DEVICES, MC_CYCLES, MC_SEED = 50, 5, 1
#: What a demo writes (measured: 6.4 MB), with room to spare.
DEMO_BYTES = 20 * MiB


def run_demo(out: str | Path, card: Card | None = None, log=print) -> list[phenomena.Phenomenon]:
    """Every phenomenon of ``card`` into the folder ``out`` (see the module docstring)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"output folder {out} is a file")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise InputError(f"cannot create {out}: its parent folder {parent} does not exist")
    # before the long run: a folder that cannot take it fails at once
    require_disk("the demo", parent, DEMO_BYTES, "free some space or choose another --out")
    lock = parent / f".{out.name}.lock"
    fd = hold_lock(lock, f"--out {out}")
    try:
        with staged_folder(out) as work:
            results = _run(work, card or default_card(), log)
            publish(work, out)
        return results
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def _run(out: Path, card: Card, log) -> list[phenomena.Phenomenon]:
    t0 = time.perf_counter()
    results = []
    for f in phenomena.ALL:
        log(f"  {f.__name__} ...")
        results.append(f(card))
    loops = results[0].data["result"]  # abrupt_set: the default loops
    frame = loops.frame()
    write_atomic(out / "loops.csv", lambda p: frame.to_csv(p, index=False))
    metrics = loop_metrics(loops)
    write_atomic(out / "metrics.csv", lambda p: metrics.to_csv(p, index=False))
    prov = {"version": __version__, "card_sha256": card.digest,
            "seconds": time.perf_counter() - t0}
    summary = {"provenance": prov,
               "phenomena": {p.name: {"passed": p.passed, "figures": p.figures,
                                      "checks": p.checks} for p in results}}
    write_text_atomic(out / "phenomena.json", json.dumps(_jsonable(summary), indent=2) + "\n")
    write_text_atomic(out / "phenomena.md", _markdown(results, prov))
    by = {p.name: p for p in results}
    pl = output_folder(out / "plots")
    plots.iv_loops(frame, pl / "iv_loops.png")
    plots.states(frame, pl / "states.png")
    plots.compliance(by["lrs_vs_compliance"], by["joule_reset"], pl / "compliance.png")
    plots.hrs_vs_reset_voltage(by["hrs_vs_reset_voltage"], by["hrs_vs_source_line"],
                               pl / "hrs_vs_reset_voltage.png")
    plots.overshoot(by["overshoot"], pl / "overshoot.png")
    plots.read_disturb(by["read_disturb"], pl / "read_disturb.png")
    plots.read_immunity(by["read_immunity"], pl / "read_immunity.png")
    plots.endurance(by["endurance"], pl / "endurance.png")
    _monte_carlo(card, output_folder(out / "mc"), log)
    _array(card, output_folder(out / "array"), log)
    return results


#: The demo's array: a 32 x 32 crossbar with thin wires, read at 0.2 V.
ARRAY_SIZE, ARRAY_RHO, ARRAY_SEED = 32, 1e-7, 1


def _array(card: Card, out: Path, log) -> None:
    """A small array study: one read of a crossbar with variation and resistive wires."""
    import pandas as pd

    from .array import ArraySpec, Metal, named_pattern, pattern_states, read
    from .variation import default_variation

    n = ARRAY_SIZE
    log(f"  array: {n} x {n} crossbar read ...")
    metal = Metal(rho=ARRAY_RHO)
    spec = ArraySpec("1r", n, n, row_metal=metal, col_metal=metal, card=card,
                     variation=default_variation(), seed=ARRAY_SEED)
    r = read(spec, 0.2, pattern_states(named_pattern("random", spec.shape, ARRAY_SEED),
                                       spec.card))
    ii, jj = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    df = pd.DataFrame({"row": ii.ravel(), "col": jj.ravel(), "v_cell_V": r.v_cell.ravel(),
                       "i_cell_A": r.i_cell.ravel(), "line_drop_V": r.line_drop.ravel()})
    write_atomic(out / "cells.csv", lambda p: df.to_csv(p, index=False))
    from .array.wires import wire_currents

    em = wire_currents(spec, r.circuit, r.v_nets)
    plots.array_heat_maps(r, out / "heat_maps.png", f"1r {n}x{n} at 0.2 V",
                          em=em.cell_map(spec))
    log(f"  array: worst IR drop {r.worst_drop * 1e3:.1f} mV of 200 mV; worst wire current "
        f"{em.worst_ratio:.2g} x the electromigration limit")


def _monte_carlo(card: Card, out: Path, log) -> None:
    """A small Monte Carlo of the default variation spec, with its plots and summary."""
    from .mc import MonteCarlo
    from .mc.backend import run_mc
    from .mc.report import load_table, summary, write_plots

    log(f"  monte carlo: {MC_DEVICES} devices x {MC_CYCLES} cycles ...")
    table = out / "mc.csv"
    mc = MonteCarlo(card=card, devices=MC_DEVICES, cycles=MC_CYCLES, seed=MC_SEED)
    run_mc(mc, table, workers=1, progress=False)
    frame = load_table(table)
    write_plots(frame, out / "plots")
    log(summary(frame).to_string(float_format=lambda v: f"{v:.4g}"))
