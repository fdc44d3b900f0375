"""Gradient calibration beside the default fit: one loop-fit stage with its Jacobian by
forward sensitivities in torch (autograd) and by finite differences in the compiled
engine (lmfit's least squares either way), compared on time and result (issue 40).

The measured loop is synthetic, so the answer is known: the default card's 1 kV/s DC
loop (SET at +2 V, 100 µA compliance) sampled every ``--spacing`` volts with 0.02
decades of log-normal current noise.  Both fits start from the default card with the
stage's parameters moved (``j0`` ×3, ``xt`` ×1.1, ``vt`` ×0.8 for the conduction
stage; ``rho0`` ×2, ``alphaw`` ×1.2, ``rtop`` ×0.7 for the LRS stage) and fit the
recipe's stage (its points, bounds and log parameters).  Reported: the wall time, the
Jacobians (least squares' evaluations), the loop's RMS residual (decades) and each
parameter's error against the card that made the data.

    python benchmarks/bench_gradient_fit.py [--stages conduction lrs] [--spacing 0.05]
                                            [--markdown]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import report

from rram.card import default_card
from rram.fit.data import IVCurve
from rram.fit.loop import MeasuredLoop, simulate_loops
from rram.fit.recipe import default_recipe
from rram.fit.stages import run_stage
from rram.torch.calibrate import AutogradObjective

#: The start of each stage: its parameters moved by these factors.
MOVES = {"conduction": {"j0": 3.0, "xt": 1.1, "vt": 0.8},
         "lrs": {"rho0": 2.0, "alphaw": 1.2, "rtop": 0.7}}


def synthetic_loop(card, spacing: float, noise_dec: float = 0.02, seed: int = 1
                   ) -> MeasuredLoop:
    """The card's 1 kV/s loop sampled every ``spacing`` V, with current noise."""
    n = round(2.0 / spacing)
    volts = np.r_[np.linspace(0, 2, n + 1), np.linspace(2, 0, n + 1)[1:]]
    t = np.arange(volts.size) * spacing / 1e3
    empty = np.zeros_like(t)
    template = MeasuredLoop(IVCurve(1, t, volts, empty, "synthetic"),
                            IVCurve(1, t, -volts, empty, "synthetic"), 100e-6, 10e-3, True)
    current = simulate_loops(template, [card]).current[0]
    current = current * 10 ** (noise_dec * np.random.default_rng(seed).standard_normal(
        current.size))
    k = t.size
    return MeasuredLoop(IVCurve(1, t, volts, current[:k], "synthetic"),
                        IVCurve(1, t, -volts, current[k:], "synthetic"), 100e-6, 10e-3, True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stages", nargs="+", default=list(MOVES), choices=list(MOVES))
    ap.add_argument("--spacing", type=float, default=0.05)
    report.add_option(ap)
    args = ap.parse_args()
    truth = default_card()
    loop = synthetic_loop(truth, args.spacing)
    recipe = default_recipe()
    stages = {s.name: s for s in recipe.stages}
    rows = []
    for name in args.stages:
        stage = stages[name]
        start = truth.replace(**{k: truth[k] * f for k, f in MOVES[name].items()})
        for label, kw in (("finite differences (compiled)", {}),
                          ("autograd (torch sensitivities)",
                           {"objective": AutogradObjective})):
            t0 = time.perf_counter()
            card, rep = run_stage(loop, start, recipe, stage, **kw)
            seconds = time.perf_counter() - t0
            errors = ", ".join(f"{k} {card[k] / truth[k] - 1:+.1%}" for k in MOVES[name])
            row = [name, label, f"{seconds:.1f}", rep.nfev, f"{rep.rms_dec:.4f}", errors]
            print(" | ".join(map(str, row)), flush=True)
            rows.append(row)
    if args.markdown:
        report.write(__file__, "Gradient calibration beside finite differences",
                     "One loop-fit stage on a synthetic loop of the default card (0.02 "
                     f"decades of noise, points every {args.spacing} V), from moved "
                     "parameters, with the Jacobian by torch forward sensitivities and by "
                     "finite differences in the compiled engine",
                     [("", ["stage", "Jacobian", "seconds", "evaluations",
                            "loop RMS (dec)", "fitted parameters against the truth"],
                       rows)])


if __name__ == "__main__":
    main()
