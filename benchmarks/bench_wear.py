"""Wear-out: 10⁶ cycles of one device and 100 devices × 10⁵ cycles, and the cycle jumps
against every cycle simulated, side by side in one run.

    python benchmarks/bench_wear.py [--reference-cycles 10000] [--markdown]

The card wears out as the 10⁶-cycle record of issue 39 does (its window ~1 by ~1.5e5
cycles): the default card with the wear block, ``kwear`` 7e3 /m.  Every run pulses the
1T1R cell (rram.engine.stimulus.PulseCycle: +2 V / −1.8 V, 80 ns) in the Python engine,
with the cycle jumps of rram.mc.endurance; the reference runs every cycle of a card that
wears 30× faster (closing within its cycles) and the same card with the jumps.  Prints,
per run: the time, the cycles simulated, the closure cycle(s) and the failure mode, and
the law's closure cycle (rram.mc.endurance.closure_cycle).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import report

from rram.card import Card
from rram.mc.endurance import Endurance, closure_cycle, run_endurance
from rram.model import wearing_model
from rram.variation import VariationSpec

#: Closes near 1.5e5 cycles under the default pulses.
KWEAR = 7e3


def run(name: str, study: Endurance) -> list[str]:
    t0 = time.perf_counter()
    result = run_endurance(study)
    seconds = time.perf_counter() - t0
    f = result.failures()
    closure = f["closure_cycle"].to_numpy(float)
    closed = closure[np.isfinite(closure)]
    modes = ", ".join(sorted({m for m in f["mode"] if m})) or "none"
    if len(closure) == 1:
        text = f"{closed[0]:.0f}" if closed.size else "open"
    elif closed.size:  # the devices still open at the end close later than every one here
        text = (f"{closed.size} of {len(closure)} closed; their median {np.median(closed):.0f}"
                f" (5–95 %: {np.percentile(closed, 5):.0f}–{np.percentile(closed, 95):.0f})")
    else:
        text = f"0 of {len(closure)} closed"
    row = [name, f"{study.devices}", f"{study.cycles:.0e}", "jumps" if study.skip else
           "every cycle", f"{len(result.table)}", f"{seconds:.1f}", text, modes]
    print(" | ".join(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-cycles", type=int, default=10_000)
    report.add_option(ap)
    args = ap.parse_args()
    model = wearing_model()
    card = Card.of(model, {"kwear": KWEAR}, name="worn")
    fast = Card.of(model, {"kwear": KWEAR * 30}, name="worn-30x")
    spec = VariationSpec.from_json(
        '{"variations": [{"parameter": "kwear", "kind": "d2d", "distribution": '
        '"lognormal", "sigma": 0.3}]}', model=model)
    law = {c.name: closure_cycle(c)["closure_cycle"] for c in (card, fast)}
    print(f"law's closure cycle: {law['worn']:.0f} (kwear {KWEAR:g} /m), "
          f"{law['worn-30x']:.0f} ({KWEAR * 30:g} /m)")
    n = args.reference_cycles
    rows = [run(f"{fast.name}, every cycle", Endurance(card=fast, cycles=n, skip=False)),
            run(f"{fast.name}, jumps", Endurance(card=fast, cycles=n)),
            run(card.name, Endurance(card=card, cycles=10**6)),
            run(f"{card.name}, kwear D2D σ 0.3", Endurance(card=card, cycles=10**5,
                                                            devices=100, spec=spec))]
    if args.markdown:
        columns = ["run", "devices", "cycles", "how", "cycles simulated", "time (s)",
                   "closure cycle", "failure"]
        report.write(__file__, "Wear-out: endurance runs with cycle jumps",
                     "Pulsed 1T1R cycles of the default card with the wear block in the "
                     f"Python engine; the law's closure cycles are {law['worn']:.0f} "
                     f"(kwear {KWEAR:g} /m) and {law['worn-30x']:.0f} (30x)",
                     [("", columns, rows)])


if __name__ == "__main__":
    main()
